#include "tools/compare/key_policy.hpp"

#include <algorithm>
#include <cmath>

#include <toml++/toml.h>

#include "memtopo/abi.h"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "topology/values/nesting.hpp"

namespace memtopo::host {

const char* key_class_name(KeyClass c) {
  switch (c) {
    case KeyClass::identity: return "identity";
    case KeyClass::setting: return "setting";
    case KeyClass::configuration: return "configuration";
    default: return "measurement";
  }
}

namespace {

std::optional<KeyClass> class_from_text(const std::string& s) {
  if (s == "identity") return KeyClass::identity;
  if (s == "setting") return KeyClass::setting;
  if (s == "configuration") return KeyClass::configuration;
  if (s == "measurement") return KeyClass::measurement;
  return std::nullopt;
}

struct Reader {
  std::string name;
  [[noreturn]] void fail(const toml::node& at, const std::string& what) const {
    throw ProfileError(name + ":" + std::to_string(at.source().begin.line) + ": " + what);
  }
  double tolerance(const toml::node& node, const std::string& where) const {
    std::optional<double> v;
    if (auto i = node.as_integer()) v = static_cast<double>(i->get());
    else if (auto f = node.as_floating_point()) v = f->get();
    if (!v || !(*v >= 0 && *v <= 100)) fail(node, where + " must be a percentage from 0 to 100, e.g. 3");
    return *v;
  }
  bool boolean(const toml::node& node, const std::string& where) const {
    if (auto b = node.as_boolean()) return b->get();
    fail(node, where + " must be true or false");
  }
};

}  // namespace

KeyPolicy KeyPolicy::from_profile(const std::string& path) {
  try {
    return from_profile_text(engine::read_input_file(path, "a tolerance profile (TOML; docs/fleet.md)"), path);
  } catch (const Error& e) {
    throw ProfileError(e.what());
  }
}

KeyPolicy KeyPolicy::from_profile_text(const std::string& text, const std::string& name) {
  if (const auto line = toml_too_deep_at(text)) throw ProfileError(toml_too_deep_message(name, *line));
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ProfileError(name + ":" + std::to_string(e.source().begin.line) + ":" +
                       std::to_string(e.source().begin.column) + ": TOML syntax error: " + std::string(e.description()));
  }
  const Reader r{name};
  KeyPolicy policy;
  for (const auto& [k, node] : root) {
    const std::string key(k.str());
    if (key == "tolerance_percent") {
      policy.default_tolerance_ = r.tolerance(node, "tolerance_percent");
    } else if (key == "keys" && node.is_table()) {
      for (const auto& [glob, body] : *node.as_table()) {
        const std::string g(glob.str()), where = "[keys.\"" + g + "\"]";
        const toml::table* t = body.as_table();
        if (!t) r.fail(body, where + " must be a table of rules (tolerance_percent, rated, varies, ignore, estimate, class)");
        Pattern p{g, {}, {}, {}, {}, {}, {}, {}};
        for (const auto& [rk, rn] : *t) {
          const std::string rule(rk.str());
          if (rule == "tolerance_percent") p.tolerance_percent = r.tolerance(rn, where + " tolerance_percent");
          else if (rule == "varies") p.varies = r.boolean(rn, where + " varies");
          else if (rule == "ignore") p.ignore = r.boolean(rn, where + " ignore");
          else if (rule == "estimate") p.estimate = r.boolean(rn, where + " estimate");
          else if (rule == "rated") p.rated = r.boolean(rn, where + " rated");
          else if (rule == "class") {
            const auto c = rn.as_string() ? class_from_text(rn.as_string()->get()) : std::nullopt;
            if (!c) r.fail(rn, where + " class must be \"measurement\", \"identity\", \"setting\" or \"configuration\"");
            p.key_class = c;
          } else {
            r.fail(rn, "unknown rule '" + rule + "' in " + where +
                           " (known: tolerance_percent, rated, varies, ignore, estimate, class)");
          }
        }
        policy.patterns_.push_back(std::move(p));
      }
    } else {
      r.fail(node, "unknown key '" + key + "' (a profile has tolerance_percent and [keys.\"<key or glob>\"] tables)");
    }
  }
  return policy;
}

