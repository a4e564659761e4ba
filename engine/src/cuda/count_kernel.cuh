// The counting kernel: counted chases, random loads at a rate (streams, gaps) or with a pump.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "count_common.cuh"
#include "pump.cuh"

namespace memtopo::cuda::detail {

// Stream k's share of n loads split over `streams`.
__device__ uint64_t share(uint64_t n, uint32_t streams, uint32_t k) { return n / streams + (k < n % streams ? 1 : 0); }

template <class Places>
struct CountOne {
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_steps, unsigned long long scratch) {
    Tally y;
    CountRun<Places>::template run<S>(job, r, s_steps, scratch, Places(job, 0), job.warmup, job.record,
                                      job.count_capacity, &y);
    write_tally(job, y, s_steps);
  }
};

// Shared words of the chain runs, declared once in the kernel: static shared memory declared in
// each instantiation would add up. With the slow steps it must fit the smallest shared-memory
// size a carveout offers (8 KiB on Hopper with the 1 KiB the driver reserves per block), or
// carveout 0 leaves the L1 less than it can.
struct ChainShared {
  Tally* sum;
  uint32_t* scratch;  // one word per warp: its lanes' timing stores may race, harmlessly
};

// Several streams: lane 0 of warps 0 .. streams-1, each running `body` (w, its timing slot,
// its tally); stream 0 keeps its slow steps. Tallies are summed with shared atomics.
template <class Body>
__device__ void sum_chains(const DeviceChaseJob& job, ClaimTables t, uint32_t* s_steps, ChainShared sh, Body body) {
  const uint32_t w = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    wait_for_claims(t);
    *sh.sum = Tally{};
    sh.sum->first = ~0ull;
  }
  __syncthreads();
  if (w < job.streams && lane == 0) {
    const unsigned long long slot = static_cast<unsigned long long>(__cvta_generic_to_shared(sh.scratch + w));
    Tally y;
    body(w, slot, y);
    atomicAdd(&sh.sum->slow, y.slow);
    atomicAdd(&sh.sum->cycles, y.cycles);
    atomicAdd(&sh.sum->outliers, y.outliers);
    atomicMin(&sh.sum->first, y.first);
    atomicMax(&sh.sum->last, y.last);
    if (w == 0) sh.sum->kept = y.kept;
  }
  __syncthreads();
  if (threadIdx.x == 0) write_tally(job, *sh.sum, s_steps);
}

// One chain per stream: stream w's share of the loads, random draws of its own generator or
// along the array from `start`.
template <class Places>
__device__ void run_streams(const DeviceChaseJob& job, const Resolved& r, ClaimTables t, uint32_t* s_steps) {
  __shared__ Tally s_sum;
  __shared__ uint32_t s_scratch[32];
  sum_chains(job, t, s_steps, ChainShared{&s_sum, s_scratch}, [&](uint32_t w, unsigned long long slot, Tally& y) {
    const uint64_t warm = share(job.warmup, job.streams, w), rec = share(job.record, job.streams, w);
    const uint32_t cap = w == 0 ? job.count_capacity : 0;
    using Run = CountRun<Places>;
    const Places places(job, w);
    switch (job.space) {  // global paths and shared memory only (checked on the host)
      case kSpaceGlobalCa: Run::template run<kSpaceGlobalCa>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      case kSpaceGlobalCg: Run::template run<kSpaceGlobalCg>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      case kSpaceShared: Run::template run<kSpaceShared>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      default: Run::template run<kSpaceReadonly>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
    }
  });
}

template <bool Wide>
__global__ void __launch_bounds__(1024) count_kernel(const DeviceChaseJob* jobs, ClaimTables t, const __grid_constant__ BankOf<Wide> bank) {
  // scratch word, steps [kCountSteps], spare, then the array (16-byte aligned: vector loads)
  extern __shared__ __align__(16) uint32_t dyn[];
  uint32_t* arrays = dyn + kCountSteps + 2;
  DeviceChaseJob job;
  if (claim_job(jobs, t, arrays, &job) < 0) return;
  const Resolved r = resolve<Wide>(job.src, arrays, bank);
  const unsigned long long scratch = static_cast<unsigned long long>(__cvta_generic_to_shared(dyn));
  if (job.pump_warps > 0) {
    run_pumped(job, r, t, dyn + 1, scratch);
    return;
  }
  if (job.streams > 1) {
    if (job.random_stride == 0) run_streams<FollowArray>(job, r, t, dyn + 1);
    else run_streams<RandomDraws>(job, r, t, dyn + 1);
    return;
  }
  if (threadIdx.x != 0) return;
  wait_for_claims(t);
  if (job.random_stride == 0) {
    dispatch<CountOne<FollowArray>, Wide>(job.space, job, r, dyn + 1, scratch);
    return;
  }
  using One = CountOne<RandomDraws>;
  switch (job.space) {  // global paths only (checked on the host)
    case kSpaceGlobalCa: One::run<kSpaceGlobalCa>(job, r, dyn + 1, scratch); break;
    case kSpaceGlobalCg: One::run<kSpaceGlobalCg>(job, r, dyn + 1, scratch); break;
    default: One::run<kSpaceReadonly>(job, r, dyn + 1, scratch); break;
  }
}

}  // namespace memtopo::cuda::detail
