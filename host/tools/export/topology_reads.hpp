// Typed reads of a topology's "element.key" values and their provenance, for the exports that
// map keys onto another tool's layout (accel_sim_export.cpp, mt4g_export.cpp).
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "topology/document/role_index.hpp"

namespace memtopo::host {

// Typed reads of "element.key" values, and their provenance bounds; plugins' keys by their role.
class TopologyReads {
 public:
  explicit TopologyReads(const toml::table& doc) : doc_(doc), roles_(doc) {}

  // The key of a role ("cache.partitions@l2_cache", docs/roles.md); "" where no key has it.
  const std::string& key(const std::string& role) const { return roles_.key(role); }
  const RoleIndex& roles() const { return roles_; }
  // The key of a cache's quantity: cache("l1_cache", "line_bytes") has the role
  // cache.line_bytes@l1_cache.
  const std::string& cache(const std::string& subject, const std::string& quantity) const {
    return roles_.key("cache." + quantity + "@" + subject);
  }

  const toml::node* node(const std::string& key) const {
    const auto dot = key.find('.');
    const toml::table* element = doc_.get_as<toml::table>(key.substr(0, dot));
    return element ? element->get(key.substr(dot + 1)) : nullptr;
  }
  std::optional<int64_t> integer(const std::string& key) const {
    const toml::node* n = node(key);
    if (const auto* i = n ? n->as_integer() : nullptr) return i->get();
    return std::nullopt;
  }
  // An integer or a float.
  std::optional<double> number(const std::string& key) const {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (const auto* i = n->as_integer()) return static_cast<double>(i->get());
    if (const auto* f = n->as_floating_point(); f && std::isfinite(f->get())) return f->get();
    return std::nullopt;
  }
  // A string, or a date-time's text.
  std::optional<std::string> text(const std::string& key) const {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (const auto* s = n->as_string()) return s->get();
    if (const auto* d = n->as_date_time()) {
      std::ostringstream os;
      os << d->get();
      return os.str();
    }
    return std::nullopt;
  }
  std::optional<bool> boolean(const std::string& key) const {
    const toml::node* n = node(key);
    if (const auto* b = n ? n->as_boolean() : nullptr) return b->get();
    return std::nullopt;
  }
  std::vector<int64_t> integers(const std::string& key) const {
    std::vector<int64_t> out;
    const toml::node* n = node(key);
    if (const auto* a = n ? n->as_array() : nullptr)
      for (const auto& v : *a)
        if (const auto* i = v.as_integer()) out.push_back(i->get());
    return out;
  }
  // " (l1d.size_bytes is an at_least bound)" where [provenance] says the value is a bound, else "".
  std::string bound_note(const std::string& key) const {
    const auto* bound = doc_.at_path("provenance." + key + ".bound").as_string();
    return bound && bound->get() != "exact" ? " (" + key + " is an " + bound->get() + " bound)" : "";
  }
  // The value's bound ("exact", "at_least", "at_most") and confidence from [provenance]; a value
  // without an entry is exact with confidence 1 (the device's properties).
  std::string bound(const std::string& key) const {
    const auto* b = doc_.at_path("provenance." + key + ".bound").as_string();
    return b ? b->get() : "exact";
  }
  double confidence(const std::string& key) const {
    const toml::node_view<const toml::node> c = doc_.at_path("provenance." + key + ".confidence");
    return c.value<double>().value_or(1.0);
  }
  const toml::table& doc() const { return doc_; }

 private:
  const toml::table& doc_;
  RoleIndex roles_;
};

}  // namespace memtopo::host
