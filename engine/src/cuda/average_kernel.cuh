// The plain P-chase: one clock pair around all timed loads (MT_RECORD_TOTAL), by index or by pointer.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "chase_common.cuh"

namespace memtopo::cuda::detail {

struct AverageRun {
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, unsigned long long scratch) {
    uint32_t j = job.start;
    for (uint64_t k = 0; k < job.warmup; ++k) j = load<S>(r, j);
    const unsigned long long t0 = device::clock_after(j, scratch);
#pragma unroll 4
    for (uint64_t k = 0; k < job.record; ++k) j = load<S>(r, j);
    const unsigned long long t1 = device::clock_after(j, scratch);
    __stcg(job.out_cycles, t1 - t0);
    __stcg(job.out_last, j);
  }
};

// A pointer chase (MT_PATTERN_POINTERS): each loaded value is the next load's address, so
// nothing but the load lies between two loads and the per-load time is the load-to-use
// latency. Unrolled by 32 so that loop control issues while loads are in flight.
struct PointerRun {
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, unsigned long long scratch) {
    using device::Path;
    if constexpr (S == kSpaceGlobalCa || S == kSpaceGlobalCg || S == kSpaceReadonly) {
      unsigned long long p = reinterpret_cast<unsigned long long>(r.global + job.start);
      for (uint64_t k = 0; k < job.warmup; ++k) p = device::follow<Path(S)>(p);
      const unsigned long long t0 = device::clock_after(uint32_t(p), scratch);
#pragma unroll 32
      for (uint64_t k = 0; k < job.record; ++k) p = device::follow<Path(S)>(p);
      const unsigned long long t1 = device::clock_after(uint32_t(p), scratch);
      __stcg(job.out_cycles, t1 - t0);
      __stcg(job.out_last, uint32_t(p));
    } else if constexpr (S == kSpaceConstant || S == kSpaceConstantWide || S == kSpaceShared) {
      constexpr Path P = S == kSpaceShared ? Path::Shared : Path::Constant;
      uint32_t p = uint32_t((S == kSpaceShared ? r.shared_base : r.const_base) + 4ull * job.start);
      for (uint64_t k = 0; k < job.warmup; ++k) p = device::follow32<P>(p);
      const unsigned long long t0 = device::clock_after(p, scratch);
#pragma unroll 32
      for (uint64_t k = 0; k < job.record; ++k) p = device::follow32<P>(p);
      const unsigned long long t1 = device::clock_after(p, scratch);
      __stcg(job.out_cycles, t1 - t0);
      __stcg(job.out_last, p);
    } else {
      AverageRun::run<S>(job, r, scratch);  // a texture fetch takes the index as its coordinate
    }
  }
};

template <bool Wide>
__global__ void average_kernel(const DeviceChaseJob* jobs, ClaimTables t, const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // scratch word [2], then the array
  uint32_t* arrays = dyn + 2;
  DeviceChaseJob job;
  if (!start_job(jobs, t, arrays, &job)) return;
  const Resolved r = resolve<Wide>(job.src, arrays, bank);
  const auto scratch = static_cast<unsigned long long>(__cvta_generic_to_shared(dyn));
  if (job.pointers)
    dispatch<PointerRun, Wide>(job.space, job, r, scratch);
  else
    dispatch<AverageRun, Wide>(job.space, job, r, scratch);
}

}  // namespace memtopo::cuda::detail
