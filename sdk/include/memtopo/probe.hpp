// memtopo probe SDK: the header-only C++ layer over abi.h.
//
// A plugin is a handful of probe specs plus one registration macro:
//
//   #include <memtopo/probe.hpp>
//   static memtopo::Probe line_probe() {
//     return memtopo::Probe("data-cache/l1d-line")
//         .summary("L1 data cache line and sector size")
//         .provides({"l1d.line_bytes", "l1d.fetch_granularity_bytes"})
//         .requires_keys({"l1d.size_bytes"})
//         .option("max_stride_bytes", MT_VALUE_INT, "1024", "largest stride tried")
//         .run([](memtopo::Context& ctx) { ... ctx.result("l1d.line_bytes", 128); });
//   }
//   MEMTOPO_PLUGIN("data-cache", "1.0.0", line_probe())
//
// Exceptions never cross the boundary: the trampoline turns memtopo::Skip into
// MT_STATUS_SKIPPED and any other exception into MT_STATUS_FAILED with its message.
// Compile a plugin source with -DMEMTOPO_STATIC_PLUGIN_FN=some_name to link it statically
// into a test: the macro then defines `const mt_plugin_desc* some_name(uint32_t, uint32_t)`
// instead of the exported entry point.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "memtopo/abi.h"

namespace memtopo {

// A deliberate skip: the probe cannot measure this on this device.
struct Skip : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A failure reported by the engine or the host.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class Bound { Exact = MT_BOUND_EXACT, AtLeast = MT_BOUND_AT_LEAST, AtMost = MT_BOUND_AT_MOST };

struct ResultInfo {
  double confidence = 1.0;
  Bound bound = Bound::Exact;
  std::string note;
};

// ------------------------------------------------------------------ measurement wrapper

// A chase array owned on the host side. Build it with the recipes in memtopo/recipes.hpp
// or fill `next` yourself.
struct ChaseArray {
  std::vector<uint32_t> next;   // explicit arrays
  uint64_t elems = 0;           // stride arrays: length in elements
  uint64_t stride_elems = 0;    // stride arrays: step in elements (0 = explicit array)

  static ChaseArray stride(uint64_t footprint_bytes, uint64_t stride_bytes) {
    ChaseArray a;
    a.elems = footprint_bytes / 4;
    a.stride_elems = stride_bytes / 4;
    return a;
  }
  uint64_t length() const { return stride_elems ? elems : next.size(); }
  uint64_t footprint_bytes() const { return length() * 4; }

  mt_chase_array c() const {
    mt_chase_array a{};
    a.struct_size = sizeof(a);
    if (stride_elems) {
      a.kind = MT_ARRAY_STRIDE;
      a.elems = elems;
      a.stride_elems = stride_elems;
    } else {
      a.kind = MT_ARRAY_EXPLICIT;
      a.next = next.data();
      a.elems = next.size();
    }
    return a;
  }
};

struct ChaseSpec {
  mt_space space = MT_SPACE_GLOBAL_CA;
  const ChaseArray* array = nullptr;  // several specs may share one array
  uint32_t start = 0;
  uint64_t warmup_steps = 0;
  uint64_t steps = 0;
  int32_t sm = -1;
  int32_t shared_carveout_percent = -1;
};

struct ChaseSamples {
  std::vector<uint32_t> index;
  std::vector<uint32_t> latency;
  double average_cycles = 0;
  int32_t sm = -1;
};

// A counting chase (mt_count_job): a ChaseSpec whose timed loads are classified against
// `slow_cycles` on the device.
struct CountSpec {
  ChaseSpec chase;
  uint32_t slow_cycles = 0;      // raw cycles, as fine_chase reports them
  uint32_t slow_max_cycles = 0;  // above: an interruption, not a slow load (0: no ceiling)
  uint32_t keep_steps = 1024;    // steps of the first slow loads to keep
};

// A random-load count (mt_random_count_job): `count.chase.array` sets the buffer; every load
// goes to a uniformly random multiple of stride_bytes within it.
// `streams` independent load streams on the SM share the loads (the paced count, ABI 1.4; at
// most Backend::random_streams_max()), each waiting `gap_cycles` after every load.
struct RandomCountSpec {
  CountSpec count;
  uint64_t stride_bytes = 0;
  uint64_t seed = 1;
  uint32_t streams = 1;
  uint32_t gap_cycles = 0;
  // A pump (the pumped count, ABI 1.5; one timed stream, no gap): pump_warps x pump_lanes
  // untimed generators load for pump_cycles before every probe_loads timed loads.
  uint32_t pump_warps = 0;
  uint32_t pump_lanes = 32;
  uint32_t pump_cycles = 0;
  uint32_t probe_loads = 32;
};

struct CountResult {
  uint64_t slow = 0;                // slow loads among the timed ones
  std::vector<uint32_t> slow_steps; // steps (0 = first timed load) of the first slow loads
  uint64_t cycles = 0;              // raw cycles of all timed loads
  uint64_t outliers = 0;            // loads above slow_max_cycles
  int32_t sm = -1;
  uint64_t span_cycles = 0;         // paced count (ABI 1.4): first timed load to last; 0 if unknown
  uint64_t pump_loads = 0;          // pumped count (ABI 1.5): pump loads within the span
};

class Backend {
 public:
  explicit Backend(const mt_backend* b) : b_(b) {}
  const char* name() const { return b_ ? b_->name : "none"; }
  const mt_backend* c() const { return b_; }

