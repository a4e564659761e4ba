#include "topology/document/role_index.hpp"

#include <string_view>

namespace memtopo::host {

std::string_view shipped_key_roles_text();  // key_roles_text.cpp, generated

const std::map<std::string, std::string>& shipped_key_roles() {
  static const std::map<std::string, std::string> roles = [] {
    std::map<std::string, std::string> m;
    const toml::table doc = toml::parse(shipped_key_roles_text(), std::string_view("plugins/key_roles.toml"));
    if (const toml::table* t = doc["roles"].as_table())
      for (const auto& [key, role] : *t)
        if (auto r = role.value<std::string>()) m.emplace(std::string(key.str()), *r);
    return m;
  }();
  return roles;
}

RoleIndex::RoleIndex(const toml::table& doc) {
  for (const auto& [key, role] : shipped_key_roles()) key_of_.emplace(role, key);
  const toml::table* provenance = doc["provenance"].as_table();
  if (!provenance) return;
  for (const auto& [element, entries] : *provenance)
    if (const toml::table* keys = entries.as_table())
      for (const auto& [key, entry] : *keys)
        if (auto role = entry.as_table() ? (*entry.as_table())["role"].value<std::string>() : std::nullopt)
          key_of_[*role] = std::string(element.str()) + "." + std::string(key.str());
}

RoleIndex::RoleIndex(const nlohmann::json& doc) {
  for (const auto& [key, role] : shipped_key_roles()) key_of_.emplace(role, key);
  const auto provenance = doc.is_object() ? doc.find("provenance") : doc.end();
  if (provenance == doc.end() || !provenance->is_object()) return;
  for (const auto& [element, entries] : provenance->items())
    if (entries.is_object())
      for (const auto& [key, entry] : entries.items())
        if (const auto role = entry.is_object() ? entry.find("role") : entry.end(); role != entry.end() && role->is_string())
          key_of_[role->get<std::string>()] = element + "." + key;
}

const nlohmann::json* RoleIndex::value_in(const nlohmann::json& doc, const std::string& key) {
  const auto dot = key.find('.');
  if (dot == std::string::npos || !doc.is_object()) return nullptr;
  const auto element = doc.find(key.substr(0, dot));
  if (element == doc.end() || !element->is_object()) return nullptr;
  const auto value = element->find(key.substr(dot + 1));
  return value != element->end() ? &*value : nullptr;
}

const std::string& RoleIndex::key(const std::string& role) const {
  static const std::string none;
  const auto it = key_of_.find(role);
  return it != key_of_.end() ? it->second : none;
}

std::vector<std::pair<std::string, std::string>> RoleIndex::starting_with(const std::string& prefix) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = key_of_.lower_bound(prefix); it != key_of_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it)
    out.emplace_back(*it);
  return out;
}

}  // namespace memtopo::host
