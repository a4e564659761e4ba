// A value's JSON form (docs/format.md, "JSON"): written, and read back with or without its type.
#include "topology/values/value.hpp"

#include <algorithm>

namespace memtopo::host {

nlohmann::json to_json(const Value& v) {
  switch (v.type) {
    case MT_VALUE_INT: return v.i;
    case MT_VALUE_FLOAT: return v.f;
    case MT_VALUE_BOOL: return v.b;
    case MT_VALUE_STRING: return v.s;
    case MT_VALUE_INT_ARRAY: return v.ints;
    case MT_VALUE_FLOAT_ARRAY: return v.floats;
    case MT_VALUE_STRING_ARRAY: return v.strings;
    default: return nullptr;
  }
}

namespace {

bool all_of(const nlohmann::json& j, bool (nlohmann::json::*is)() const noexcept) {
  return j.is_array() && std::all_of(j.begin(), j.end(), [&](const nlohmann::json& e) { return (e.*is)(); });
}

}  // namespace

std::optional<Value> from_json_inferred(const nlohmann::json& j) {
  mt_value_type type = MT_VALUE_NONE;
  auto every = [&](bool (nlohmann::json::*is)() const noexcept) { return std::all_of(j.begin(), j.end(), [&](const auto& e) { return (e.*is)(); }); };
  if (j.is_number_integer()) type = MT_VALUE_INT;
  else if (j.is_number()) type = MT_VALUE_FLOAT;
  else if (j.is_boolean()) type = MT_VALUE_BOOL;
  else if (j.is_string()) type = MT_VALUE_STRING;
  else if (j.is_array() && every(&nlohmann::json::is_number_integer)) type = MT_VALUE_INT_ARRAY;
  else if (j.is_array() && every(&nlohmann::json::is_number)) type = MT_VALUE_FLOAT_ARRAY;
  else if (j.is_array() && every(&nlohmann::json::is_string)) type = MT_VALUE_STRING_ARRAY;
  return type == MT_VALUE_NONE ? std::nullopt : from_json(j, type);
}

std::optional<Value> from_json(const nlohmann::json& j, mt_value_type type) {
  Value v;
  v.type = type;
  try {
    switch (type) {
      case MT_VALUE_INT:
        if (!j.is_number_integer()) return std::nullopt;
        v.i = j.get<int64_t>();
        return v;
      case MT_VALUE_FLOAT:
        if (!j.is_number()) return std::nullopt;
        v.f = j.get<double>();
        return v;
      case MT_VALUE_BOOL:
        if (!j.is_boolean()) return std::nullopt;
        v.b = j.get<bool>();
        return v;
      case MT_VALUE_STRING:
        if (!j.is_string()) return std::nullopt;
        v.s = j.get<std::string>();
        return v;
      // Each element is checked first: nlohmann converts a float element to an integer, which
      // is undefined behaviour out of range.
      case MT_VALUE_INT_ARRAY:
        if (!all_of(j, &nlohmann::json::is_number_integer)) return std::nullopt;
        v.ints = j.get<std::vector<int64_t>>();
        return v;
      case MT_VALUE_FLOAT_ARRAY:
        if (!all_of(j, &nlohmann::json::is_number)) return std::nullopt;
        v.floats = j.get<std::vector<double>>();
        return v;
      case MT_VALUE_STRING_ARRAY:
        if (!all_of(j, &nlohmann::json::is_string)) return std::nullopt;
        v.strings = j.get<std::vector<std::string>>();
        return v;
      default: return std::nullopt;
    }
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace memtopo::host
