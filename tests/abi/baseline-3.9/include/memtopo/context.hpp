// memtopo probe SDK: the context a running probe receives (inputs, options, results, raw
// series, log, progress, the device and its measurement backend).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "memtopo/abi.h"
#include "memtopo/detail/values.hpp"
#include "memtopo/errors.hpp"
#include "memtopo/measure.hpp"

namespace memtopo {

class Context {
 public:
  explicit Context(const mt_context* c) : c_(c), backend_(c->backend) {}

  const mt_device_info& device() const { return *c_->device; }
  const Backend& backend() const { return backend_; }

  // Bytes one constant-space chase array may span (the kernel-parameter bank included where
  // the backend has it), else constant memory itself (0 where neither is known).
  uint64_t constant_reach_bytes() const {
    const mt_device_info& d = device();
    const int64_t mem = d.constant_memory_bytes > 0 ? d.constant_memory_bytes : 0;
    return uint64_t(d.constant_reach_bytes > mem ? d.constant_reach_bytes : mem);
  }

  // A required key's value; throws memtopo::Error when absent (the host only runs a probe
  // once every required key exists, so this means a programming error).
  template <class T>
  T input(const std::string& key) const {
    auto v = try_input<T>(key);
    if (!v) throw Error("input " + key + " is not available");
    return *v;
  }
  // An optional ("uses") key's value, or nothing.
  template <class T>
  std::optional<T> try_input(const std::string& key) const {
    mt_value v{};
    if (!c_->api->get_input(c_->host, key.c_str(), &v)) return std::nullopt;
    return detail::from_value<T>(v, "input " + key);
  }
  template <class T>
  T option(const std::string& name) const {
    mt_value v{};
    if (!c_->api->get_option(c_->host, name.c_str(), &v)) throw Error("option " + name + " is not declared");
    return detail::from_value<T>(v, "option " + name);
  }

  void log(mt_log_level level, const std::string& msg) const { c_->api->log(c_->host, level, msg.c_str()); }
  void debug(const std::string& msg) const { log(MT_LOG_DEBUG, msg); }
  void info(const std::string& msg) const { log(MT_LOG_INFO, msg); }
  void warn(const std::string& msg) const { log(MT_LOG_WARN, msg); }
  void progress(double fraction, const std::string& stage) const {
    c_->api->progress(c_->host, fraction, stage.c_str());
  }
  bool cancelled() const { return c_->api->cancelled(c_->host) != 0; }

  // Results. Integers, floats, booleans, strings and arrays of them.
  template <class T>
  void result(const std::string& key, const T& value, const ResultInfo& info = {}) const {
    mt_value v{};
    std::vector<const char*> ptrs;  // keeps string array pointers alive for the call
    if constexpr (std::is_same_v<T, bool>) {
      v.type = MT_VALUE_BOOL;
      v.b = value ? 1 : 0;
    } else if constexpr (std::is_integral_v<T>) {
      v.type = MT_VALUE_INT;
      v.i = static_cast<int64_t>(value);
    } else if constexpr (std::is_floating_point_v<T>) {
      v.type = MT_VALUE_FLOAT;
      v.f = static_cast<double>(value);
    } else if constexpr (std::is_convertible_v<T, std::string>) {
      v.type = MT_VALUE_STRING;
      const std::string copy(value);
      v.s = copy.c_str();
      put(key, v, info);
      return;
    } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
      v.type = MT_VALUE_INT_ARRAY;
      v.int_array = value.data();
      v.count = value.size();
    } else if constexpr (std::is_same_v<T, std::vector<double>>) {
      v.type = MT_VALUE_FLOAT_ARRAY;
      v.float_array = value.data();
      v.count = value.size();
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      v.type = MT_VALUE_STRING_ARRAY;
      for (const auto& s : value) ptrs.push_back(s.c_str());
      v.string_array = ptrs.data();
      v.count = ptrs.size();
    } else {
      static_assert(detail::always_false<T>::value, "unsupported result type");
    }
    put(key, v, info);
  }

  // A declared key with no value in this run, and why (a level this device lacks, data that
  // cannot settle it): recorded in the file beside the probe's status (docs/format.md). A key
  // is stored or absent, once each run. A host older than ABI 3.6 only logs the reason.
  void absent(const std::string& key, const std::string& reason) const {
    const std::string why = reason.empty() ? "not determined (no reason given)" : reason;
    if (c_->api->struct_size < offsetof(mt_host_api, put_absent) + sizeof(c_->api->put_absent) ||
        !c_->api->put_absent) {
      info(key + " absent: " + why);
      return;
    }
    if (c_->api->put_absent(c_->host, key.c_str(), why.c_str()) != 0)
      throw Error("the host refused to record " + key +
                  " as absent (the host's log says why: a key the probe does not provide, or one stored before)");
  }

  // The data series behind a result, written as CSV under --raw-dir.
  void raw(const std::string& series, const std::vector<std::string>& columns,
           const std::vector<double>& row_major) const {
    std::vector<const char*> names;
    for (const auto& c : columns) names.push_back(c.c_str());
    size_t rows = columns.empty() ? 0 : row_major.size() / columns.size();
    if (c_->api->put_raw(c_->host, series.c_str(), names.data(), names.size(), row_major.data(), rows) != 0)
      warn("raw series " + series + " was not stored");
  }

  const mt_context* c() const { return c_; }

 private:
  void put(const std::string& key, const mt_value& v, const ResultInfo& info) const {
    mt_result_info ri{};
    ri.struct_size = sizeof(ri);
    ri.confidence = info.confidence;
    ri.bound = static_cast<mt_bound>(info.bound);
    ri.note = info.note.empty() ? nullptr : info.note.c_str();
    ri.verified = info.verified.empty() ? nullptr : info.verified.c_str();
    ri.counted_bytes = info.counted_bytes;
    ri.verify_note = info.verify_note.empty() ? nullptr : info.verify_note.c_str();
    if (c_->api->put_result(c_->host, key.c_str(), &v, &ri) != 0)
      throw Error("the host refused result " + key +
                  " (the host's log says why: a key the probe does not provide, or a value its description does not allow)");
  }

  const mt_context* c_;
  Backend backend_;
};
}  // namespace memtopo
