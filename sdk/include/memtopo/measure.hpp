// memtopo measurement: the C++ layer over the measurement backend (measure.h).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "memtopo/abi.h"
#include "memtopo/errors.hpp"

namespace memtopo {

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
}  // namespace memtopo
