// The sequence chase: jobs of orders 1, 2, ... one after another, each a thread of its block.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "chase_common.cuh"

namespace memtopo::cuda::detail {

struct PhaseRun {
  // Timed phases record into the shared buffer and flush it (with .cg stores) whenever it
  // is full and at the end; a phase of more than `rec` timed loads therefore has a few
  // untimed stores between its chunks.
  template <uint32_t S>
  __device__ static void run(const DevicePhase& ph, const Resolved& r, uint32_t* s_index, uint32_t* s_latency,
                             uint32_t rec) {
    uint32_t j = ph.start;
    for (uint64_t k = 0; k < ph.warmup; ++k) j = load<S>(r, j);
    if (!ph.out_latency) {
      for (uint64_t k = 0; k < ph.steps; ++k) j = load<S>(r, j);
      // A use of the last index that cannot be folded away: without it ptxas drops the whole
      // chain (every load only feeds the next, and the last feeds nothing), and an untimed
      // phase loads nothing. No index reaches 0xffffffff; s_index is scratch here.
      if (j == 0xffffffffu) s_index[0] = j;
      return;
    }
    const unsigned long long index_base = __cvta_generic_to_shared(s_index);
    uint64_t done = 0;
    uint32_t filled = 0;
    uint32_t first = j;
    auto flush = [&]() {
      for (uint32_t i = 0; i < filled; ++i) {
        if (ph.out_index) __stcg(ph.out_index + done + i, i == 0 ? first : s_index[i - 1]);
        __stcg(ph.out_latency + done + i, s_latency[i]);
      }
      done += filled;
      filled = 0;
      first = j;
    };
    for (uint64_t k = 0; k < ph.steps; ++k) {
      if (filled == rec) flush();
      uint32_t cycles;
      j = timed_step<S>(r, j, index_base + 4ull * filled, cycles);
      s_latency[filled] = cycles;
      ++filled;
    }
    flush();
  }
};

__device__ bool wait_phase(const ClaimTables& t, uint32_t p, unsigned long long limit) {
  const unsigned long long t0 = device::clock_now();
  while (*reinterpret_cast<volatile uint32_t*>(t.counters + 2) != p) {
    if (*reinterpret_cast<volatile uint32_t*>(t.counters + 3) != kAbortNone) return false;
    if (device::clock_now() - t0 > limit) {
      atomicCAS(t.counters + 3, kAbortNone, kAbortPhaseTimeout);
      return false;
    }
    __nanosleep(1000);  // keep the polling traffic on L2 low
  }
  return true;
}

template <bool Wide>
__global__ void sequence_kernel(const DevicePhase* phases, uint32_t phase_count, ClaimTables t, uint32_t rec, unsigned long long phase_wait, const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // index [rec+1], latency [rec+1], then the arrays
  __shared__ int s_block;
  __shared__ int s_ok;
  if (threadIdx.x == 0) {
    uint32_t sm;
    const int b = claim(t, &sm);
    if (b >= 0) __stcg(t.job_sm + b, int32_t(sm));
    s_block = b;
  }
  __syncthreads();
  const int b = s_block;
  if (b < 0) return;
  uint32_t* s_index = dyn;
  uint32_t* s_latency = dyn + rec + 1;
  uint32_t* arrays = dyn + 2 * (rec + 1);
  for (uint32_t p = 0; p < phase_count; ++p) {  // arrays used twice are copied twice: harmless
    const DevicePhase ph = load_cg(phases + p);
    if (ph.space != kSpaceShared) continue;
    for (uint64_t i = threadIdx.x; i < ph.src.elems; i += blockDim.x)
      arrays[ph.src.shared_offset + i] = __ldcg(ph.src.global + i);
  }
  if (threadIdx.x == 0) {
    s_ok = wait_for_claims(t);
    if (!s_ok) atomicCAS(t.counters + 3, kAbortNone, kAbortClaimTimeout);
  }
  __syncthreads();
  if (!s_ok) return;
  for (uint32_t p = 0; p < phase_count; ++p) {
    const DevicePhase ph = load_cg(phases + p);
    if (ph.block != uint32_t(b)) continue;  // uniform across the block
    if (threadIdx.x == 0) s_ok = wait_phase(t, p, phase_wait);
    __syncthreads();
    if (!s_ok) return;
    if (threadIdx.x == ph.lane) {
      const Resolved r = resolve<Wide>(ph.src, arrays, bank);
      dispatch<PhaseRun, Wide>(ph.space, ph, r, s_index, s_latency, rec);
    }
    __syncthreads();
    // The next phase may start: a release store, which orders this phase's sample writes
    // before it. Not __threadfence(): its acquire half invalidates the SM's L1, and the next
    // phase of the same block would find the lines this one loaded gone.
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(t.counters + 2), "r"(p + 1) : "memory");
  }
}

}  // namespace memtopo::cuda::detail
