#include "engine/job_checks.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <set>
#include <string>

namespace memtopo::engine {
namespace {

std::string check_array(const mt_chase_array* a, const std::string& where) {
  if (!a) return where + ": no array";
  if (a->elems == 0) return where + ": the array is empty";
  if (a->elems > (uint64_t(1) << 32)) return where + ": more than 2^32 elements cannot be indexed with 32 bits";
  if (a->kind == MT_ARRAY_EXPLICIT) {
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

}  // namespace

int fail(char* err, size_t size, const std::string& msg) {
  if (err && size) std::snprintf(err, size, "%s", msg.c_str());
  return 1;
}

std::string check_chase_jobs(const mt_chase_job* jobs, size_t count, const mt_device_info& dev, bool fine) {
  if (count == 0) return "no jobs";
  if (!jobs) return "no job array";
  if (dev.sm_count > 0 && count > size_t(dev.sm_count))
    return std::to_string(count) + " jobs but only " + std::to_string(dev.sm_count) + " SMs; one job runs per SM";
  std::set<int32_t> pinned;
  for (size_t i = 0; i < count; ++i) {
    const mt_chase_job& j = jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (j.struct_size < sizeof(mt_chase_job)) return where + ": struct_size too small";
    if (auto e = check_array(j.array, where); !e.empty()) return e;
    if (auto e = check_space(j.space, j.array, dev, where); !e.empty()) return e;
    if (auto e = check_sm(j.sm, dev, where); !e.empty()) return e;
    if (j.sm >= 0 && !pinned.insert(j.sm).second) return where + ": SM " + std::to_string(j.sm) + " is pinned twice";
    if (j.start >= j.array->elems)
      return where + ": start " + std::to_string(j.start) + " is past the array's " + std::to_string(j.array->elems) + " elements";
    if (j.steps == 0) return where + ": zero steps";
    if (fine && !j.out_latency) return where + ": no out_latency buffer";
    if (j.shared_carveout_percent < -1 || j.shared_carveout_percent > 100)
      return where + ": shared_carveout_percent must be -1 or 0..100";
  }
  return {};
}

std::string check_count_jobs(const mt_count_job* jobs, size_t count, const mt_device_info& dev,
                             std::vector<mt_chase_job>& chases) {
  if (count == 0) return "no jobs";
  if (!jobs) return "no job array";
  chases.clear();
  for (size_t i = 0; i < count; ++i) {
    const mt_count_job& j = jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (j.struct_size < sizeof(mt_count_job)) return where + ": struct_size too small";
    if (j.slow_capacity > 0 && !j.out_slow_step) return where + ": slow_capacity without an out_slow_step buffer";
    if (j.chase.steps > UINT32_MAX) return where + ": more than 2^32 - 1 counted steps";
    chases.push_back(j.chase);
  }
  return check_chase_jobs(chases.data(), chases.size(), dev, false);
}

std::string check_random_jobs(const mt_random_count_job* jobs, size_t count, const mt_device_info& dev,
                              std::vector<mt_count_job>& counts, std::vector<mt_chase_job>& chases) {
  if (count == 0) return "no jobs";
  if (!jobs) return "no job array";
  counts.clear();
  for (size_t i = 0; i < count; ++i) {
    const mt_random_count_job& j = jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (j.struct_size < sizeof(mt_random_count_job)) return where + ": struct_size too small";
    const mt_space s = j.count.chase.space;
    if (s != MT_SPACE_GLOBAL_CA && s != MT_SPACE_GLOBAL_CG && s != MT_SPACE_READONLY)
      return where + ": random loads take a global path (GLOBAL_CA, GLOBAL_CG or READONLY), not space " +
             std::to_string(int(s));
    if (j.stride_elems == 0) return where + ": stride_elems is 0";
    const mt_chase_array* a = j.count.chase.array;
    if (a && j.stride_elems > a->elems)
      return where + ": stride_elems " + std::to_string(j.stride_elems) + " exceeds the array's " +
             std::to_string(a->elems) + " elements";
    if (a && a->elems / j.stride_elems > UINT32_MAX) return where + ": 2^32 or more candidate places";
    counts.push_back(j.count);
    counts.back().chase.start = 0;  // not used; keeps the chase checks quiet
  }
  return check_count_jobs(counts.data(), counts.size(), dev, chases);
}

std::string check_paced_jobs(const mt_paced_count_job* jobs, size_t count, const mt_device_info& dev, RatedJobs& out) {
  if (count == 0) return "no jobs";
  if (!jobs) return "no job array";
  out = RatedJobs{};
  for (size_t i = 0; i < count; ++i) {
    const mt_paced_count_job& j = jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (j.struct_size < sizeof(mt_paced_count_job)) return where + ": struct_size too small";
    RandomRate r;
    r.streams = j.streams ? j.streams : 1;
    r.gap_cycles = j.gap_cycles;
    if (r.streams > kRandomStreamsMax)
      return where + ": " + std::to_string(r.streams) + " streams; at most " + std::to_string(kRandomStreamsMax);
    if (j.random.count.chase.steps < r.streams)
      return where + ": fewer timed loads (" + std::to_string(j.random.count.chase.steps) + ") than streams (" +
             std::to_string(r.streams) + ")";
    out.randoms.push_back(j.random);
    out.rates.push_back(r);
  }
  return check_random_jobs(out.randoms.data(), out.randoms.size(), dev, out.counts, out.chases);
}

std::string check_pumped_jobs(const mt_pumped_count_job* jobs, size_t count, const mt_device_info& dev,
                              uint32_t pump_warps_max, RatedJobs& out) {
  if (count == 0) return "no jobs";
  if (!jobs) return "no job array";
  out = RatedJobs{};
  for (size_t i = 0; i < count; ++i) {
    const mt_pumped_count_job& j = jobs[i];
    const std::string where = "job " + std::to_string(i);
    if (j.struct_size < sizeof(mt_pumped_count_job)) return where + ": struct_size too small";
    RandomRate r;
    r.pump_warps = j.pump_warps;
    r.pump_lanes = j.pump_lanes;
    r.pump_cycles = j.pump_cycles;
    r.probe_loads = j.probe_loads ? j.probe_loads : 1;
    if (r.pump_warps > pump_warps_max)
      return where + ": " + std::to_string(r.pump_warps) + " pump warps; at most " + std::to_string(pump_warps_max);
    if (r.pump_warps && (r.pump_lanes == 0 || r.pump_lanes > kPumpLanesMax))
      return where + ": " + std::to_string(r.pump_lanes) + " pump lanes; 1 to " + std::to_string(kPumpLanesMax);
    if (r.pump_warps && r.pump_cycles == 0) return where + ": a pump with pump_cycles 0 never loads";
    out.randoms.push_back(j.random);
    out.rates.push_back(r);
  }
  return check_random_jobs(out.randoms.data(), out.randoms.size(), dev, out.counts, out.chases);
}

std::string check_sequence_job(const mt_sequence_job& job, const mt_device_info& dev) {
  if (job.struct_size < sizeof(mt_sequence_job)) return "sequence: struct_size too small";
  if (job.actor_count == 0 || !job.actors) return "sequence: no actors";
  if (job.phase_count == 0 || !job.phases) return "sequence: no phases";
  for (size_t a = 0; a < job.actor_count; ++a) {
    const std::string where = "actor " + std::to_string(a);
    if (auto e = check_sm(job.actors[a].sm, dev, where); !e.empty()) return e;
    if (dev.max_threads_per_block > 0 && job.actors[a].lane >= uint32_t(dev.max_threads_per_block))
      return where + ": lane " + std::to_string(job.actors[a].lane) + " exceeds the block size limit";
  }
  for (size_t p = 0; p < job.phase_count; ++p) {
    const mt_phase& ph = job.phases[p];
    const std::string where = "phase " + std::to_string(p);
    if (ph.struct_size < sizeof(mt_phase)) return where + ": struct_size too small";
    if (ph.actor >= job.actor_count) return where + ": actor " + std::to_string(ph.actor) + " does not exist";
    if (auto e = check_array(ph.array, where); !e.empty()) return e;
    if (auto e = check_space(job.space, ph.array, dev, where); !e.empty()) return e;
    if (ph.start >= ph.array->elems) return where + ": start is past the end of the array";
    if (ph.steps == 0) return where + ": zero steps";
  }
  return {};
}

}  // namespace memtopo::engine