  // Fine-grained chases, run at once on distinct SMs.
  std::vector<ChaseSamples> fine_chase(const std::vector<ChaseSpec>& specs) const {
    return run(specs, true);
  }
  ChaseSamples fine_chase(const ChaseSpec& spec) const { return fine_chase(std::vector<ChaseSpec>{spec})[0]; }

  // Whole-chase average latency per load.
  std::vector<ChaseSamples> average_chase(const std::vector<ChaseSpec>& specs) const {
    return run(specs, false);
  }
  double average_chase(const ChaseSpec& spec) const {
    return average_chase(std::vector<ChaseSpec>{spec})[0].average_cycles;
  }

  // Whether the backend has the counting chase (ABI 1.1).
  bool has_count_chase() const {
    return b_ && b_->struct_size >= offsetof(mt_backend, count_chase) + sizeof(b_->count_chase) && b_->count_chase;
  }

  // Counting chases, run at once on distinct SMs.
  std::vector<CountResult> count_chase(const std::vector<CountSpec>& specs) const {
    require(has_count_chase(), "count_chase (ABI 1.1)");
    std::vector<ChaseSpec> chases;
    for (const CountSpec& s : specs) chases.push_back(s.chase);
    std::vector<mt_chase_array> arrays;
    std::vector<mt_chase_job> base = jobs_for(chases, arrays);
    std::vector<CountResult> out(specs.size());
    std::vector<mt_count_job> jobs(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) jobs[i] = count_job(base[i], specs[i], out[i]);
    char err[512] = {0};
    if (b_->count_chase(b_->self, jobs.data(), jobs.size(), err, sizeof err) != 0)
      throw Error(err[0] ? err : "measurement failed");
    for (size_t i = 0; i < specs.size(); ++i) read_count(jobs[i], out[i]);
    return out;
  }
  CountResult count_chase(const CountSpec& spec) const { return count_chase(std::vector<CountSpec>{spec})[0]; }

  // Whether the backend has the random-load count (ABI 1.2).
  bool has_random_count() const {
    return b_ && b_->struct_size >= offsetof(mt_backend, random_count) + sizeof(b_->random_count) && b_->random_count;
  }

  // Whether the backend has the paced count (ABI 1.4): streams and gaps for random loads.
  bool has_random_rate() const {
    return has_random_count() && b_->struct_size >= offsetof(mt_backend, paced_streams_max) + sizeof(b_->paced_streams_max) &&
           b_->paced_count && b_->paced_streams_max > 0;
  }
  // Most load streams one random-load count may have; 1 in older backends.
  uint32_t random_streams_max() const { return has_random_rate() ? b_->paced_streams_max : 1; }

