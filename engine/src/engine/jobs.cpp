#include "engine/jobs.hpp"

#include "memtopo/engine.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "engine/random_places.hpp"

namespace memtopo::engine {
namespace {

// Loaded values are 32-bit element indices; a pointer chase loads addresses instead, so a
// stride array it follows may be longer (measure.h, MT_CAP_WIDE_STRIDE).
constexpr uint64_t kIndexedElemsMax = uint64_t(1) << 32;
constexpr uint64_t kWideStrideElemsMax = uint64_t(1) << 38;

std::string check_array(const mt_chase_array* a, const std::string& where) {
  if (!a) return where + ": no array";
  if (a->elems == 0) return where + ": the array is empty";
  if (a->elems > kWideStrideElemsMax)
    return where + ": more than 2^38 elements (a footprint over 1 TiB)";
  if (a->kind == MT_ARRAY_EXPLICIT) {
    if (a->elems > kIndexedElemsMax) return where + ": more than 2^32 elements cannot be indexed with 32 bits";
    if (!a->next) return where + ": explicit array without data";
  } else if (a->kind == MT_ARRAY_STRIDE) {
    if (a->stride_elems == 0) return where + ": stride array with stride 0";
  } else {
    return where + ": unknown array kind " + std::to_string(int(a->kind));
  }
  return {};
}

std::string check_space(mt_space s, const mt_chase_array* a, const mt_device_info& dev, const std::string& where) {
  if (s < MT_SPACE_GLOBAL_CA || s > MT_SPACE_SHARED) return where + ": unknown memory space " + std::to_string(int(s));
  const int64_t reach = std::max(dev.constant_memory_bytes, dev.constant_reach_bytes);
  if (s == MT_SPACE_CONSTANT && reach > 0 && a->elems * 4 > uint64_t(reach))
    return where + ": " + std::to_string(a->elems * 4) + " bytes do not fit in constant memory (" +
           std::to_string(dev.constant_memory_bytes) + " bytes" +
           (reach > dev.constant_memory_bytes ? ", " + std::to_string(reach) + " with the kernel-parameter bank" : "") +
           ")";
  if (s == MT_SPACE_SHARED && dev.shared_per_block_optin_bytes > 0 &&
      a->elems * 4 > uint64_t(dev.shared_per_block_optin_bytes))
    return where + ": " + std::to_string(a->elems * 4) + " bytes do not fit in shared memory (" +
           std::to_string(dev.shared_per_block_optin_bytes) + " bytes per block)";
  return {};
}

std::string check_sm(int32_t sm, const mt_device_info& dev, const std::string& where) {
  if (sm < -1 || (dev.sm_count > 0 && sm >= dev.sm_count))
    return where + ": SM " + std::to_string(sm) + " does not exist (the device has " + std::to_string(dev.sm_count) + ")";
  return {};
}

bool global_path(mt_space s) { return s == MT_SPACE_GLOBAL_CA || s == MT_SPACE_GLOBAL_CG || s == MT_SPACE_READONLY; }

std::string missing(uint64_t caps, uint64_t need, const char* what, const std::string& where) {
  if (caps & need) return {};
  return where + ": this backend does not run " + what;
}

// Global paths hold 64-bit addresses at the visited elements' byte offsets: each visited
// index must be even, so that no pointer overlaps another visited element.
std::string check_pointer_layout(const mt_job& j, const std::string& where) {
  if (!global_path(j.space)) return {};
  const mt_chase_array& a = *j.array;
  const std::string need = where + ": a pointer chase on a global path needs every visited element index even";
  if (a.kind == MT_ARRAY_STRIDE) {
    if (j.start % 2 || a.stride_elems % 2 || a.elems % 2) return need + " (start, stride and length even)";
    return {};
  }
  uint64_t i = j.start;
  for (uint64_t k = 0; k < std::min<uint64_t>(j.warmup_steps + j.steps, a.elems); ++k) {
    if (i % 2) return need + " (element " + std::to_string(i) + " is odd)";
    i = a.next[i];
  }
  return {};
}

std::string check_rate(const mt_job& j, const BackendLimits& lim, const std::string& where) {
  const mt_rate& r = j.rate;
  const bool paced = r.streams > 1 || r.gap_cycles > 0;
  if (j.stagger_streams) {
    if (j.stagger_streams != 1) return where + ": stagger_streams is 0 or 1";
    if (j.pattern != MT_PATTERN_CHASE || j.array == nullptr || j.array->kind != MT_ARRAY_STRIDE || r.streams < 2)
      return where + ": staggered streams (stagger_streams = 1) split a counted chase over a STRIDE array between "
                     "two or more streams (rate.streams)";
  }
  if (!paced && r.pump_warps == 0) return {};
  const bool chained = j.pattern == MT_PATTERN_CHASE && r.gap_cycles == 0 && r.pump_warps == 0 &&
                       (global_path(j.space) || j.space == MT_SPACE_SHARED);
  if (j.record != MT_RECORD_COUNTS || (j.pattern != MT_PATTERN_RANDOM && !chained))
    return where + ": streams, gaps and pumps pace counted random loads (MT_PATTERN_RANDOM, MT_RECORD_COUNTS); "
                   "counted chases (MT_PATTERN_CHASE) take streams on a global path or in shared memory";
  if (paced) {
    if (auto e = missing(lim.capabilities, MT_CAP_STREAMS, "several streams or gaps (MT_CAP_STREAMS)", where); !e.empty())
      return e;
    if (r.streams > lim.streams_max)
      return where + ": " + std::to_string(r.streams) + " streams; at most " + std::to_string(lim.streams_max);
    if (j.steps < streams_of(j))
      return where + ": fewer timed loads (" + std::to_string(j.steps) + ") than streams (" +
             std::to_string(streams_of(j)) + ")";
  }
  if (r.pump_warps == 0) return {};
  if (auto e = missing(lim.capabilities, MT_CAP_PUMP, "a pump (MT_CAP_PUMP)", where); !e.empty()) return e;
  if (paced) return where + ": a pump runs with one timed stream and no gap";
  if (r.pump_warps > lim.pump_warps_max)
    return where + ": " + std::to_string(r.pump_warps) + " pump warps; at most " + std::to_string(lim.pump_warps_max);
  if (r.pump_lanes == 0 || r.pump_lanes > kPumpLanesMax)
    return where + ": " + std::to_string(r.pump_lanes) + " pump lanes; 1 to " + std::to_string(kPumpLanesMax);
  if (r.pump_cycles == 0) return where + ": a pump with pump_cycles 0 never loads";
  return {};
}

std::string check_pattern(const mt_job& j, const BackendLimits& lim, const std::string& where) {
  const uint64_t caps = lim.capabilities;
  switch (j.pattern) {
    case MT_PATTERN_CHASE:
      break;
    case MT_PATTERN_RANDOM: {
      if (auto e = missing(caps, MT_CAP_RANDOM, "random loads (MT_CAP_RANDOM)", where); !e.empty()) return e;
      if (!global_path(j.space))
        return where + ": random loads take a global path (GLOBAL_CA, GLOBAL_CG or READONLY), not space " +
               std::to_string(int(j.space));
      if (j.record != MT_RECORD_COUNTS) return where + ": random loads are counted (MT_RECORD_COUNTS)";
      if (j.random_stride_elems == 0) return where + ": random_stride_elems is 0";
      if (j.random_stride_elems > j.array->elems)
        return where + ": random_stride_elems " + std::to_string(j.random_stride_elems) + " exceeds the array's " +
               std::to_string(j.array->elems) + " elements";
      if (j.array->elems / j.random_stride_elems > UINT32_MAX) return where + ": 2^32 or more candidate places";
      return {};
    }
    case MT_PATTERN_POINTERS:
      if (auto e = missing(caps, MT_CAP_POINTERS, "pointer chases (MT_CAP_POINTERS)", where); !e.empty()) return e;
      if (j.array->elems > kIndexedElemsMax) {
        if (auto e = missing(caps, MT_CAP_WIDE_STRIDE, "stride arrays over 2^32 elements (MT_CAP_WIDE_STRIDE)", where);
            !e.empty())
          return e;
        if (!global_path(j.space))
          return where + ": an array of more than 2^32 elements is followed on a global path only (GLOBAL_CA, "
                         "GLOBAL_CG or READONLY)";
      }
      if (j.record != MT_RECORD_TOTAL) return where + ": a pointer chase is timed as a whole (MT_RECORD_TOTAL)";
      if (auto e = check_pointer_layout(j, where); !e.empty()) return e;
      break;
    default:
      return where + ": unknown pattern " + std::to_string(int(j.pattern));
  }
  if (j.array->elems > kIndexedElemsMax && j.pattern != MT_PATTERN_POINTERS)
    return where + ": an array of more than 2^32 elements is followed by pointer only (MT_PATTERN_POINTERS with "
                   "MT_RECORD_TOTAL): its indices do not fit the 32 bits a chase loads";
  if (j.start >= j.array->elems)
    return where + ": start " + std::to_string(j.start) + " is past the array's " + std::to_string(j.array->elems) +
           " elements";
  return {};
}

std::string check_record(const mt_job& j, const BackendLimits& lim, const std::string& where) {
  switch (j.record) {
    case MT_RECORD_SAMPLES:
      if (auto e = missing(lim.capabilities, MT_CAP_SAMPLES, "per-load samples (MT_CAP_SAMPLES)", where); !e.empty())
        return e;
      if (!j.out_latency && j.order == 0) return where + ": no out_latency buffer";
      return {};
    case MT_RECORD_TOTAL:
      return missing(lim.capabilities, MT_CAP_TOTAL, "whole-chase timing (MT_CAP_TOTAL)", where);
    case MT_RECORD_COUNTS:
      if (auto e = missing(lim.capabilities, MT_CAP_COUNTS, "counted loads (MT_CAP_COUNTS)", where); !e.empty())
        return e;
      if (j.slow_capacity > 0 && !j.out_slow_step) return where + ": slow_capacity without an out_slow_step buffer";
      if (j.steps > UINT32_MAX) return where + ": more than 2^32 - 1 counted steps";
      return {};
    default:
      return where + ": unknown record " + std::to_string(int(j.record));
  }
}

std::string check_one(const mt_job& j, const mt_device_info& dev, const BackendLimits& lim, const std::string& where) {
  if (auto e = check_array(j.array, where); !e.empty()) return e;
  if (auto e = check_space(j.space, j.array, dev, where); !e.empty()) return e;
  if (auto e = check_sm(j.sm, dev, where); !e.empty()) return e;
  if (j.steps == 0) return where + ": zero steps";
  if (j.shared_carveout_percent < -1 || j.shared_carveout_percent > 100)
    return where + ": shared_carveout_percent must be -1 or 0..100";
  if (auto e = check_pattern(j, lim, where); !e.empty()) return e;
  if (auto e = check_record(j, lim, where); !e.empty()) return e;
  return check_rate(j, lim, where);
}

// Jobs of order 0: one per SM, at most one pinned to each.
std::string check_concurrent(const JobCall& call, const mt_device_info& dev) {
  const size_t n = call.jobs.size();
  if (dev.sm_count > 0 && n > size_t(dev.sm_count))
    return std::to_string(n) + " jobs but only " + std::to_string(dev.sm_count) + " SMs; one job runs per SM";
  std::set<int32_t> pinned;
  for (size_t i = 0; i < n; ++i) {
    const mt_job& j = call.jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (j.sm >= 0 && !pinned.insert(j.sm).second) return where + ": SM " + std::to_string(j.sm) + " is pinned twice";
    if (j.block >= 0) return where + ": jobs of order 0 run in blocks of their own (block -1); blocks are shared in sequences";
  }
  return {};
}

// A sequence: distinct orders, one carveout, blocks on distinct SMs, one SM per block.
std::string check_sequence(const JobCall& call, const mt_device_info& dev) {
  std::set<uint32_t> orders;
  std::map<int32_t, int32_t> block_sm;
  std::map<int32_t, size_t> pinned_by;
  const int32_t carveout = call.jobs[0].shared_carveout_percent;
  for (size_t i = 0; i < call.jobs.size(); ++i) {
    const mt_job& j = call.jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (!orders.insert(j.order).second)
      return where + ": order " + std::to_string(j.order) + " is taken; the jobs of a sequence run one at a time";
    if (j.block < 0) return where + ": a job of a sequence names its block (>= 0)";
    if (j.record != MT_RECORD_SAMPLES) return where + ": a sequence records samples (MT_RECORD_SAMPLES) or only loads";
    if (j.pattern != MT_PATTERN_CHASE) return where + ": a sequence chases arrays (MT_PATTERN_CHASE)";
    if (j.shared_carveout_percent != carveout) return where + ": the jobs of a sequence share one carveout";
    if (dev.max_threads_per_block > 0 && j.lane >= uint32_t(dev.max_threads_per_block))
      return where + ": lane " + std::to_string(j.lane) + " exceeds the block size limit";
    auto [it, fresh] = block_sm.try_emplace(j.block, j.sm);
    if (j.sm >= 0 && it->second >= 0 && it->second != j.sm)
      return where + ": block " + std::to_string(j.block) + " is pinned to SM " + std::to_string(it->second) +
             " by job " + std::to_string(pinned_by[j.block]) + " and to SM " + std::to_string(j.sm) +
             " here; the jobs of one block share one SM";
    if (j.sm >= 0) {
      it->second = j.sm;
      pinned_by.emplace(j.block, i);
    }
  }
  if (dev.sm_count > 0 && block_sm.size() > size_t(dev.sm_count))
    return "the sequence has " + std::to_string(block_sm.size()) + " blocks but the device only " +
           std::to_string(dev.sm_count) + " SMs; the blocks of a sequence run on distinct SMs";
  std::map<int32_t, int32_t> sm_block;
  for (auto [b, sm] : block_sm)
    if (sm >= 0 && !sm_block.emplace(sm, b).second)
      return "blocks " + std::to_string(sm_block[sm]) + " and " + std::to_string(b) + " are both pinned to SM " +
             std::to_string(sm) + "; the blocks of a sequence run on distinct SMs";
  return {};
}

}  // namespace

int fail(char* err, size_t size, const std::string& msg) {
  if (err && size) std::snprintf(err, size, "%s", msg.c_str());
  return 1;
}

std::string read_jobs(mt_job* const* jobs, size_t count, JobCall& call) {
  if (count == 0) return "no jobs";
  if (!jobs) return "no job array";
  call = JobCall{};
  for (size_t i = 0; i < count; ++i) {
    const std::string where = "job " + std::to_string(i);
    if (!jobs[i]) return where + ": null job";
    if (jobs[i]->struct_size != sizeof(mt_job))
      return where + ": struct_size " + std::to_string(jobs[i]->struct_size) + "; an mt_job has " +
             std::to_string(sizeof(mt_job)) + " bytes";
    mt_job j = *jobs[i];
    j.out = mt_job_result{};
    j.out.sm = -1;
    call.jobs.push_back(j);
  }
  call.sequence = call.jobs[0].order > 0;
  return {};
}

std::string check_jobs(const JobCall& call, const mt_device_info& dev, const BackendLimits& limits) {
  for (size_t i = 0; i < call.jobs.size(); ++i)
    if ((call.jobs[i].order == 0) != !call.sequence)
      return "job " + std::to_string(i) + ": order " + std::to_string(call.jobs[i].order) + " beside job 0's order " +
             std::to_string(call.jobs[0].order) + "; a call is all order 0 or a sequence (orders > 0)";
  for (size_t i = 0; i < call.jobs.size(); ++i)
    if (auto e = check_one(call.jobs[i], dev, limits, "job " + std::to_string(i)); !e.empty()) return e;
  if (!call.sequence) return check_concurrent(call, dev);
  if (!(limits.capabilities & MT_CAP_SEQUENCE)) return "this backend does not run sequences (MT_CAP_SEQUENCE)";
  return check_sequence(call, dev);
}

void write_results(const JobCall& call, mt_job* const* jobs) {
  for (size_t i = 0; i < call.jobs.size(); ++i) jobs[i]->out = call.jobs[i].out;
}

bool counting_off() {
  static const bool off = std::getenv("MEMTOPO_NO_COUNTERS") != nullptr;
  return off;
}

namespace {
std::atomic<bool> g_gpu_counters{false};
}  // namespace

void set_hardware_counters(bool on) { g_gpu_counters.store(on); }

std::string gpu_counting_off_reason() {
  if (counting_off()) return "hardware counters switched off (MEMTOPO_NO_COUNTERS)";
  if (!g_gpu_counters.load()) return "not checked by the hardware counters (memtopo run --verify checks it)";
  return "";
}

}  // namespace memtopo::engine
