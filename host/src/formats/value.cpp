#include "memtopo_host/value.hpp"

#include "memtopo/probe.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <regex>

namespace memtopo::host {

Value Value::of_int(int64_t v) {
  Value x;
  x.type = MT_VALUE_INT;
  x.i = v;
  return x;
}
Value Value::of_float(double v) {
  Value x;
  x.type = MT_VALUE_FLOAT;
  x.f = v;
  return x;
}
Value Value::of_bool(bool v) {
  Value x;
  x.type = MT_VALUE_BOOL;
  x.b = v;
  return x;
}
Value Value::of_string(std::string v) {
  Value x;
  x.type = MT_VALUE_STRING;
  x.s = std::move(v);
  return x;
}

mt_value Value::view() const {
  mt_value v{};
  v.type = type;
  switch (type) {
    case MT_VALUE_INT: v.i = i; break;
    case MT_VALUE_FLOAT: v.f = f; break;
    case MT_VALUE_BOOL: v.b = b ? 1 : 0; break;
    case MT_VALUE_STRING: v.s = s.c_str(); break;
    case MT_VALUE_INT_ARRAY:
      v.int_array = ints.data();
      v.count = ints.size();
      break;
    case MT_VALUE_FLOAT_ARRAY:
      v.float_array = floats.data();
      v.count = floats.size();
      break;
    case MT_VALUE_STRING_ARRAY:
      string_ptrs_.clear();
      for (const auto& x : strings) string_ptrs_.push_back(x.c_str());
      v.string_array = string_ptrs_.data();
      v.count = string_ptrs_.size();
      break;
    default: break;
  }
  return v;
}

bool Value::operator==(const Value& o) const {
  if (type != o.type) return false;
  switch (type) {
    case MT_VALUE_INT: return i == o.i;
    case MT_VALUE_FLOAT: return f == o.f || (std::isnan(f) && std::isnan(o.f));
    case MT_VALUE_BOOL: return b == o.b;
    case MT_VALUE_STRING: return s == o.s;
    case MT_VALUE_INT_ARRAY: return ints == o.ints;
    case MT_VALUE_FLOAT_ARRAY: return floats == o.floats;
    case MT_VALUE_STRING_ARRAY: return strings == o.strings;
    default: return true;
  }
}

// One spelling of the type names for probes and host alike (memtopo/probe.hpp).
const char* type_name(mt_value_type t) { return memtopo::detail::type_name(t); }

std::optional<Value> copy_from_c(const mt_value& v, std::string* error) {
  Value out;
  out.type = v.type;
  auto fail = [&](const std::string& m) -> std::optional<Value> {
    if (error) *error = m;
    return std::nullopt;
  };
  switch (v.type) {
    case MT_VALUE_INT: out.i = v.i; break;
    case MT_VALUE_FLOAT: out.f = v.f; break;
    case MT_VALUE_BOOL: out.b = v.b != 0; break;
    case MT_VALUE_STRING:
      if (!v.s) return fail("string value with a null pointer");
      out.s = v.s;
      break;
    case MT_VALUE_INT_ARRAY:
      if (v.count && !v.int_array) return fail("integer array with a null pointer");
      out.ints.assign(v.int_array, v.int_array + v.count);
      break;
    case MT_VALUE_FLOAT_ARRAY:
      if (v.count && !v.float_array) return fail("float array with a null pointer");
      out.floats.assign(v.float_array, v.float_array + v.count);
      break;
    case MT_VALUE_STRING_ARRAY:
      if (v.count && !v.string_array) return fail("string array with a null pointer");
      for (size_t k = 0; k < v.count; ++k) {
        if (!v.string_array[k]) return fail("string array with a null element");
        out.strings.emplace_back(v.string_array[k]);
      }
      break;
    default: return fail("unknown value type " + std::to_string(static_cast<int>(v.type)));
  }
  return out;
}

namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// The whole text (spaces trimmed, an optional leading '+') must be one number.
template <class T>
bool parse_number(const std::string& text, T* out) {
  const std::string t = trim(text);
  if (t.empty()) return false;
  const char* b = t.data();
  const char* e = t.data() + t.size();
  if (*b == '+') ++b;
  auto r = std::from_chars(b, e, *out);
  return r.ec == std::errc() && r.ptr == e;
}

bool parse_int(const std::string& text, int64_t* out) { return parse_number(text, out); }
bool parse_double(const std::string& text, double* out) { return parse_number(text, out); }

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  if (trim(text).empty()) return out;
  size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    out.push_back(trim(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

std::optional<Value> parse_text(mt_value_type type, const std::string& text, std::string* error) {
  Value v;
  v.type = type;
  auto fail = [&](const char* want) -> std::optional<Value> {
    if (error) *error = "'" + text + "' is not " + want;
    return std::nullopt;
  };
  switch (type) {
    case MT_VALUE_INT:
      if (!parse_int(text, &v.i)) return fail("an integer");
      return v;
    case MT_VALUE_FLOAT:
      if (!parse_double(text, &v.f)) return fail("a number");
      return v;
    case MT_VALUE_BOOL: {
      const std::string t = trim(text);
      if (t == "true" || t == "1") v.b = true;
      else if (t == "false" || t == "0") v.b = false;
      else return fail("a boolean (true or false)");
      return v;
    }
    case MT_VALUE_STRING: v.s = text; return v;
    case MT_VALUE_INT_ARRAY:
      for (const auto& part : split_commas(text)) {
        int64_t x = 0;
        if (!parse_int(part, &x)) return fail("a comma-separated list of integers");
        v.ints.push_back(x);
      }
      return v;
    case MT_VALUE_FLOAT_ARRAY:
      for (const auto& part : split_commas(text)) {
        double x = 0;
        if (!parse_double(part, &x)) return fail("a comma-separated list of numbers");
        v.floats.push_back(x);
      }
      return v;
    case MT_VALUE_STRING_ARRAY:
      v.strings = split_commas(text);
      return v;
    default:
      if (error) *error = "unsupported option type " + std::to_string(static_cast<int>(type));
      return std::nullopt;
  }
}

std::optional<Value> from_toml(const toml::node& node, mt_value_type type, std::string* error) {
  Value v;
  v.type = type;
  auto fail = [&]() -> std::optional<Value> {
    if (error) *error = std::string("expected ") + type_name(type);
    return std::nullopt;
  };
  switch (type) {
    case MT_VALUE_INT:
      if (!node.is_integer()) return fail();
      v.i = node.as_integer()->get();
      return v;
    case MT_VALUE_FLOAT:
      if (node.is_integer()) v.f = static_cast<double>(node.as_integer()->get());
      else if (node.is_floating_point()) v.f = node.as_floating_point()->get();
      else return fail();
      return v;
    case MT_VALUE_BOOL:
      if (!node.is_boolean()) return fail();
      v.b = node.as_boolean()->get();
      return v;
    case MT_VALUE_STRING:
      if (!node.is_string()) return fail();
      v.s = node.as_string()->get();
      return v;
    case MT_VALUE_INT_ARRAY:
    case MT_VALUE_FLOAT_ARRAY:
    case MT_VALUE_STRING_ARRAY: {
      const toml::array* a = node.as_array();
      if (!a) return fail();
      for (const toml::node& e : *a) {
        if (type == MT_VALUE_INT_ARRAY && e.is_integer()) v.ints.push_back(e.as_integer()->get());
        else if (type == MT_VALUE_FLOAT_ARRAY && e.is_integer())
          v.floats.push_back(static_cast<double>(e.as_integer()->get()));
        else if (type == MT_VALUE_FLOAT_ARRAY && e.is_floating_point())
          v.floats.push_back(e.as_floating_point()->get());
        else if (type == MT_VALUE_STRING_ARRAY && e.is_string()) v.strings.push_back(e.as_string()->get());
        else return fail();
      }
      return v;
    }
    default: return fail();
  }
}

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  // TOML needs a fraction or an exponent to read the number back as a float.
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

bool is_valid_utf8(const std::string& s) {
  try {
    (void)nlohmann::json(s).dump();  // nlohmann's strict mode checks every sequence
    return true;
  } catch (const nlohmann::json::type_error&) {
    return false;
  }
}

std::string valid_utf8(const std::string& s) {
  if (is_valid_utf8(s)) return s;
  const std::string quoted = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return nlohmann::json::parse(quoted).get<std::string>();
}

std::string toml_string_literal(const std::string& text) {
  // A TOML file must be UTF-8: a byte sequence that is not becomes U+FFFD, never a broken file.
  const std::string s = valid_utf8(text);
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  return out + "\"";
}

std::string to_toml_literal(const Value& v) {
  auto join = [](const auto& items, auto fmt) {
    std::string out = "[";
    for (size_t k = 0; k < items.size(); ++k) out += (k ? ", " : "") + fmt(items[k]);
    return out + "]";
  };
  switch (v.type) {
    case MT_VALUE_INT: return std::to_string(v.i);
    case MT_VALUE_FLOAT: return format_double(v.f);
    case MT_VALUE_BOOL: return v.b ? "true" : "false";
    case MT_VALUE_STRING: return toml_string_literal(v.s);
    case MT_VALUE_INT_ARRAY: return join(v.ints, [](int64_t x) { return std::to_string(x); });
    case MT_VALUE_FLOAT_ARRAY: return join(v.floats, [](double x) { return format_double(x); });
    case MT_VALUE_STRING_ARRAY: return join(v.strings, [](const std::string& x) { return toml_string_literal(x); });
    default: return "\"\"";
  }
}

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

std::string unit_of_key(const std::string& key) {
  for (const auto* units : {&kIntegerUnits, &kNumberUnits})
    for (const char* unit : *units)
      if (ends_with(key, std::string("_") + unit)) return unit;
  return "";
}

bool is_value_type(mt_value_type type) { return type >= MT_VALUE_INT && type <= MT_VALUE_STRING_ARRAY; }

std::optional<std::string> check_key_declaration(const std::string& key, mt_value_type type, const std::string& unit) {
  const std::string named = unit_of_key(key);
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