  // Whether the backend has the pumped count (ABI 1.5), and the most pump warps it runs.
  bool has_pump() const {
    return has_random_rate() && b_->struct_size >= offsetof(mt_backend, pump_warps_max) + sizeof(b_->pump_warps_max) &&
           b_->pumped_count && b_->pump_warps_max > 0;
  }
  uint32_t pump_warps_max() const { return has_pump() ? b_->pump_warps_max : 0; }

  // Random-load counts, run at once on distinct SMs; through the paced count (ABI 1.4) where
  // the backend has it (then CountResult::span_cycles is known), through the pumped count
  // (ABI 1.5) when a spec has a pump.
  std::vector<CountResult> random_count(const std::vector<RandomCountSpec>& specs) const {
    require(has_random_count(), "random_count (ABI 1.2)");
    if (std::any_of(specs.begin(), specs.end(), [](const RandomCountSpec& s) { return s.pump_warps > 0; }))
      return pumped_count(specs);
    for (const RandomCountSpec& s : specs)
      if (s.streams > random_streams_max() || (s.gap_cycles && !has_random_rate()))
        throw Error("random_count: " + std::to_string(s.streams) + " streams" + (s.gap_cycles ? " with a gap" : "") +
                    " asked of a backend that runs at most " + std::to_string(random_streams_max()) +
                    (has_random_rate() ? "" : " and no gap (paced_count, ABI 1.4)"));
    std::vector<ChaseSpec> chases;
    for (const RandomCountSpec& s : specs) chases.push_back(s.count.chase);
    std::vector<mt_chase_array> arrays;
    std::vector<mt_chase_job> base = jobs_for(chases, arrays);
    std::vector<CountResult> out(specs.size());
    std::vector<mt_paced_count_job> jobs(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      mt_paced_count_job& p = jobs[i];
      p = mt_paced_count_job{};
      p.struct_size = sizeof(p);
      p.random = random_job(base[i], specs[i], out[i]);
      p.streams = specs[i].streams;
      p.gap_cycles = specs[i].gap_cycles;
    }
    char err[512] = {0};
    int rc = 0;
    if (has_random_rate()) {
      rc = b_->paced_count(b_->self, jobs.data(), jobs.size(), err, sizeof err);
    } else {
      std::vector<mt_random_count_job> plain;
      for (const mt_paced_count_job& p : jobs) plain.push_back(p.random);
      rc = b_->random_count(b_->self, plain.data(), plain.size(), err, sizeof err);
      for (size_t i = 0; i < plain.size(); ++i) jobs[i].random = plain[i];
    }
    if (rc != 0) throw Error(err[0] ? err : "measurement failed");
    for (size_t i = 0; i < specs.size(); ++i) {
      read_count(jobs[i].random.count, out[i]);
      out[i].span_cycles = jobs[i].out_span_cycles;
    }
    return out;
  }

  std::vector<CountResult> pumped_count(const std::vector<RandomCountSpec>& specs) const {
    for (const RandomCountSpec& s : specs)
      if (s.pump_warps > pump_warps_max() || s.streams > 1 || s.gap_cycles)
        throw Error("random_count: a pump of " + std::to_string(s.pump_warps) + " warps" +
                    (s.streams > 1 || s.gap_cycles ? " with several streams or a gap" : "") +
                    " asked of a backend that runs at most " + std::to_string(pump_warps_max()) +
                    " pump warps (pumped_count, ABI 1.5) and one timed stream with them");
    std::vector<ChaseSpec> chases;
    for (const RandomCountSpec& s : specs) chases.push_back(s.count.chase);
    std::vector<mt_chase_array> arrays;
    std::vector<mt_chase_job> base = jobs_for(chases, arrays);
    std::vector<CountResult> out(specs.size());
    std::vector<mt_pumped_count_job> jobs(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      mt_pumped_count_job& p = jobs[i];
      p = mt_pumped_count_job{};
      p.struct_size = sizeof(p);
      p.random = random_job(base[i], specs[i], out[i]);
      p.pump_warps = specs[i].pump_warps;
      p.pump_lanes = specs[i].pump_lanes;
      p.pump_cycles = specs[i].pump_cycles;
      p.probe_loads = specs[i].probe_loads;
    }
    char err[512] = {0};
    if (b_->pumped_count(b_->self, jobs.data(), jobs.size(), err, sizeof err) != 0)
      throw Error(err[0] ? err : "measurement failed");
    for (size_t i = 0; i < specs.size(); ++i) {
      read_count(jobs[i].random.count, out[i]);
      out[i].span_cycles = jobs[i].out_span_cycles;
      out[i].pump_loads = jobs[i].out_pump_loads;
    }
    return out;
  }

