// The rules a result key and its value obey: the key's form, and the unit its name carries.
#include "topology/values/value.hpp"

#include <algorithm>
#include <cmath>
#include <regex>

namespace memtopo::host {

std::optional<std::string> check_key(const std::string& key) {
  static const std::regex pattern("^[a-z][a-z0-9_]*\\.[a-z][a-z0-9_]*$");
  if (!std::regex_match(key, pattern))
    return "'" + key + "' is not a result key: keys are element.key, both parts [a-z][a-z0-9_]* "
           "(e.g. cache.line_bytes)";
  const std::string element = key.substr(0, key.find('.'));
  if (element == "meta" || element == "provenance" || element == "probes" || element == "sim")
    return "'" + key + "' uses the reserved table name '" + element + "'";
  return std::nullopt;
}

namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

std::optional<std::string> check_value_for_key(const std::string& key, const Value& v) {
  // NaN and infinities have no TOML-compatible JSON form and mean "not measured": a probe
  // that cannot settle a value reports not determinable instead.
  auto non_finite = [&](double x) {
    return key + " is " + format_double(x) + ": results must be finite numbers (a probe that cannot measure a "
                                              "value reports not determinable)";
  };
  if (v.type == MT_VALUE_FLOAT && !std::isfinite(v.f)) return non_finite(v.f);
  if (v.type == MT_VALUE_FLOAT_ARRAY)
    for (double x : v.floats)
      if (!std::isfinite(x)) return non_finite(x);
  if (v.type == MT_VALUE_STRING && !is_valid_utf8(v.s)) return key + " is not valid UTF-8 text";
  if (v.type == MT_VALUE_STRING_ARRAY)
    for (const auto& x : v.strings)
      if (!is_valid_utf8(x)) return key + " holds a string that is not valid UTF-8 text";
  static const char* const integer_units[] = {"_bytes", "_bits", "_khz"};
  static const char* const number_units[] = {"_cycles", "_gbps", "_s"};
  for (const char* unit : integer_units) {
    if (!ends_with(key, unit)) continue;
    if (v.type == MT_VALUE_INT) {
      if (v.i < 0) return key + " must not be negative (got " + std::to_string(v.i) + ")";
      return std::nullopt;
    }
    if (v.type == MT_VALUE_INT_ARRAY) {
      for (int64_t x : v.ints)
        if (x < 0) return key + " must not hold negative values (got " + std::to_string(x) + ")";
      return std::nullopt;
    }
    return key + " is " + type_name(v.type) + ", but keys ending in " + unit +
           " hold integers >= 0 or arrays of them";
  }
  for (const char* unit : number_units) {
    if (!ends_with(key, unit)) continue;
    if (v.type == MT_VALUE_INT) return v.i < 0 ? std::optional<std::string>(key + " must not be negative") : std::nullopt;
    if (v.type == MT_VALUE_FLOAT)
      return v.f < 0 ? std::optional<std::string>(key + " must not be negative") : std::nullopt;
    if (v.type == MT_VALUE_INT_ARRAY || v.type == MT_VALUE_FLOAT_ARRAY) {
      for (int64_t x : v.ints)
        if (x < 0) return key + " must not hold negative values";
      for (double x : v.floats)
        if (x < 0) return key + " must not hold negative values";
      return std::nullopt;
    }
    return key + " is " + type_name(v.type) + ", but keys ending in " + unit +
           " hold numbers >= 0 or arrays of them";
  }
  return std::nullopt;
}

namespace {
const char* const kIntegerUnits[] = {"bytes", "bits", "khz"};
const char* const kNumberUnits[] = {"cycles", "gbps", "s"};
}  // namespace

std::string checked_unit_of_key(const std::string& key) {
  for (const auto* units : {&kIntegerUnits, &kNumberUnits})
    for (const char* unit : *units)
      if (ends_with(key, std::string("_") + unit)) return unit;
  return "";
}

std::string unit_of_key(const std::string& key) {
  // Longest first: l2_read_bytes_per_second is a rate, not bytes.
  static const std::pair<const char*, const char*> kCompound[] = {
      {"_bytes_per_second", "B/s"},        {"_bytes_per_cycle_per_sm", "B/cycle/SM"},
      {"_bytes_per_cycle", "B/cycle"},     {"_ops_per_cycle_per_sm", "ops/cycle/SM"},
      {"_loads_per_kcycle", "loads/kcycle"}, {"_warps_per_sm", "warps/SM"},
      {"_fraction_of_theoretical", "fraction"}, {"_fractions", "fraction"}, {"_fraction", "fraction"},
      {"_shares", "fraction"},             {"_share", "fraction"},         {"_percent", "%"}};
  for (const auto& [suffix, unit] : kCompound)
    if (ends_with(key, suffix)) return unit;
  return checked_unit_of_key(key);
}

std::optional<std::string> check_key_declaration(const std::string& key, mt_value_type type, const std::string& unit) {
  const std::string named = checked_unit_of_key(key);
  const std::string suffixes = "_bytes, _bits, _khz, _cycles, _gbps or _s";
  if (!is_value_type(type)) return "declares unknown type " + std::to_string(static_cast<int>(type));
  if (named.empty() && !unit.empty())
    return "declares unit '" + unit + "', but units are in key names (docs/format.md): name the key with one of " +
           suffixes + ", or declare no unit";
  if (!named.empty() && unit != named)
    return (unit.empty() ? std::string("declares no unit") : "declares unit '" + unit + "'") +
           ", but its name ends in _" + named + ": declare unit '" + named + "'";
  if (named.empty()) return std::nullopt;
  const bool integer = std::any_of(std::begin(kIntegerUnits), std::end(kIntegerUnits),
                                   [&](const char* u) { return named == u; });
  const bool ok = type == MT_VALUE_INT || type == MT_VALUE_INT_ARRAY ||
                  (!integer && (type == MT_VALUE_FLOAT || type == MT_VALUE_FLOAT_ARRAY));
  if (!ok)
    return std::string("declares type ") + type_name(type) + ", but keys ending in _" + named + " hold " +
           (integer ? "integers or integer arrays" : "numbers or number arrays");
  return std::nullopt;
}

}  // namespace memtopo::host
