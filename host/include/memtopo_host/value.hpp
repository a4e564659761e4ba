// Host-side values: an owning copy of mt_value, and the rules result keys obey.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "memtopo/abi.h"

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
bool is_valid_utf8(const std::string& s);
// `s` with every invalid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(const std::string& s);
std::string format_double(double d);

nlohmann::json to_json(const Value& v);
// Inverse of to_json given the type tag; nothing when they do not agree.
std::optional<Value> from_json(const nlohmann::json& j, mt_value_type type);
// The same with the type read off the JSON (an integer is INT, an array of numbers with a
// float FLOAT_ARRAY, ...); nothing for null, objects and mixed arrays.
std::optional<Value> from_json_inferred(const nlohmann::json& j);

// "l1d.line_bytes": nothing when valid, else what is wrong.
std::optional<std::string> check_key(const std::string& key);
// Unit-suffix rules (docs/format.md): `_bytes`, `_bits`, `_khz` hold integers >= 0, `_cycles`,
// `_gbps`, `_s` numbers >= 0 (or arrays of them). Floats must be finite (no NaN, no inf) and
// strings valid UTF-8, whatever the key. Nothing when `v` fits `key`.
std::optional<std::string> check_value_for_key(const std::string& key, const Value& v);

// Every MT_KEY_* bit this host knows: a plugin declaring others is refused, a journal's are masked.
constexpr uint32_t kKnownKeyFlags =
    MT_KEY_IDENTITY | MT_KEY_SETTING | MT_KEY_VARIES | MT_KEY_ESTIMATE | MT_KEY_HEADLINE | MT_KEY_CONFIGURATION;

// The unit a key's name carries ("bytes" for l1d.size_bytes), or "" when it has none.
std::string unit_of_key(const std::string& key);
// Whether a declared unit and type (mt_key_desc) agree with the key's name: the unit must be
// the one its suffix names ("" without a suffix), the type one that suffix allows. Nothing
// when they agree, else what to change.
std::optional<std::string> check_key_declaration(const std::string& key, mt_value_type type, const std::string& unit);
// Whether `type` is one of the value types of abi.h.
bool is_value_type(mt_value_type type);

}  // namespace memtopo::host
