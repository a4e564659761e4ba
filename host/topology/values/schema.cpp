#include "topology/values/schema.hpp"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "topology/values/schema_quick.hpp"
#include "topology/values/value.hpp"

namespace memtopo::host {

nlohmann::json toml_to_json(const toml::node& node) {
  if (auto t = node.as_table()) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : *t) j[std::string(k.str())] = toml_to_json(v);
    return j;
  }
  if (auto a = node.as_array()) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& v : *a) j.push_back(toml_to_json(v));
    return j;
  }
  if (auto v = node.as_integer()) return v->get();
  if (auto v = node.as_floating_point()) return v->get();
  if (auto v = node.as_boolean()) return v->get();
  if (auto v = node.as_string()) return v->get();
  // Dates and times: their TOML text, which for date-times is RFC 3339.
  std::ostringstream os;
  if (auto v = node.as_date_time()) os << v->get();
  else if (auto v = node.as_date()) os << v->get();
  else if (auto v = node.as_time()) os << v->get();
  return os.str();
}

std::string SchemaError::text() const {
  // Shown unescaped; a token holding '/' (a probe name) is quoted.
  std::string shown;
  for (const auto& tok : split_json_pointer(path)) shown += "/" + (tok.find('/') != std::string::npos ? "\"" + tok + "\"" : tok);
  return (shown.empty() ? "/" : shown) + ": " + message;
}

std::vector<std::string> split_json_pointer(const std::string& pointer) {
  std::vector<std::string> out;
  if (pointer.empty()) return out;
  std::stringstream ss(pointer.substr(1));
  std::string tok;
  while (std::getline(ss, tok, '/')) {
    std::string key;
    for (size_t k = 0; k < tok.size(); ++k) {
      if (tok[k] == '~' && k + 1 < tok.size()) {
        key += tok[k + 1] == '1' ? '/' : '~';
        ++k;
      } else {
        key += tok[k];
      }
    }
    out.push_back(key);
  }
  return out;
}

