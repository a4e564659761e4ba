// The measurement engine of the CUDA backend (mt_backend::run_jobs and the rest of
// measure.h): request checks, array placement, SM claiming tables, launches, retries.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cupti_counts.hpp"
#include "device_memory.hpp"
#include "engine/jobs.hpp"
#include "memtopo/abi.h"

namespace memtopo::cuda {

class CudaEngine {
 public:
  // Loads every kernel (lazy module loading) and allocates the control buffer. `info` must
  // outlive the engine. Throws memtopo::Error.
  CudaEngine(int ordinal, const mt_device_info& info);
  CudaEngine(const CudaEngine&) = delete;
  CudaEngine& operator=(const CudaEngine&) = delete;
  ~CudaEngine();

  // Pump warps one job may have: the block's other 31 warps.
  static constexpr uint32_t kPumpWarpsMax = 31;
  static constexpr uint32_t kStreamsMax = 32;
  static const engine::BackendLimits& limits();

  // Each throws memtopo::Error with the reason; the C wrappers turn that into the error
  // return of measure.h.
  void run_jobs(mt_job* const* jobs, size_t count);
  double timing_overhead();
  // A buffer from the pool for a probe's own kernels, and its return.
  void* alloc_buffer(uint64_t bytes);
  void free_buffer(void* data);

  std::mutex& mutex() { return mutex_; }
  // The hardware counters (mt_backend::count), used without the lock: the counted work calls
  // the engine itself.
  CuptiCounts& counters() { return counters_; }
  int ordinal() const { return ordinal_; }
  const mt_device_info& info() const { return info_; }

 private:
  // Jobs of order 0 (concurrent_jobs.cpp) and sequences (sequence_jobs.cpp).
  void run_concurrent(engine::JobCall& call);
  void run_sequence(engine::JobCall& call);
  // Launches one group of concurrent jobs (the same kernel configuration), relaunching the
  // jobs whose SM no block reached; their SMs go to jobs[i].out.sm.
  struct Group;
  void launch_group(engine::JobCall& call, const Group& g, const CallArrays& arrays, uint32_t* out,
                    const std::vector<uint64_t>& out_offset);

  template <class Desc>
  ClaimTables upload_launch(const std::vector<int32_t>& pins, const std::vector<Desc>& descs, const Desc** device_descs);
  std::vector<int32_t> read_job_sms(const ClaimTables& t, size_t count);
  uint32_t read_abort(const ClaimTables& t);
  uint32_t grid_blocks() const { return 4 * sm_slots_; }
  uint32_t max_dynamic_shared() const;

  int ordinal_;
  const mt_device_info& info_;
  DeviceLimits limits_;
  uint32_t sm_slots_ = 0;           // max(sm_count, %nsmid): size of the per-SM tables
  unsigned long long wait_cycles_ = 0;  // bounded waits inside kernels
  DevicePool pool_;
  std::vector<DeviceBuffer> lent_;  // buffers lent to probe kernels
  void* control_ = nullptr;         // claim tables and job descriptors of one launch
  uint64_t control_bytes_ = 0;
  std::optional<double> overhead_;  // timing_overhead, measured once
  std::mutex mutex_;
  CuptiCounts counters_{ordinal_};
};

// Launches tried before a job whose SM no block reached is reported as an error.
constexpr int kLaunchAttempts = 4;
inline std::string sm_name(int32_t sm) { return sm < 0 ? std::string("any free SM") : "SM " + std::to_string(sm); }

}  // namespace memtopo::cuda
