// memtopo probe SDK: conversion of C values (mt_value) to C++ types, for inputs and options.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "memtopo/abi.h"
#include "memtopo/errors.hpp"

namespace memtopo {

namespace detail {
template <class T>
struct always_false : std::false_type {};

inline const char* type_name(mt_value_type t) {
  switch (t) {
    case MT_VALUE_INT: return "integer";
    case MT_VALUE_FLOAT: return "float";
    case MT_VALUE_STRING: return "string";
    case MT_VALUE_BOOL: return "boolean";
    case MT_VALUE_INT_ARRAY: return "integer array";
    case MT_VALUE_FLOAT_ARRAY: return "float array";
    case MT_VALUE_STRING_ARRAY: return "string array";
    default: return "nothing";
  }
}

// Convert an mt_value to T; throws memtopo::Error naming `what` on a type mismatch.
template <class T>
T from_value(const mt_value& v, const std::string& what) {
  auto mismatch = [&](const char* want) {
    return Error(what + " is " + type_name(v.type) + ", expected " + want);
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (v.type != MT_VALUE_BOOL) throw mismatch("boolean");
    return v.b != 0;
  } else if constexpr (std::is_integral_v<T>) {
    if (v.type != MT_VALUE_INT) throw mismatch("integer");
    return static_cast<T>(v.i);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (v.type == MT_VALUE_INT) return static_cast<T>(v.i);
    if (v.type != MT_VALUE_FLOAT) throw mismatch("float");
    return static_cast<T>(v.f);
  } else if constexpr (std::is_same_v<T, std::string>) {
    if (v.type != MT_VALUE_STRING) throw mismatch("string");
    return v.s ? std::string(v.s) : std::string();
  } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
    if (v.type != MT_VALUE_INT_ARRAY) throw mismatch("integer array");
    return std::vector<int64_t>(v.int_array, v.int_array + v.count);
  } else if constexpr (std::is_same_v<T, std::vector<double>>) {
    if (v.type == MT_VALUE_INT_ARRAY) return std::vector<double>(v.int_array, v.int_array + v.count);
    if (v.type != MT_VALUE_FLOAT_ARRAY) throw mismatch("float array");
    return std::vector<double>(v.float_array, v.float_array + v.count);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (v.type != MT_VALUE_STRING_ARRAY) throw mismatch("string array");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.count; ++i) out.emplace_back(v.string_array[i] ? v.string_array[i] : "");
    return out;
  } else {
    static_assert(always_false<T>::value, "unsupported value type");
  }
}
}  // namespace detail

}  // namespace memtopo
