// Reading, checking and answering the jobs of one run_jobs call, shared by every backend so
// that a bad request gets the same clear message on the GPU and on the simulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <numeric>
#include <string>
#include <vector>

#include "memtopo/abi.h"

namespace memtopo::engine {

// What a backend runs (mt_backend's capabilities and limits).
struct BackendLimits {
  uint64_t capabilities = 0;
  uint32_t streams_max = 1;
  uint32_t pump_warps_max = 0;
};

// Most lanes of one pump warp.
constexpr uint32_t kPumpLanesMax = 32;

// A call's jobs, copied from the caller's.
struct JobCall {
  std::vector<mt_job> jobs;
  bool sequence = false;  // the jobs have orders > 0
};

// Copies the caller's jobs; empty when they are readable, otherwise what is wrong.
std::string read_jobs(mt_job* const* jobs, size_t count, JobCall& call);
// Empty when every job can run on this device and backend, otherwise what is wrong
// ("job 3: start 900 is past the array's 512 elements").
std::string check_jobs(const JobCall& call, const mt_device_info& dev, const BackendLimits& limits);
// The results of `call` back into the caller's jobs.
void write_results(const JobCall& call, mt_job* const* jobs);

// The streams a job's loads are split over (rate.streams 0 reads as 1), and stream k's share
// of n loads.
inline uint32_t streams_of(const mt_job& j) { return j.rate.streams ? j.rate.streams : 1; }
inline uint64_t stream_share(uint64_t n, uint32_t streams, uint32_t k) {
  return n / streams + (k < n % streams ? 1 : 0);
}
// Staggered streams (mt_job::stagger_streams) of a chase over a STRIDE array: the cycle's
// length from any start, the elements between consecutive streams' starts, and stream k's start.
inline uint64_t stride_cycle_length(const mt_chase_array& a) {
  const uint64_t stride = a.elems ? a.stride_elems % a.elems : 0;
  return stride == 0 ? 1 : a.elems / std::gcd(a.elems, stride);
}
inline uint64_t stagger_elems(const mt_job& j) {
  const uint64_t n = streams_of(j), cycle = stride_cycle_length(*j.array);
  const uint64_t per = (cycle + n - 1) / n;
  return static_cast<uint64_t>((static_cast<unsigned __int128>(per) * j.array->stride_elems) % j.array->elems);
}
inline uint32_t stream_start(const mt_job& j, uint32_t k) {
  if (!j.stagger_streams || k == 0) return j.start;
  return static_cast<uint32_t>((static_cast<unsigned __int128>(k) * stagger_elems(j) + j.start) % j.array->elems);
}
// Timed-stream loads per pump window (0 reads as 1).
inline uint32_t probe_loads_of(const mt_job& j) { return j.rate.probe_loads ? j.rate.probe_loads : 1; }

// Writes `msg` into a C error buffer; returns 1 so callers can `return fail(...)`.
int fail(char* err, size_t size, const std::string& msg);

// MEMTOPO_NO_COUNTERS set: mt_backend::count refuses on every backend (a run without its checks,
// to time what they cost: docs/measurement.md, "Counters").
bool counting_off();
// Why a GPU's hardware counters are not read in this process, or "" where they are: off until
// set_hardware_counters(true) (memtopo run --verify), or MEMTOPO_NO_COUNTERS.
std::string gpu_counting_off_reason();

}  // namespace memtopo::engine
