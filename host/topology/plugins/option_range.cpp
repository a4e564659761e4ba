#include "topology/plugins/option_range.hpp"

#include <cmath>
#include <cstddef>
#include <tuple>

namespace memtopo::host {

namespace {

// The type of one value of the option: an array's element type.
mt_value_type element_type(mt_value_type t) {
  if (t == MT_VALUE_INT_ARRAY) return MT_VALUE_INT;
  if (t == MT_VALUE_FLOAT_ARRAY) return MT_VALUE_FLOAT;
  return t;
}

std::string text_of(const Value& v) { return v.type == MT_VALUE_INT ? std::to_string(v.i) : format_double(v.f); }

// -1, 0, 1 as a < b, a == b, a > b; integers compared as integers (no rounding above 2^53).
int compare(const Value& a, const Value& b) {
  if (a.type == MT_VALUE_INT && b.type == MT_VALUE_INT) return a.i < b.i ? -1 : a.i > b.i ? 1 : 0;
  const double x = a.type == MT_VALUE_INT ? static_cast<double>(a.i) : a.f;
  const double y = b.type == MT_VALUE_INT ? static_cast<double>(b.i) : b.f;
  return x < y ? -1 : x > y ? 1 : 0;
}

std::optional<std::string> element_out_of_range(const OptionSpec& spec, const Value& v) {
  // NaN compares neither below nor above a bound: it lies in no range.
  const bool nan = v.type == MT_VALUE_FLOAT && std::isnan(v.f);
  if (nan || (spec.min && compare(v, *spec.min) < 0) || (spec.max && compare(v, *spec.max) > 0))
    return spec.name + " must be " +
           (spec.min && spec.max ? "between " + text_of(*spec.min) + " and " + text_of(*spec.max)
            : spec.min          ? "at least " + text_of(*spec.min)
                                : "at most " + text_of(*spec.max)) +
           ", got " + text_of(v);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> OptionSpec::out_of_range(const Value& v) const {
  if (!min && !max) return std::nullopt;
  if (v.type == MT_VALUE_INT || v.type == MT_VALUE_FLOAT) return element_out_of_range(*this, v);
  for (int64_t x : v.ints)
    if (auto bad = element_out_of_range(*this, Value::of_int(x))) return bad;
  for (double x : v.floats)
    if (auto bad = element_out_of_range(*this, Value::of_float(x))) return bad;
  return std::nullopt;
}

std::string OptionSpec::range_text() const {
  if (min && max) return text_of(*min) + ".." + text_of(*max);
  if (min) return ">= " + text_of(*min);
  if (max) return "<= " + text_of(*max);
  return "";
}

std::optional<std::string> read_option_range(const mt_option_desc& od, OptionSpec& spec) {
  if (od.struct_size < offsetof(mt_option_desc, max_value) + sizeof(const char*)) return std::nullopt;
  if (!od.min_value && !od.max_value) return std::nullopt;
  const mt_value_type t = element_type(spec.type);
  if (t != MT_VALUE_INT && t != MT_VALUE_FLOAT)
    return "option " + spec.name + ": a range is declared, but only numeric options have one";
  for (auto [text, bound, side] : {std::tuple{od.min_value, &spec.min, "min"}, {od.max_value, &spec.max, "max"}}) {
    if (!text) continue;
    std::string err;
    auto v = parse_text(t, text, &err);
    if (!v) return "option " + spec.name + ": " + side + "_value " + err;
    *bound = *v;
  }
  if (spec.min && spec.max && compare(*spec.min, *spec.max) > 0)
    return "option " + spec.name + ": min_value " + text_of(*spec.min) + " is above max_value " + text_of(*spec.max);
  if (auto bad = spec.out_of_range(spec.default_value)) return "option " + spec.name + ": the default is outside the range: " + *bad;
  return std::nullopt;
}

}  // namespace memtopo::host