  double timing_overhead() const {
    require(b_ && b_->timing_overhead, "timing_overhead");
    double cycles = 0;
    char err[512] = {0};
    if (b_->timing_overhead(b_->self, &cycles, err, sizeof err) != 0) throw Error(err);
    return cycles;
  }

  // Raw access for sequence chases (memtopo/measure.h documents the fields).
  void sequence_chase(mt_sequence_job& job) const {
    require(b_ && b_->sequence_chase, "sequence_chase");
    char err[512] = {0};
    if (b_->sequence_chase(b_->self, &job, err, sizeof err) != 0) throw Error(err);
  }

 private:
  // One count job for a spec; `out` lends the buffer for the kept steps.
  static mt_count_job count_job(const mt_chase_job& chase, const CountSpec& spec, CountResult& out) {
    mt_count_job j{};
    j.struct_size = sizeof(j);
    j.chase = chase;
    j.slow_cycles = spec.slow_cycles;
    j.slow_max_cycles = spec.slow_max_cycles;
    out.slow_steps.resize(spec.keep_steps);
    j.slow_capacity = spec.keep_steps;
    j.out_slow_step = out.slow_steps.empty() ? nullptr : out.slow_steps.data();
    return j;
  }
  static mt_random_count_job random_job(const mt_chase_job& chase, const RandomCountSpec& spec, CountResult& out) {
    mt_random_count_job j{};
    j.struct_size = sizeof(j);
    j.count = count_job(chase, spec.count, out);
    j.stride_elems = spec.stride_bytes / 4;
    j.seed = spec.seed;
    return j;
  }
  static void read_count(const mt_count_job& j, CountResult& out) {
    out.slow = j.out_slow;
    out.slow_steps.resize(static_cast<size_t>(j.out_slow_recorded));
    out.cycles = j.out_cycles;
    out.outliers = j.out_outliers;
    out.sm = j.chase.out_sm;
  }
  static void require(bool ok, const char* what) {
    if (!ok) throw Error(std::string("the measurement backend does not provide ") + what);
  }

  // The C jobs of `specs`; `arrays` gets one mt_chase_array per distinct ChaseArray, so
  // specs that share an array share a device buffer.
  static std::vector<mt_chase_job> jobs_for(const std::vector<ChaseSpec>& specs, std::vector<mt_chase_array>& arrays) {
    std::vector<const ChaseArray*> owners;
    arrays.clear();
    arrays.reserve(specs.size());
    std::vector<size_t> which(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      if (!specs[i].array) throw Error("chase spec without an array");
      size_t k = 0;
      while (k < owners.size() && owners[k] != specs[i].array) ++k;
      if (k == owners.size()) {
        owners.push_back(specs[i].array);
        arrays.push_back(specs[i].array->c());
      }
      which[i] = k;
    }
    std::vector<mt_chase_job> jobs(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const ChaseSpec& s = specs[i];
      mt_chase_job& j = jobs[i];
      j = mt_chase_job{};
      j.struct_size = sizeof(j);
      j.space = s.space;
      j.array = &arrays[which[i]];
      j.start = s.start;
      j.warmup_steps = s.warmup_steps;
      j.steps = s.steps;
      j.sm = s.sm;
      j.shared_carveout_percent = s.shared_carveout_percent;
    }
    return jobs;
  }

