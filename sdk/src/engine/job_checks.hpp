// Request validation shared by every backend, so that a bad request gets the same clear
// message on the GPU and on the simulator.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "memtopo/abi.h"

namespace memtopo::engine {

// Empty when the jobs are valid, otherwise what is wrong ("job 3: start 900 is past the
// array's 512 elements").
std::string check_chase_jobs(const mt_chase_job* jobs, size_t count, const mt_device_info& dev, bool fine);
// Also copies each job's chase into `chases` (contiguous, for the chase checks and runners).
std::string check_count_jobs(const mt_count_job* jobs, size_t count, const mt_device_info& dev,
                             std::vector<mt_chase_job>& chases);
std::string check_sequence_job(const mt_sequence_job& job, const mt_device_info& dev);

// The element after `i` in an array (EXPLICIT or STRIDE).
inline uint32_t next_index(const mt_chase_array& a, uint64_t i) {
  if (a.kind == MT_ARRAY_STRIDE) return static_cast<uint32_t>((i + a.stride_elems) % a.elems);
  return a.next[i];
}

// Writes `msg` into a C error buffer; returns 1 so callers can `return fail(...)`.
int fail(char* err, size_t size, const std::string& msg);

}  // namespace memtopo::engine
