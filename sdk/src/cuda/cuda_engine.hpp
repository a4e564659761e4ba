// The measurement primitives of the CUDA backend (the mt_backend functions of measure.h):
// request checks, array placement, SM claiming tables, recording passes, retries.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "device_memory.hpp"
#include "engine/job_checks.hpp"
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

  // Each throws memtopo::Error with "<what>: <reason>"; the C wrappers turn that into the
  // error return of measure.h.
  void fine_chase(mt_chase_job* jobs, size_t count);
  void average_chase(mt_chase_job* jobs, size_t count);
  void count_chase(mt_count_job* jobs, size_t count);
  void random_count(mt_random_count_job* jobs, size_t count);
  void paced_count(mt_paced_count_job* jobs, size_t count);
  void pumped_count(mt_pumped_count_job* jobs, size_t count);
  // Pump warps one pumped job may have: the block's other 31 warps.
  static constexpr uint32_t kPumpWarpsMax = 31;
  void sequence_chase(mt_sequence_job& job);
  double timing_overhead();

  std::mutex& mutex() { return mutex_; }
  int ordinal() const { return ordinal_; }

 private:
  template <class Desc>
  ClaimTables upload_launch(const std::vector<int32_t>& pins, const std::vector<Desc>& descs, const Desc** device_descs);
  std::vector<int32_t> read_job_sms(const ClaimTables& t, size_t count);
  uint32_t read_abort(const ClaimTables& t);
  uint32_t grid_blocks() const { return 4 * sm_slots_; }
  uint32_t max_dynamic_shared() const;
  enum class Mode { Fine, Average, Count };
  // Count mode: counts[i] is the count job whose chase is jobs[i]; with `random`, its loads
  // go where random[i] says, at rates[i] (paced and pumped counts), spans[i] gets its span
  // and pumped[i] its pump loads.
  void run_chase_jobs(mt_chase_job* jobs, size_t count, Mode mode, mt_count_job* counts = nullptr,
                      const mt_random_count_job* random = nullptr, const engine::RandomRate* rates = nullptr,
                      uint64_t* spans = nullptr, uint64_t* pumped = nullptr);

  // Paced and pumped counts, checked: run them, and give the outputs back to the jobs.
  template <class Job>
  void run_rated(Job* jobs, size_t count, engine::RatedJobs& r);

  int ordinal_;
  const mt_device_info& info_;
  DeviceLimits limits_;
  uint32_t sm_slots_ = 0;           // max(sm_count, %nsmid): size of the per-SM tables
  unsigned long long wait_cycles_ = 0;  // bounded waits inside kernels
  DevicePool pool_;
  void* control_ = nullptr;         // claim tables and job descriptors of one launch
  uint64_t control_bytes_ = 0;
  std::optional<double> overhead_;  // timing_overhead, measured once
  std::mutex mutex_;
};

}  // namespace memtopo::cuda
