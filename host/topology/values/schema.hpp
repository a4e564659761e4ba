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
// NaN and infinities anywhere in `doc` (validate_topology reports them too): a schema's number
// checks let them through, and no topology may hold one.
std::vector<SchemaError> non_finite_numbers(const nlohmann::json& doc);
// Whether a top-level table of a topology holds measured values ([l1d], a plugin's [tma]), not
// [meta], [provenance], [probes] or a simulated device's [sim].
bool is_element_table(const std::string& table);
std::vector<SchemaError> validate_config(const nlohmann::json& doc);
// The full validator's verdict alone (valijson), which validate_topology skips where the quick
// judge (schema_quick.hpp) is sure: the reference that judge is tested against.
std::vector<SchemaError> full_schema_errors(std::string_view schema_text, const nlohmann::json& doc);

// "/probes/a~1b/status" -> {"probes", "a/b", "status"}
std::vector<std::string> split_json_pointer(const std::string& pointer);

// The TOML node at a JSON pointer path (for line numbers), or null.
const toml::node* node_at(const toml::table& root, const std::string& pointer);
// Where a message about `pointer` points: "FILE:LINE" for a file read as TOML, "FILE" for one
// read as JSON (its values carry no line; the key path in the message says where).
std::string position_of(const std::string& file, const toml::table& root, const std::string& pointer);

}  // namespace memtopo::host
