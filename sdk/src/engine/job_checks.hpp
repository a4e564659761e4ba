// Request validation shared by every backend, so that a bad request gets the same clear
// message on the GPU and on the simulator.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "memtopo/abi.h"

namespace memtopo::engine {

// Empty when the jobs are valid, otherwise what is wrong ("job 3: start 900 is past the
// array's 512 elements").
std::string check_chase_jobs(const mt_chase_job* jobs, size_t count, const mt_device_info& dev, bool fine);
// Also copies each job's chase into `chases` (contiguous, for the chase checks and runners).
std::string check_count_jobs(const mt_count_job* jobs, size_t count, const mt_device_info& dev,
                             std::vector<mt_chase_job>& chases);
// Random-load counts: also copies each job's count job into `counts` and its chase into
// `chases` (contiguous, for the count runners).
std::string check_random_jobs(const mt_random_count_job* jobs, size_t count, const mt_device_info& dev,
                              std::vector<mt_count_job>& counts, std::vector<mt_chase_job>& chases);
std::string check_sequence_job(const mt_sequence_job& job, const mt_device_info& dev);

// Streams per paced count job both backends run (one warp each on the GPU).
constexpr uint32_t kRandomStreamsMax = 32;
// Most lanes of one pump warp (a pumped count's untimed generators).
constexpr uint32_t kPumpLanesMax = 32;
// A paced or pumped count job's rate (streams 0 read as 1; pump_warps 0: no pump).
struct RandomRate {
  uint32_t streams = 1;
  uint32_t gap_cycles = 0;
  uint32_t pump_warps = 0;
  uint32_t pump_lanes = 0;
  uint32_t pump_cycles = 0;
  uint32_t probe_loads = 1;  // timed-stream loads per pump window
};
// Pump generator k (0 .. warps x lanes - 1) draws from stream_state(x, kPumpStreamBase + k):
// never a timed stream's.
constexpr uint32_t kPumpStreamBase = 64;
// Paced and pumped counts, checked: each job's random job, rate, count job and chase
// (contiguous, for the count runners).
struct RatedJobs {
  std::vector<mt_random_count_job> randoms;
  std::vector<RandomRate> rates;
  std::vector<mt_count_job> counts;
  std::vector<mt_chase_job> chases;
};
std::string check_paced_jobs(const mt_paced_count_job* jobs, size_t count, const mt_device_info& dev, RatedJobs& out);
// Pumped counts (pump_warps_max: the backend's): as check_paced_jobs.
std::string check_pumped_jobs(const mt_pumped_count_job* jobs, size_t count, const mt_device_info& dev,
                              uint32_t pump_warps_max, RatedJobs& out);
// The outputs of checked jobs that ran (spans and pump loads per job) back into the caller's.
template <class Job>
void return_rated(Job* jobs, const RatedJobs& r, const std::vector<uint64_t>& spans,
                  const std::vector<uint64_t>& pump_loads) {
  for (size_t i = 0; i < r.counts.size(); ++i) {
    mt_count_job& c = jobs[i].random.count;
    c.out_slow = r.counts[i].out_slow;
    c.out_slow_recorded = r.counts[i].out_slow_recorded;
    c.out_cycles = r.counts[i].out_cycles;
    c.out_outliers = r.counts[i].out_outliers;
    c.chase.out_sm = r.chases[i].out_sm;
    jobs[i].out_span_cycles = spans[i];
    if constexpr (std::is_same_v<Job, mt_pumped_count_job>) jobs[i].out_pump_loads = pump_loads[i];
  }
}
// Stream k's generator state from stream 0's (RandomPlaces::x); the GPU kernel derives it
// the same way. Stream 0 keeps it, so a one-stream job draws what it drew before.
inline uint64_t stream_state(uint64_t x, uint32_t k) {
  const uint64_t y = x ^ (0xD1B54A32D192ED03ull * uint64_t(k));
  return y ? y : 1;
}

// The element after `i` in an array (EXPLICIT or STRIDE).
inline uint32_t next_index(const mt_chase_array& a, uint64_t i) {
  if (a.kind == MT_ARRAY_STRIDE) return static_cast<uint32_t>((i + a.stride_elems) % a.elems);
  return a.next[i];
}

// The random-load generator both backends use (xorshift64, seeded through splitmix64), so
// a job draws the same places on the GPU and on the simulator.
struct RandomPlaces {
  uint64_t x;
  uint32_t candidates;
  uint32_t stride;
  RandomPlaces(uint64_t seed, uint64_t elems, uint64_t stride_elems)
      : x(mix(seed)), candidates(uint32_t(elems / stride_elems)), stride(uint32_t(stride_elems)) {}
  static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
  }
  uint32_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return uint32_t(((x >> 32) * uint64_t(candidates)) >> 32) * stride;
  }
};

// Writes `msg` into a C error buffer; returns 1 so callers can `return fail(...)`.
int fail(char* err, size_t size, const std::string& msg);

}  // namespace memtopo::engine