namespace {

std::string escape_pointer_token(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

std::string join_pointer(const std::vector<std::string>& parts, size_t n) {
  std::string out;
  for (size_t k = 0; k < n && k < parts.size(); ++k) out += "/" + escape_pointer_token(parts[k]);
  return out;
}

// valijson context entries look like "<root>", "[meta]" and "[0]".
std::string pointer_from_context(const std::vector<std::string>& context) {
  std::vector<std::string> parts;
  for (const auto& c : context) {
    if (c == "<root>") continue;
    std::string tok = c;
    if (tok.size() >= 2 && tok.front() == '[' && tok.back() == ']') tok = tok.substr(1, tok.size() - 2);
    if (tok.size() >= 2 && tok.front() == '"' && tok.back() == '"') tok = tok.substr(1, tok.size() - 2);
    parts.push_back(tok);
  }
  return join_pointer(parts, parts.size());
}

const nlohmann::json* json_at(const nlohmann::json& doc, const std::string& pointer) {
  try {
    return &doc.at(nlohmann::json::json_pointer(pointer));
  } catch (const std::exception&) {
    return nullptr;
  }
}

const char* json_type(const nlohmann::json& v) {
  if (v.is_number_integer()) return "integer";
  if (v.is_number()) return "float";
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_array()) return "array";
  if (v.is_object()) return "table";
  return "null";
}

std::string value_summary(const nlohmann::json& v) {
  std::string out = json_type(v);
  if (v.is_primitive()) {
    std::string text = v.dump();
    if (v.is_string() && text.size() > 40) out += " of " + std::to_string(v.get_ref<const std::string&>().size()) + " bytes";
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    out += " " + text;
  }
  return out;
}

bool ends_with(const std::string& key, const char* suffix) {
  const std::string s(suffix);
  return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
}


// What a topology value must be, where the format fixes its shape; empty where valijson's
// own message is the better one.
std::string expected_topology(const std::vector<std::string>& parts) {
  if (parts.size() == 2 && parts[0] == "meta") {
    const std::string& k = parts[1];
    if (k == "schema_version") return "an integer >= 1";
    if (k == "created_utc") return "a UTC date-time such as 2026-01-31T12:00:00Z";
    if (k == "backend") return "\"cuda\" or \"sim\"";
    if (k == "driver_version" || k == "runtime_version" || k == "abi") return "a version string such as \"13.0\"";
    if (k == "gpu_state") return "a table, [meta.gpu_state]";
    return "a string";
  }
  if (parts.size() == 3 && parts[0] == "meta" && parts[1] == "gpu_state") {
    const std::string& k = parts[2];
    if (ends_with(k, "_enabled") || ends_with(k, "_mode") || ends_with(k, "_pending") || ends_with(k, "_failed"))
      return "true or false";
    if (ends_with(k, "_reasons") || k == "throttled_probes" || k == "throttled_during") return "an array of strings";
    if (k == "source" || k == "nvidia_driver_version") return "a string";
    return "a number >= 0";
  }
  if (parts.size() == 4 && parts[0] == "provenance") {
    const std::string& k = parts[3];
    if (k == "probe") return "a probe name \"<plugin>/<probe>\"";
    if (k == "confidence") return "a number between 0 and 1";
    if (k == "bound") return "\"exact\", \"at_least\" or \"at_most\"";
    if (k == "note" || k == "verify_note") return "a string";
    if (k == "verified") return "\"counters\" or \"unverified\"";
    if (k == "counted_bytes") return "a number >= 0";
    if (k == "role") return "a role <class>.<quantity>[@<subject>] (docs/roles.md), e.g. \"cache.size_bytes@l1_cache\"";
    return "";
  }
  if (parts.size() == 3 && parts[0] == "probes") {
    const std::string& k = parts[2];
    if (k == "status") return "\"ok\", \"not_determinable\", \"failed\" or \"skipped\"";
    if (k == "duration_s") return "a number >= 0";
    if (k == "version" || k == "reason") return "a string";
    if (k == "absent") return "a table of \"<element>.<key>\" = \"why it has no value\"";
    if (k == "options") return "a table of \"<option>\" = value, as the config's [probes.\"<name>\"] gives them";
    return "";
  }
  if (parts.size() == 4 && parts[0] == "probes" && parts[2] == "absent") return "a non-empty string: why the key has no value";
  if (parts.size() == 4 && parts[0] == "probes" && parts[2] == "options")
    return "an integer, float, string or boolean, or an array of them";
  if (parts.size() == 2 && is_element_table(parts[0])) {
    const std::string& k = parts[1];
    if (ends_with(k, "_bytes") || ends_with(k, "_bits") || ends_with(k, "_khz"))
      return "an integer >= 0 or an array of them";
    if (ends_with(k, "_cycles") || ends_with(k, "_gbps") || ends_with(k, "_s")) return "a number >= 0 or an array of them";
    return "an integer, float, string (at most 4096 characters) or boolean, or an array of one of these";
  }
  return "";
}

// How deep a topology error is reported: a failure inside an anyOf branch (one item of an
// array, say) is reported at the value the anyOf applies to.
size_t report_depth(const std::vector<std::string>& parts) {
  if (parts.empty()) return 0;
  if (parts[0] == "provenance") return 4;
  if (parts[0] == "probes") return parts.size() > 3 && (parts[2] == "absent" || parts[2] == "options") ? 4 : 3;
  if (parts[0] == "sim") return 1;
  if (parts[0] == "meta" && parts.size() > 2 && parts[1] == "gpu_state") return 3;
  return 2;  // meta and element tables
}

bool is_object_problem(const std::string& m) {
  return m.rfind("Missing required", 0) == 0 || m.find("could not be validated") != std::string::npos ||
         m.find("property name") != std::string::npos && m.find("associated with property name") == std::string::npos;
}

// valijson reports every failure along the path from the innermost constraint outwards,
// including each failed anyOf branch; this keeps one useful message per value.
std::vector<SchemaError> summarize(const std::vector<SchemaError>& all, const nlohmann::json& doc, bool topology) {
  struct Group {
    std::string path;
    std::vector<const SchemaError*> raw;
  };
  std::vector<Group> groups;
  for (const auto& e : all) {
    const auto parts = split_json_pointer(e.path);
    const std::string key = topology ? join_pointer(parts, report_depth(parts)) : e.path;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.path == key; });
    if (it == groups.end()) groups.push_back({key, {&e}});
    else it->raw.push_back(&e);
  }
  std::vector<SchemaError> out;
  auto add = [&](const std::string& path, const std::string& message) {
    for (const auto& o : out)
      if (o.path == path && o.message == message) return;
    out.push_back({path, message});
  };
  for (const auto& g : groups) {
    for (const auto* r : g.raw)
      if (r->path == g.path && is_object_problem(r->message)) add(g.path, r->message);
    const bool has_deeper = std::any_of(groups.begin(), groups.end(), [&](const Group& o) {
      return o.path.size() > g.path.size() && o.path.compare(0, g.path.size() + 1, g.path + "/") == 0;
    });
    if (has_deeper) continue;  // a summary of failures reported deeper down
    if (std::any_of(out.begin(), out.end(), [&](const SchemaError& o) { return o.path == g.path; })) continue;
    const nlohmann::json* v = json_at(doc, g.path);
    const std::string want = topology ? expected_topology(split_json_pointer(g.path)) : "";
    if (v && !want.empty()) {
      add(g.path, "expected " + want + ", got " + value_summary(*v));
      continue;
    }
    const SchemaError* best = g.raw.front();
    for (const auto* r : g.raw)
      if (r->path.size() > best->path.size()) best = r;
    add(best->path, best->message);
  }
  return out;
}

