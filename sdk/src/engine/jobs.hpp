// Reading, checking and answering the jobs of one run_jobs call, shared by every backend so
// that a bad request gets the same clear message on the GPU and on the simulator.
#pragma once

#include <cstddef>
#include <cstdint>
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

// A call's jobs in the current layout: fields past a caller's struct_size read as zero.
struct JobCall {
  std::vector<mt_job> jobs;
  bool sequence = false;  // the jobs have orders > 0
};

// Copies the caller's jobs; empty when they are readable, otherwise what is wrong.
std::string read_jobs(mt_job* const* jobs, size_t count, JobCall& call);
// Empty when every job can run on this device and backend, otherwise what is wrong
// ("job 3: start 900 is past the array's 512 elements").
std::string check_jobs(const JobCall& call, const mt_device_info& dev, const BackendLimits& limits);
// The results of `call` back into the caller's jobs, as far as each one's struct_size goes.
void write_results(const JobCall& call, mt_job* const* jobs);

// The streams a job's loads are split over (rate.streams 0 reads as 1), and stream k's share
// of n loads.
inline uint32_t streams_of(const mt_job& j) { return j.rate.streams ? j.rate.streams : 1; }
inline uint64_t stream_share(uint64_t n, uint32_t streams, uint32_t k) {
  return n / streams + (k < n % streams ? 1 : 0);
}
// Lanes of each stream's warp that load (stream_lanes 0 reads as 1), the chains a job's loads
// are split over (streams x lanes), and the generator of chain c (warp c / lanes, lane c % lanes).
// With lane_chains (0 reads as 1) each lane runs several: chain c is chain c % lane_chains of
// lane (c / lane_chains) % lanes of warp c / lane_chains / lanes.
inline uint32_t lanes_of(const mt_job& j) { return j.stream_lanes ? j.stream_lanes : 1; }
inline uint32_t lane_chains_of(const mt_job& j) { return j.lane_chains ? j.lane_chains : 1; }
inline uint32_t chains_of(const mt_job& j) { return streams_of(j) * lanes_of(j) * lane_chains_of(j); }
inline uint32_t chain_stream(const mt_job& j, uint32_t c) {
  const uint32_t t = c / lane_chains_of(j);
  return t / lanes_of(j) + 32 * (t % lanes_of(j)) + 1024 * (c % lane_chains_of(j));
}
// Timed-stream loads per pump window (0 reads as 1).
inline uint32_t probe_loads_of(const mt_job& j) { return j.rate.probe_loads ? j.rate.probe_loads : 1; }

// A stream job's blocks (stream_blocks, 0: one per SM), and the bytes of each block's slice: the
// footprint over the blocks, rounded down to whole rounds of its threads' accesses.
inline uint32_t stream_blocks_of(const mt_job& j, const mt_device_info& dev) {
  return j.stream_blocks ? j.stream_blocks : uint32_t(dev.sm_count > 0 ? dev.sm_count : 1);
}
inline uint64_t stream_round_bytes(const mt_job& j) {
  return uint64_t(j.stream_threads ? j.stream_threads : 256) * (j.stream_ilp ? j.stream_ilp : 1) *
         (j.load_bytes ? j.load_bytes : 4);
}
inline uint64_t stream_slice_bytes(const mt_job& j, const mt_device_info& dev) {
  const uint64_t round = stream_round_bytes(j);
  return j.array->elems * 4 / stream_blocks_of(j, dev) / round * round;
}
// GRID and SHARED: the footprint in whole rounds.
inline uint64_t stream_rounds(const mt_job& j) { return j.array->elems * 4 / stream_round_bytes(j); }
// Bytes one pass of a stream reads (a copy or an update writes as much again).
inline uint64_t stream_pass_bytes(const mt_job& j, const mt_device_info& dev) {
  if (j.stream_shape == MT_STREAM_GRID) return stream_rounds(j) * stream_round_bytes(j);
  if (j.stream_shape == MT_STREAM_SHARED) return stream_rounds(j) * stream_round_bytes(j) * stream_blocks_of(j, dev);
  return stream_slice_bytes(j, dev) * stream_blocks_of(j, dev);
}
// Bytes a stream's timed passes read plus write.
inline uint64_t stream_bytes_moved(const mt_job& j, const mt_device_info& dev) {
  const uint64_t once = stream_pass_bytes(j, dev) * j.steps;
  return j.stream_op == MT_STREAM_COPY || j.stream_op == MT_STREAM_UPDATE ? 2 * once : once;
}

// Writes `msg` into a C error buffer; returns 1 so callers can `return fail(...)`.
int fail(char* err, size_t size, const std::string& msg);

}  // namespace memtopo::engine