KeyDeclared declared_in(const nlohmann::json* e) {
  KeyDeclared d;
  if (!e || !e->is_object()) return d;
  if (auto c = e->find("class"); c != e->end() && c->is_string()) d.key_class = class_from_text(c->get<std::string>());
  if (auto v = e->find("varies"); v != e->end() && v->is_boolean()) d.varies = v->get<bool>();
  if (auto v = e->find("estimate"); v != e->end() && v->is_boolean()) d.estimate = v->get<bool>();
  if (auto v = e->find("headline"); v != e->end() && v->is_boolean()) d.headline = v->get<bool>();
  if (auto v = e->find("rated"); v != e->end() && v->is_boolean()) d.rated = v->get<bool>();
  if (auto v = e->find("structure"); v != e->end() && v->is_boolean()) d.structure = v->get<bool>();
  if (auto v = e->find("always"); v != e->end() && v->is_boolean()) d.always = v->get<bool>();
  if (auto v = e->find("health"); v != e->end() && v->is_boolean()) d.health = v->get<bool>();
  return d;
}

KeyDeclared declared_by_flags(uint32_t flags) {
  KeyDeclared d;
  if (flags & MT_KEY_IDENTITY) d.key_class = KeyClass::identity;
  else if (flags & MT_KEY_SETTING) d.key_class = KeyClass::setting;
  else if (flags & MT_KEY_CONFIGURATION) d.key_class = KeyClass::configuration;
  d.varies = (flags & MT_KEY_VARIES) != 0;
  d.estimate = (flags & MT_KEY_ESTIMATE) != 0;
  d.headline = (flags & MT_KEY_HEADLINE) != 0;
  d.rated = (flags & MT_KEY_RATED) != 0;
  d.structure = (flags & MT_KEY_STRUCTURE) != 0;
  d.always = (flags & MT_KEY_ALWAYS) != 0;
  d.health = (flags & MT_KEY_HEALTH) != 0;
  return d;
}

KeyPolicy KeyPolicy::with_declarations(std::map<std::string, KeyDeclared> declared) const {
  KeyPolicy out = *this;
  out.declared_ = std::move(declared);
  return out;
}

KeyRule KeyPolicy::rule(const std::string& key, const std::vector<KeyDeclared>& declared) const {
  KeyRule out;
  out.tolerance_percent = default_tolerance_;
  auto apply = [&](const KeyDeclared& d) {
    if (d.key_class && *d.key_class != KeyClass::measurement) out.key_class = *d.key_class;
    out.varies = out.varies || d.varies;
    out.estimate = out.estimate || d.estimate;
    out.rated = out.rated || d.rated;
    out.structure = out.structure || d.structure;
    out.always = out.always || d.always;
  };
  for (const KeyDeclared& d : declared) apply(d);
  if (const auto it = declared_.find(key); it != declared_.end()) apply(it->second);
  for (const auto& p : patterns_) {
    if (!glob_match(p.glob, key)) continue;
    if (p.key_class) out.key_class = *p.key_class;
    if (p.varies) out.varies = *p.varies;
    if (p.ignore) out.ignore = *p.ignore;
    if (p.estimate) out.estimate = *p.estimate;
    if (p.tolerance_percent) out.tolerance_percent = *p.tolerance_percent, out.rated = true;
    if (p.rated) out.rated = *p.rated;
  }
  for (const auto& p : patterns_)
    if (p.least_tolerance_percent && glob_match(p.glob, key))
      out.tolerance_percent = std::max(out.tolerance_percent, *p.least_tolerance_percent);
  return out;
}

KeyPolicy KeyPolicy::with_least_tolerances(const std::vector<std::pair<std::string, double>>& spreads,
                                           bool rates) const {
  KeyPolicy out = *this;
  for (const auto& [key, percent] : spreads) {
    Pattern p;
    p.glob = key;
    p.least_tolerance_percent = percent;
    if (rates) p.rated = true;
    out.patterns_.insert(out.patterns_.begin(), std::move(p));
  }
  return out;
}

std::string method_change(const std::string& probe, const std::string& version_a, const std::string& version_b) {
  const std::string major_a = version_a.substr(0, version_a.find('.')), major_b = version_b.substr(0, version_b.find('.'));
  if (major_a.empty() || major_b.empty() || major_a == major_b) return "";
  return "method changed (" + probe + " " + major_a + " -> " + major_b + ")";
}

bool glob_match(const std::string& glob, const std::string& text) {
  // Iterative wildcard match: the last '*' seen absorbs characters on a mismatch.
  size_t g = 0, t = 0, star = std::string::npos, mark = 0;
  while (t < text.size()) {
    if (g < glob.size() && glob[g] == '*') {
      star = g++;
      mark = t;
    } else if (g < glob.size() && glob[g] == text[t]) {
      ++g;
      ++t;
    } else if (star != std::string::npos) {
      g = star + 1;
      t = ++mark;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

const nlohmann::json* provenance_entry(const nlohmann::json& doc, const std::string& element, const std::string& key) {
  const nlohmann::json* cur = &doc;
  for (const std::string& part : {std::string("provenance"), element, key}) {
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(part);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

}  // namespace memtopo::host
