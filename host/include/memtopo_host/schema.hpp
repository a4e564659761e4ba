// JSON Schema checks (schemas/*.schema.json, compiled in) of topology and config files.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

namespace memtopo::host {

std::string_view topology_schema_text();
std::string_view config_schema_text();

// TOML -> JSON for validation: date-times become RFC 3339 strings.
nlohmann::json toml_to_json(const toml::node& node);

struct SchemaError {
  std::string path;     // JSON pointer, "/l1d/size_bytes" ("" for the document)
  std::string message;  // "expected integer"
  std::string text() const;  // "/l1d/size_bytes: expected ..."
};

std::vector<SchemaError> validate_topology(const nlohmann::json& doc);
std::vector<SchemaError> validate_config(const nlohmann::json& doc);

// "/probes/a~1b/status" -> {"probes", "a/b", "status"}
std::vector<std::string> split_json_pointer(const std::string& pointer);

// The TOML node at a JSON pointer path (for line numbers), or null.
const toml::node* node_at(const toml::table& root, const std::string& pointer);

}  // namespace memtopo::host
