// The host's Value: an owning mt_value, and the copy of what a probe hands over.
#include "topology/values/value.hpp"

#include "memtopo/probe.hpp"

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

bool is_value_type(mt_value_type type) { return type >= MT_VALUE_INT && type <= MT_VALUE_STRING_ARRAY; }

}  // namespace memtopo::host