  std::vector<ChaseSamples> run(const std::vector<ChaseSpec>& specs, bool fine) const {
    require(b_ && (fine ? b_->fine_chase : b_->average_chase) != nullptr,
            fine ? "fine_chase" : "average_chase");
    std::vector<mt_chase_array> arrays;
    std::vector<mt_chase_job> jobs = jobs_for(specs, arrays);
    std::vector<ChaseSamples> out(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      const ChaseSpec& s = specs[i];
      mt_chase_job& j = jobs[i];
      if (fine) {
        out[i].index.resize(s.steps);
        out[i].latency.resize(s.steps);
        j.out_index = out[i].index.data();
        j.out_latency = out[i].latency.data();
      }
    }
    char err[512] = {0};
    int rc = fine ? b_->fine_chase(b_->self, jobs.data(), jobs.size(), err, sizeof err)
                  : b_->average_chase(b_->self, jobs.data(), jobs.size(), err, sizeof err);
    if (rc != 0) throw Error(err[0] ? err : "measurement failed");
    for (size_t i = 0; i < specs.size(); ++i) {
      out[i].average_cycles = jobs[i].out_average_cycles;
      out[i].sm = jobs[i].out_sm;
    }
    return out;
  }

  const mt_backend* b_;
};

// ------------------------------------------------------------------ values

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

// ------------------------------------------------------------------ context

class Context {
 public:
  explicit Context(const mt_context* c) : c_(c), backend_(c->backend) {}

  const mt_device_info& device() const { return *c_->device; }
  const Backend& backend() const { return backend_; }

  // Bytes one constant-space chase array may span (ABI 1.3), else constant memory itself
  // (0 where neither is known).
  uint64_t constant_reach_bytes() const {
    const mt_device_info& d = device();
    const int64_t mem = d.constant_memory_bytes > 0 ? d.constant_memory_bytes : 0;
    if (d.struct_size >= offsetof(mt_device_info, constant_reach_bytes) + sizeof(d.constant_reach_bytes) &&
        d.constant_reach_bytes > mem)
      return uint64_t(d.constant_reach_bytes);
    return uint64_t(mem);
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
    if (c_->api->put_result(c_->host, key.c_str(), &v, &ri) != 0)
      throw Error("the host refused result " + key + " (is it in the probe's provides list?)");
  }

  const mt_context* c_;
  Backend backend_;
};

// ------------------------------------------------------------------ probe spec

class Probe {
 public:
  using RunFn = std::function<void(Context&)>;
  struct Option {
    std::string name;
    mt_value_type type;
    std::string default_value;
    std::string help;
  };

  explicit Probe(std::string name) : name_(std::move(name)) {}
  Probe& summary(std::string s) { summary_ = std::move(s); return *this; }
  Probe& provides(std::vector<std::string> k) { provides_ = std::move(k); return *this; }
  Probe& requires_keys(std::vector<std::string> k) { requires_ = std::move(k); return *this; }
  Probe& uses(std::vector<std::string> k) { uses_ = std::move(k); return *this; }
  Probe& option(std::string name, mt_value_type type, std::string def, std::string help) {
    options_.push_back({std::move(name), type, std::move(def), std::move(help)});
    return *this;
  }
  Probe& run(RunFn fn) { run_ = std::move(fn); return *this; }

  const std::string& name() const { return name_; }
  const std::string& summary() const { return summary_; }
  const std::vector<std::string>& provided() const { return provides_; }
  const std::vector<std::string>& required() const { return requires_; }
  const std::vector<std::string>& used() const { return uses_; }
  const std::vector<Option>& options() const { return options_; }
  const RunFn& fn() const { return run_; }