std::vector<SchemaError> validate(const std::string_view schema_text, const nlohmann::json& doc, bool topology) {
  // Built once per schema; `memtopo fleet` validates its files from several threads.
  static std::mutex guard;
  static std::map<const char*, std::shared_ptr<const valijson::Schema>> cache;
  std::shared_ptr<const valijson::Schema> schema;
  {
    const std::lock_guard<std::mutex> lock(guard);
    auto& cached = cache[schema_text.data()];
    if (!cached) {
      auto built = std::make_shared<valijson::Schema>();
      const nlohmann::json schema_json = nlohmann::json::parse(schema_text);
      valijson::SchemaParser parser;
      valijson::adapters::NlohmannJsonAdapter adapter(schema_json);
      parser.populateSchema(adapter, *built);
      cached = std::move(built);
    }
    schema = cached;
  }
  // One validator per thread: it keeps the regexes of the schema's patterns compiled (a new
  // one compiles them again for every file).
  thread_local valijson::Validator validator(valijson::Validator::kStrongTypes);
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  if (validator.validate(*schema, target, &results)) return {};
  std::vector<SchemaError> all;
  valijson::ValidationResults::Error e;
  while (results.popError(e)) all.push_back({pointer_from_context(e.context), e.description});
  return summarize(all, doc, topology);
}

}  // namespace

namespace {
// valijson 1.0 reports a propertyNames failure only as a failure of the enclosing object, with
// no name: key names are checked here first so the message names the key. By hand, not by
// std::regex: `memtopo fleet` checks every key of thousands of files.
bool is_key_name(const std::string& s) {
  if (s.empty() || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin() + 1, s.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; });
}
// "<plugin>/<probe>": one '/', with something on either side.
bool is_probe_name(const std::string& s) {
  const size_t slash = s.find('/');
  return slash != std::string::npos && slash > 0 && slash + 1 < s.size() && s.find('/', slash + 1) == std::string::npos;
}

// "element.key": two key names joined by one '.'.
bool is_result_key(const std::string& s) {
  const size_t dot = s.find('.');
  return dot != std::string::npos && is_key_name(s.substr(0, dot)) && is_key_name(s.substr(dot + 1));
}

// [probes."<plugin>/<probe>".absent]: its names are result keys.
void check_absent_key_names(const nlohmann::json& entry, const std::string& table, const std::string& probe,
                            std::vector<SchemaError>& out) {
  if (!entry.is_object()) return;
  auto absent = entry.find("absent");
  if (absent == entry.end() || !absent->is_object()) return;
  for (auto a = absent->begin(); a != absent->end(); ++a)
    if (!is_result_key(a.key()))
      out.push_back({"/" + escape_pointer_token(table) + "/" + escape_pointer_token(probe) + "/absent/" +
                         escape_pointer_token(a.key()),
                     "bad key name: an absent key is \"<element>.<key>\", each part [a-z][a-z0-9_]*"});
}

