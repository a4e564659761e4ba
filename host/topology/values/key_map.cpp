// Reads the embedded mapping file (host/data/key_map.toml) once.
#include "topology/values/key_map.hpp"

#include <map>
#include <stdexcept>
#include <string_view>

#include <toml++/toml.h>

namespace memtopo::host {

std::string_view key_map_text();  // key_map_text.cpp, generated

namespace {

struct KeyMap {
  std::vector<KnownKey> known;
  std::map<std::string, std::string> roles;  // "accel_sim.keys.l2_partitions" -> "l2.partitions"
  std::vector<std::string> cache_parts;
};

KeyMap parse_key_map() {
  KeyMap m;
  const toml::table doc = toml::parse(key_map_text(), std::string_view("key_map.toml"));
  if (const toml::array* known = doc["summary"]["known"].as_array())
    for (const toml::node& n : *known)
      if (const toml::table* t = n.as_table())
        m.known.push_back({(*t)["part"].value_or(std::string()), (*t)["label"].value_or(std::string()),
                           (*t)["prefix"].value_or(std::string()), (*t)["without_size"].value_or(std::string())});
  if (const toml::array* parts = doc["vocabulary"]["cache_procedure"].as_array())
    for (const toml::node& n : *parts)
      if (auto s = n.value<std::string>()) m.cache_parts.push_back(*s);
  // Every string of a table two levels down ([accel_sim.keys], [draw.elements], ...) is a role.
  for (const auto& [top, body] : doc)
    if (const toml::table* sections = body.as_table())
      for (const auto& [name, section] : *sections)
        if (const toml::table* roles = section.as_table())
          for (const auto& [role, value] : *roles)
            if (auto s = value.value<std::string>())
              m.roles[std::string(top.str()) + "." + std::string(name.str()) + "." + std::string(role.str())] = *s;
  return m;
}

const KeyMap& key_map() {
  static const KeyMap m = parse_key_map();
  return m;
}

}  // namespace

const std::vector<KnownKey>& summary_known_keys() { return key_map().known; }
const std::vector<std::string>& cache_procedure_parts() { return key_map().cache_parts; }

const std::string& mapped(const std::string& section, const std::string& role) {
  const auto& roles = key_map().roles;
  const auto it = roles.find(section + "." + role);
  if (it == roles.end()) throw std::logic_error("host/data/key_map.toml has no [" + section + "] " + role);
  return it->second;
}

}  // namespace memtopo::host
