// Building blocks of the engine's chase kernels (included by kernels.cu only, after the
// __constant__ chase buffer c_chase): the addresses of one array in each memory path, the
// timed and untimed step, dispatch on the run-time path, and SM claiming.
#pragma once

#include <type_traits>

#include "kernels.cuh"
#include "memtopo/device/clock.hpp"
#include "memtopo/device/load.hpp"
#include "memtopo/device/thread.hpp"

namespace memtopo::cuda::detail {

template <class T>
__device__ __forceinline__ T load_cg(const T* p) {
  static_assert(sizeof(T) % 8 == 0, "descriptors are read in 8-byte words");
  T v;
  const unsigned long long* src = reinterpret_cast<const unsigned long long*>(p);
  unsigned long long* dst = reinterpret_cast<unsigned long long*>(&v);
#pragma unroll
  for (unsigned i = 0; i < sizeof(T) / 8; ++i) dst[i] = __ldcg(src + i);
  return v;
}

// Addresses of one chase's array in each memory space, resolved once per block.
struct Resolved {
  const uint32_t* global;
  unsigned long long texture;
  unsigned long long const_base;   // const-space address of element 0
  unsigned long long shared_base;  // shared-space address of element 0
  unsigned long long param_base;   // kSpaceConstantWide: param-space address of element `split`
  uint32_t split;                  // kSpaceConstantWide: elements in the constant buffer
};

// The kernel parameter of the variants without a ParamBank (kept tiny: launches copy it).
struct NoBank {
  uint32_t unused;
};
template <bool Wide>
using BankOf = std::conditional_t<Wide, ParamBank, NoBank>;

template <bool Wide>
__device__ Resolved resolve(const ChaseSource& s, uint32_t* shared_arrays, const BankOf<Wide>& bank) {
  Resolved r;
  r.global = s.global;
  r.texture = s.texture;
  asm("cvta.to.const.u64 %0, %1;" : "=l"(r.const_base) : "l"(c_chase + s.constant_offset));
  r.shared_base = __cvta_generic_to_shared(shared_arrays + s.shared_offset);
  r.param_base = 0;
  r.split = s.constant_split;
  // &bank is generic (a __grid_constant__ parameter); ld.param needs its param-space address.
  if constexpr (Wide) asm("cvta.to.param.u64 %0, %1;" : "=l"(r.param_base) : "l"(&bank.next[0]));
  return r;
}

// The address of element j in each memory path, then the toolkit's timed or untimed load
// (memtopo/device/load.hpp). A wide constant array picks its bank before the clock starts.
template <uint32_t S, uint32_t W = 4>
__device__ __forceinline__ uint32_t timed_step(const Resolved& r, uint32_t j, unsigned long long slot,
                                               uint32_t& cycles) {
  using device::Path;
  using device::timed_load;
  if constexpr (W != 4) {  // vector loads: global paths and shared memory (checked on the host)
    if constexpr (S == kSpaceShared) return timed_load<Path::Shared, W>(r.shared_base + 4ull * j, j, slot, cycles);
    else return timed_load<Path(S), W>(reinterpret_cast<unsigned long long>(r.global + j), j, slot, cycles);
  } else if constexpr (S == kSpaceGlobalCa || S == kSpaceGlobalCg || S == kSpaceReadonly) {
    return timed_load<Path(S)>(reinterpret_cast<unsigned long long>(r.global + j), j, slot, cycles);
  } else if constexpr (S == kSpaceTexture) {
    return timed_load<Path::Texture>(r.texture, j, slot, cycles);
  } else if constexpr (S == kSpaceConstant) {
    return timed_load<Path::Constant>(r.const_base + 4ull * j, j, slot, cycles);
  } else if constexpr (S == kSpaceConstantWide) {
    if (j < r.split) return timed_load<Path::Constant>(r.const_base + 4ull * j, j, slot, cycles);
    return timed_load<Path::Param>(r.param_base + 4ull * (j - r.split), j, slot, cycles);
  } else if constexpr (S == kSpaceShared) {
    return timed_load<Path::Shared>(r.shared_base + 4ull * j, j, slot, cycles);
  } else {
    return timed_load<Path::Register>(0ull, j, slot, cycles);
  }
}

template <uint32_t S>
__device__ __forceinline__ uint32_t load(const Resolved& r, uint32_t j) {
  using device::Path;
  if constexpr (S == kSpaceGlobalCa || S == kSpaceGlobalCg || S == kSpaceReadonly) {
    return device::load<Path(S)>(reinterpret_cast<unsigned long long>(r.global + j), j);
  } else if constexpr (S == kSpaceTexture) {
    return device::load<Path::Texture>(r.texture, j);
  } else if constexpr (S == kSpaceConstant) {
    return device::load<Path::Constant>(r.const_base + 4ull * j, j);
  } else if constexpr (S == kSpaceConstantWide) {
    if (j < r.split) return device::load<Path::Constant>(r.const_base + 4ull * j, j);
    return device::load<Path::Param>(r.param_base + 4ull * (j - r.split), j);
  } else if constexpr (S == kSpaceShared) {
    return device::load<Path::Shared>(r.shared_base + 4ull * j, j);
  } else {
    return device::load<Path::Register>(0ull, j);
  }
}

// Calls F::run<S>(args...) for the run-time space s (constant arrays that may continue in the
// kernel-parameter bank in the Wide variants).
template <class F, bool Wide, class... A>
__device__ __forceinline__ void dispatch(uint32_t s, A&&... a) {
  switch (s) {
    case kSpaceGlobalCa: F::template run<kSpaceGlobalCa>(a...); break;
    case kSpaceGlobalCg: F::template run<kSpaceGlobalCg>(a...); break;
    case kSpaceReadonly: F::template run<kSpaceReadonly>(a...); break;
    case kSpaceTexture: F::template run<kSpaceTexture>(a...); break;
    case kSpaceConstant: F::template run<Wide ? kSpaceConstantWide : kSpaceConstant>(a...); break;
    case kSpaceShared: F::template run<kSpaceShared>(a...); break;
    default: F::template run<kSpaceOverhead>(a...); break;
  }
}

// ------------------------------------------------------------------ claiming SMs

// Returns the job (or logical block) this block runs, or -1; *sm gets the block's SM.
__device__ int claim(const ClaimTables& t, uint32_t* sm) {
  const uint32_t s = device::smid();
  *sm = s;
  if (s >= t.sm_slots) return -1;
  const int32_t pinned = __ldcg(t.sm_to_job + s);
  if (pinned >= 0) return atomicCAS(t.sm_owner + s, 0, 1) == 0 ? pinned : -1;
  if (t.unpinned_count == 0) return -1;
  if (atomicCAS(t.sm_owner + s, 0, 1) != 0) return -1;  // another block runs on this SM
  const uint32_t k = atomicAdd(t.counters + 0, 1u);
  return k < t.unpinned_count ? __ldcg(t.unpinned + k) : -1;
}

// Counts this block in and waits (bounded) until every job is claimed, so that jobs start
// together and late blocks have left before timing. False on time-out.
__device__ bool wait_for_claims(const ClaimTables& t) {
  atomicAdd(t.counters + 1, 1u);
  const unsigned long long t0 = device::clock_now();
  while (*reinterpret_cast<volatile uint32_t*>(t.counters + 1) < t.job_count) {
    if (*reinterpret_cast<volatile uint32_t*>(t.counters + 3) != kAbortNone) return false;
    if (device::clock_now() - t0 > t.wait_cycles) return false;
    __nanosleep(256);
  }
  return true;
}

// Claims this block's job and copies an array that lives in shared memory into `arrays`
// (every thread helps). The job's index in every thread of the block, or -1.
__device__ int claim_job(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t* arrays, DeviceChaseJob* job) {
  __shared__ int s_job;
  if (threadIdx.x == 0) {
    uint32_t sm;
    const int j = claim(t, &sm);
    if (j >= 0) __stcg(t.job_sm + j, int32_t(sm));
    s_job = j;
  }
  __syncthreads();
  const int ji = s_job;
  if (ji < 0) return -1;
  *job = load_cg(jobs + ji);
  if (job->space == kSpaceShared) {
    uint32_t* a = arrays + job->src.shared_offset;
    // A pointer chase holds each next element's shared-space address instead of its index.
    const uint32_t base = job->pointers ? uint32_t(__cvta_generic_to_shared(a)) : 0u;
    const uint32_t scale = job->pointers ? 4u : 1u;
    for (uint64_t i = threadIdx.x; i < job->src.elems; i += blockDim.x) a[i] = base + scale * __ldcg(job->src.global + i);
  }
  __syncthreads();
  return ji;
}

// claim_job, then waits for the other jobs to be claimed. True in thread 0 of a block that
// got a job, which then runs it; every other thread returns.
__device__ bool start_job(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t* arrays, DeviceChaseJob* job) {
  if (claim_job(jobs, t, arrays, job) < 0 || threadIdx.x != 0) return false;
  wait_for_claims(t);  // on time-out the job still runs; the host retries unclaimed jobs
  return true;
}

}  // namespace memtopo::cuda::detail