void check_topology_names(const nlohmann::json& doc, std::vector<SchemaError>& out) {
  const char* rule = "key names are [a-z][a-z0-9_]* (lower case, digits, '_')";
  if (!doc.is_object()) return;
  // Pointers are built only for a name that fails (thousands of keys a file pass).
  auto pointer = [](std::initializer_list<const std::string*> parts) {
    std::string p;
    for (const std::string* part : parts) p += "/" + escape_pointer_token(*part);
    return p;
  };
  for (auto t = doc.begin(); t != doc.end(); ++t) {
    const std::string& table = t.key();
    if (!is_key_name(table)) {
      out.push_back({pointer({&table}), std::string("bad table name: ") + rule});
      continue;
    }
    if (!t->is_object() || table == "meta" || table == "sim") continue;
    for (auto k = t->begin(); k != t->end(); ++k) {
      const std::string& key = k.key();
      if (table == "probes") {
        if (!is_probe_name(key)) out.push_back({pointer({&table, &key}), "bad probe name: probe names are \"<plugin>/<probe>\""});
        check_absent_key_names(*k, table, key, out);
        continue;
      }
      if (!is_key_name(key)) {
        out.push_back({pointer({&table, &key}), std::string("bad key name: ") + rule});
        continue;
      }
      if (table == "provenance" && k->is_object())
        for (auto e = k->begin(); e != k->end(); ++e)
          if (!is_key_name(e.key()))
            out.push_back({pointer({&table, &key, &e.key()}), std::string("bad key name: ") + rule});
    }
  }
}

bool any_non_finite(const nlohmann::json& value) {
  if (value.is_number_float()) return !std::isfinite(value.get<double>());
  if (value.is_object() || value.is_array())
    return std::any_of(value.begin(), value.end(), [](const nlohmann::json& v) { return any_non_finite(v); });
  return false;
}

// NaN and infinities pass a JSON Schema's number checks, but no topology may hold one (JSON
// cannot, and results never do): every reader of a topology gives this one verdict.
void check_finite(const nlohmann::json& value, const std::string& pointer, std::vector<SchemaError>& out) {
  if (value.is_number_float() && !std::isfinite(value.get<double>())) {
    out.push_back({pointer, "is " + format_double(value.get<double>()) +
                                ": a topology holds finite numbers only (a probe that cannot measure a value reports "
                                "it not determinable); give the key a finite value or remove it"});
    return;
  }
  if (value.is_object())
    for (const auto& [k, v] : value.items()) check_finite(v, pointer + "/" + escape_pointer_token(k), out);
  if (value.is_array())
    for (size_t i = 0; i < value.size(); ++i) check_finite(value[i], pointer + "/" + std::to_string(i), out);
}
}  // namespace

std::vector<SchemaError> non_finite_numbers(const nlohmann::json& doc) {
  std::vector<SchemaError> out;
  check_finite(doc, "", out);
  return out;
}

bool is_element_table(const std::string& table) {
  return table != "meta" && table != "provenance" && table != "probes" && table != "sim";
}

std::vector<SchemaError> validate_topology(const nlohmann::json& doc) {
  std::vector<SchemaError> out;
  check_topology_names(doc, out);
  if (any_non_finite(doc)) check_finite(doc, "", out);  // the paths built only where one is found
  if (out.empty() && surely_meets_schema(topology_schema_text(), doc)) return out;
  for (auto& e : validate(topology_schema_text(), doc, true)) {
    // Drop valijson's nameless "the document failed" when the name check said why.
    if (e.path.empty() && !out.empty()) continue;
    bool dup = false;
    for (const auto& o : out)
      if (o.path == e.path) dup = true;
    if (!dup) out.push_back(std::move(e));
  }
  return out;
}
std::vector<SchemaError> validate_config(const nlohmann::json& doc) { return validate(config_schema_text(), doc, false); }
std::vector<SchemaError> full_schema_errors(std::string_view schema_text, const nlohmann::json& doc) {
  return validate(schema_text, doc, schema_text.data() == topology_schema_text().data());
}

const toml::node* node_at(const toml::table& root, const std::string& pointer) {
  const toml::node* cur = &root;
  for (const auto& key : split_json_pointer(pointer)) {
    if (auto t = cur->as_table()) {
      cur = t->get(key);
    } else if (auto a = cur->as_array()) {
      size_t idx = 0;
      try {
        idx = std::stoul(key);
      } catch (...) {
        return nullptr;
      }
      cur = a->get(idx);
    } else {
      return nullptr;
    }
    if (!cur) return nullptr;
  }
  return cur;
}

std::string position_of(const std::string& file, const toml::table& root, const std::string& pointer) {
  const toml::node* at = node_at(root, pointer);
  const auto line = at ? at->source().begin.line : root.source().begin.line;
  return line > 0 ? file + ":" + std::to_string(line) : file;
}

}  // namespace memtopo::host
