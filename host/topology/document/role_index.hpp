// A topology's keys by role (docs/roles.md): what the exports, the drawing and the summary ask
// for instead of a key's name.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace memtopo::host {

class RoleIndex {
 public:
  // The roles the file's provenance records, and for roles no key of the file records, the
  // shipped plugins' (plugins/key_roles.toml): a file written before keys carried their role
  // reads as one written after.
  explicit RoleIndex(const toml::table& doc);
  explicit RoleIndex(const nlohmann::json& doc);  // a topology in its JSON form
  // The key of `role` ("device.sm_count" for "gpu.sm_count"): the file's, else the shipped
  // key, so that a value the file lacks reads as missing; "" where no key has the role.
  const std::string& key(const std::string& role) const;
  // The value of the key of `role` in a topology's JSON form; null where it has none.
  static const nlohmann::json* value_in(const nlohmann::json& doc, const std::string& key);
  // The roles that begin with `prefix` ("compute.peak_ops_per_cycle_per_sm@"), each with its key,
  // in the order of the roles.
  std::vector<std::pair<std::string, std::string>> starting_with(const std::string& prefix) const;

 private:
  std::map<std::string, std::string> key_of_;
};

// The shipped plugins' roles, key -> role (plugins/key_roles.toml, embedded at build time).
const std::map<std::string, std::string>& shipped_key_roles();

}  // namespace memtopo::host
