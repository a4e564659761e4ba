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

// The places of chain c: random draws from stream warp + 32 x lane, or the array from the
// chain's own start.
template <class Places>
__device__ Places chain_places(const DeviceChaseJob& job, uint32_t w, uint32_t lane, uint32_t c) {
  if constexpr (std::is_same_v<Places, FollowArray>) return FollowArray(job, 0, c);
  else return RandomDraws(job, w + 32 * lane);
}

// Shared words of the chain runs, declared once in the kernel: static shared memory declared in
// each instantiation would add up. With the slow steps it must fit the smallest shared-memory
// size a carveout offers (8 KiB on Hopper with the 1 KiB the driver reserves per block), or
// carveout 0 leaves the L1 less than it can.
struct ChainShared {
  Tally* sum;
  uint32_t* scratch;  // one word per warp: its lanes' timing stores may race, harmlessly
};

// Several chains: lanes 0 .. stream_lanes-1 of warps 0 .. streams-1, each running `body`
// (w, lane, its timing slot, its tally; true for the lane holding chain 0, which keeps its
// slow steps). Tallies are summed with shared atomics.
template <class Body>
__device__ void sum_chains(const DeviceChaseJob& job, ClaimTables t, uint32_t* s_steps, ChainShared sh, Body body) {
  const uint32_t w = threadIdx.x / 32, lane = threadIdx.x % 32, lanes = job.stream_lanes ? job.stream_lanes : 1;
  if (threadIdx.x == 0) {
    wait_for_claims(t);
    *sh.sum = Tally{};
    sh.sum->first = ~0ull;
  }
  __syncthreads();
  if (w < job.streams && lane < lanes) {
    const unsigned long long slot = static_cast<unsigned long long>(__cvta_generic_to_shared(sh.scratch + w));
    Tally y;
    const bool first = body(w, lane, slot, y);
    atomicAdd(&sh.sum->slow, y.slow);
    atomicAdd(&sh.sum->cycles, y.cycles);
    atomicAdd(&sh.sum->outliers, y.outliers);
    atomicMin(&sh.sum->first, y.first);
    atomicMax(&sh.sum->last, y.last);
    if (first) sh.sum->kept = y.kept;
  }
  __syncthreads();
  if (threadIdx.x == 0) write_tally(job, *sh.sum, s_steps);
}

// One chain per lane: chain c = warp x lanes + lane, its share of the loads, `W`-byte loads.
template <class Places, uint32_t W>
__device__ void run_chains(const DeviceChaseJob& job, const Resolved& r, ClaimTables t, uint32_t* s_steps,
                           ChainShared sh) {
  sum_chains(job, t, s_steps, sh, [&](uint32_t w, uint32_t lane, unsigned long long slot, Tally& y) {
    const uint32_t lanes = job.stream_lanes ? job.stream_lanes : 1, chains = job.streams * lanes, c = w * lanes + lane;
    const uint64_t warm = share(job.warmup, chains, c), rec = share(job.record, chains, c);
    const uint32_t cap = c == 0 ? job.count_capacity : 0;
    using Run = CountRun<Places>;
    const Places places = chain_places<Places>(job, w, lane, c);
    switch (job.space) {  // global paths and shared memory only (checked on the host)
      case kSpaceGlobalCa: Run::template run<kSpaceGlobalCa, W>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      case kSpaceGlobalCg: Run::template run<kSpaceGlobalCg, W>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      case kSpaceShared: Run::template run<kSpaceShared, W>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      default: Run::template run<kSpaceReadonly, W>(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
    }
    return c == 0;
  });
}

// K chains per lane in lockstep (mt_job::lane_chains), random loads on a global path: lane
// chain i of thread chain t draws from stream warp + 32 x lane + 1024 x i; equal shares.
template <uint32_t K>
__device__ void run_lane_chains(const DeviceChaseJob& job, const Resolved& r, ClaimTables t, uint32_t* s_steps,
                                ChainShared sh) {
  sum_chains(job, t, s_steps, sh, [&](uint32_t w, uint32_t lane, unsigned long long slot, Tally& y) {
    const uint32_t lanes = job.stream_lanes ? job.stream_lanes : 1, chains = job.streams * lanes * K;
    const uint64_t warm = job.warmup / chains, rec = job.record / chains;
    const bool first = w == 0 && lane == 0;
    RandomDraws places[K] = {};
#pragma unroll
    for (uint32_t i = 0; i < K; ++i) places[i] = RandomDraws(job, w + 32 * lane + 1024 * i);
    const uint32_t cap = first ? job.count_capacity : 0;
    switch (job.space) {  // global paths only (checked on the host)
      case kSpaceGlobalCa: LockstepRun<kSpaceGlobalCa, K>::run(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      case kSpaceGlobalCg: LockstepRun<kSpaceGlobalCg, K>::run(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
      default: LockstepRun<kSpaceReadonly, K>::run(job, r, s_steps, slot, places, warm, rec, cap, &y); break;
    }
    return first;
  });
}

// Vector loads (mt_job::load_bytes) run as chains, one instantiation per width; several chains
// per lane in lockstep, one per count.
template <class Places>
__device__ void run_chains_of(const DeviceChaseJob& job, const Resolved& r, ClaimTables t, uint32_t* s_steps) {
  __shared__ Tally s_sum;
  __shared__ uint32_t s_scratch[32];
  const ChainShared sh{&s_sum, s_scratch};
  if constexpr (std::is_same_v<Places, RandomDraws>) {
    if (job.lane_chains == 8) return run_lane_chains<8>(job, r, t, s_steps, sh);
    if (job.lane_chains == 4) return run_lane_chains<4>(job, r, t, s_steps, sh);
    if (job.lane_chains == 2) return run_lane_chains<2>(job, r, t, s_steps, sh);
  }
  if (job.load_bytes == 16) run_chains<Places, 16>(job, r, t, s_steps, sh);
  else if (job.load_bytes == 8) run_chains<Places, 8>(job, r, t, s_steps, sh);
  else run_chains<Places, 4>(job, r, t, s_steps, sh);
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
  if (job.streams > 1 || job.stream_lanes > 1 || job.load_bytes > 4 || job.lane_chains > 1) {
    if (job.random_stride == 0) run_chains_of<FollowArray>(job, r, t, dyn + 1);
    else run_chains_of<RandomDraws>(job, r, t, dyn + 1);
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
