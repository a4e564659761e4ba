// The fine-grained P-chase: the index and latency of every timed load, recorded in passes.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "chase_common.cuh"

namespace memtopo::cuda::detail {

struct FineRun {
  // Records job.record loads in passes of at most spp: each pass warms up again, skips the
  // loads earlier passes recorded (untimed), records the next chunk in shared memory and
  // copies it out (.cg stores, L2 only) before the next pass re-establishes the cache state.
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_index,
                             uint32_t* s_latency, uint32_t spp) {
    for (uint64_t done = 0; done < job.record; done += spp) {
      const uint32_t n = uint32_t(job.record - done < spp ? job.record - done : spp);
      pass<S>(job, r, s_index, s_latency, spp, done, n);
    }
  }

  // Warm-up, skip and record in ONE loop of identical timed steps (untimed steps write to a
  // scratch slot), so the recorded steps run exactly the code the warm-up ran.
  template <uint32_t S>
  __device__ static void pass(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_index, uint32_t* s_latency,
                              uint32_t spp, uint64_t skip, uint32_t n) {
    const unsigned long long index_base = __cvta_generic_to_shared(s_index);
    const uint64_t record_from = job.warmup + skip;
    const uint64_t total = record_from + n;
    uint32_t j = job.start;
    uint32_t first = j;
    for (uint64_t k = 0; k < total; ++k) {
      const bool recording = k >= record_from;
      const uint32_t slot = recording ? uint32_t(k - record_from) : spp;
      if (k == record_from) first = j;
      uint32_t cycles;
      j = timed_step<S>(r, j, index_base + 4ull * slot, cycles);
      s_latency[slot] = cycles;
    }
    // The store of step k holds the element loaded at step k+1.
    for (uint32_t i = 0; i < n; ++i) {
      if (job.out_index) __stcg(job.out_index + skip + i, i == 0 ? first : s_index[i - 1]);
      __stcg(job.out_latency + skip + i, s_latency[i]);
    }
  }
};

template <bool Wide>
__global__ void fine_kernel(const DeviceChaseJob* jobs, ClaimTables t, uint32_t spp,
                            const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // index [spp+1], latency [spp+1], then the array
  uint32_t* arrays = dyn + 2 * (spp + 1);
  DeviceChaseJob job;
  if (!start_job(jobs, t, arrays, &job)) return;
  const Resolved r = resolve<Wide>(job.src, arrays, bank);
  dispatch<FineRun, Wide>(job.space, job, r, dyn, dyn + spp + 1, spp);
}

}  // namespace memtopo::cuda::detail
