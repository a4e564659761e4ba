// Host-side values: an owning copy of mt_value and its text, TOML and JSON forms (value.cpp,
// value_text.cpp, value_json.cpp); the rules result keys obey are key_rules.hpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "memtopo/abi.h"
#include "topology/values/key_rules.hpp"
#include "topology/base/text_encoding.hpp"

namespace memtopo::host {

// An owning mt_value. view() lends it to a probe; the pointers stay valid while the Value
// is neither modified nor destroyed.
struct Value {
  mt_value_type type = MT_VALUE_NONE;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
  std::vector<double> floats;
  std::vector<std::string> strings;

  static Value of_int(int64_t v);
  static Value of_float(double v);
  static Value of_bool(bool v);
  static Value of_string(std::string v);

  mt_value view() const;
  bool operator==(const Value& o) const;

 private:
  mutable std::vector<const char*> string_ptrs_;
};

const char* type_name(mt_value_type t);

// Copies a value a probe handed over. Returns nothing and sets *error when it is malformed
// (unknown type, null pointers).
std::optional<Value> copy_from_c(const mt_value& v, std::string* error);

// Parses an option's text form ("4096", "0.5", "lru", "true", "1,2,4") as `type`.
std::optional<Value> parse_text(mt_value_type type, const std::string& text, std::string* error);

// Converts a TOML node to `type` (an integer is accepted where a float is expected).
std::optional<Value> from_toml(const toml::node& node, mt_value_type type, std::string* error);

// TOML literal text of a value (as written in the topology file).
std::string to_toml_literal(const Value& v);
// Escapes `s`; bytes that are not UTF-8 become U+FFFD, so the literal is always valid TOML.
std::string toml_string_literal(const std::string& s);
std::string format_double(double d);

nlohmann::json to_json(const Value& v);
// Inverse of to_json given the type tag; nothing when they do not agree.
std::optional<Value> from_json(const nlohmann::json& j, mt_value_type type);
// The same with the type read off the JSON (an integer is INT, an array of numbers with a
// float FLOAT_ARRAY, ...); nothing for null, objects and mixed arrays.
std::optional<Value> from_json_inferred(const nlohmann::json& j);

// Whether `type` is one of the value types of abi.h.
bool is_value_type(mt_value_type type);

}  // namespace memtopo::host
