// A value's text forms: an option's text (--option, config), TOML nodes and TOML literals.
#include "topology/values/value.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace memtopo::host {

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

}  // namespace memtopo::host