 private:
  std::string name_, summary_;
  std::vector<std::string> provides_, requires_, uses_;
  std::vector<Option> options_;
  RunFn run_;
};

namespace detail {

inline void copy_message(char* dst, size_t size, const char* src) {
  if (!dst || size == 0) return;
  std::snprintf(dst, size, "%s", src ? src : "");
}

// Runs a probe's C++ function; exceptions become status codes here, at the boundary.
inline int trampoline(const mt_context* ctx, void* user, char* message, size_t message_size) {
  const Probe* probe = static_cast<const Probe*>(user);
  try {
    if (!probe->fn()) throw Error("probe has no run function");
    Context c(ctx);
    probe->fn()(c);
    return MT_STATUS_OK;
  } catch (const Skip& e) {
    copy_message(message, message_size, e.what());
    return MT_STATUS_SKIPPED;
  } catch (const std::exception& e) {
    copy_message(message, message_size, e.what());
    return MT_STATUS_FAILED;
  } catch (...) {
    copy_message(message, message_size, "unknown exception");
    return MT_STATUS_FAILED;
  }
}

// Owns the C descriptors built from Probe specs; lives as long as the library.
class PluginHolder {
 public:
  PluginHolder(const char* name, const char* version, std::vector<Probe> probes)
      : name_(name), version_(version), probes_(std::move(probes)) {
    keys_.resize(probes_.size());
    opts_.resize(probes_.size());
    for (size_t i = 0; i < probes_.size(); ++i) {
      const Probe& p = probes_[i];
      auto& k = keys_[i];
      k.provided = terminated(p.provided());
      k.required = terminated(p.required());
      k.used = terminated(p.used());
      for (const auto& o : p.options()) {
        mt_option_desc d{};
        d.struct_size = sizeof(d);
        d.name = o.name.c_str();
        d.type = o.type;
        d.default_value = o.default_value.c_str();
        d.help = o.help.c_str();
        opts_[i].push_back(d);
      }
      mt_probe_desc d{};
      d.struct_size = sizeof(d);
      d.name = p.name().c_str();
      d.summary = p.summary().c_str();
      d.provided_keys = k.provided.data();
      d.required_keys = k.required.data();
      d.used_keys = k.used.data();
      d.options = opts_[i].data();
      d.option_count = opts_[i].size();
      d.run = &trampoline;
      d.user = const_cast<Probe*>(&probes_[i]);
      descs_.push_back(d);
    }
    desc_.struct_size = sizeof(desc_);
    desc_.abi_major = MEMTOPO_ABI_MAJOR;
    desc_.abi_minor = MEMTOPO_ABI_MINOR;
    desc_.name = name_.c_str();
    desc_.version = version_.c_str();
    desc_.probes = descs_.data();
    desc_.probe_count = descs_.size();
  }
  PluginHolder(const PluginHolder&) = delete;
  PluginHolder& operator=(const PluginHolder&) = delete;
  const mt_plugin_desc* desc() const { return &desc_; }

 private:
  struct Keys {
    std::vector<const char*> provided, required, used;
  };
  static std::vector<const char*> terminated(const std::vector<std::string>& v) {
    std::vector<const char*> out;
    for (const auto& s : v) out.push_back(s.c_str());
    out.push_back(nullptr);
    return out;
  }
  std::string name_, version_;
  std::vector<Probe> probes_;
  std::vector<Keys> keys_;
  std::vector<std::vector<mt_option_desc>> opts_;
  std::vector<mt_probe_desc> descs_;
  mt_plugin_desc desc_{};
};

}  // namespace detail
}  // namespace memtopo

#define MEMTOPO_DETAIL_DESCRIPTOR_(NAME, VERSION, ...)                                       \
  static const mt_plugin_desc* memtopo_detail_descriptor_() {                                \
    static const ::memtopo::detail::PluginHolder holder(NAME, VERSION, {__VA_ARGS__});       \
    return holder.desc();                                                                    \
  }

#ifdef MEMTOPO_STATIC_PLUGIN_FN
// Linked statically into a test: a named function instead of the exported entry point.
#define MEMTOPO_PLUGIN(NAME, VERSION, ...)                                                   \
  MEMTOPO_DETAIL_DESCRIPTOR_(NAME, VERSION, __VA_ARGS__)                                     \
  const mt_plugin_desc* MEMTOPO_STATIC_PLUGIN_FN(uint32_t, uint32_t) {                       \
    return memtopo_detail_descriptor_();                                                     \
  }
#else
#define MEMTOPO_PLUGIN(NAME, VERSION, ...)                                                   \
  MEMTOPO_DETAIL_DESCRIPTOR_(NAME, VERSION, __VA_ARGS__)                                     \
  /* The descriptor carries the plugin's ABI version; the host decides whether to use it. */ \
  extern "C" MEMTOPO_EXPORT const mt_plugin_desc* memtopo_plugin_entry(uint32_t, uint32_t) {  \
    return memtopo_detail_descriptor_();                                                     \
  }
#endif
