// memtopo device toolkit: clock reads for kernels that time loads. Header-only; the engine's
// own kernels use the same functions, so a probe's kernel times loads exactly as memtopo does.
#pragma once

#include <cstdint>

namespace memtopo::device {

// The SM's cycle counter. `volatile` and the memory clobber keep it in place relative to the
// loads and stores around it.
__device__ __forceinline__ unsigned long long clock_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// Stores `value` to the shared-memory word at `slot` (a shared-space address, from
// __cvta_generic_to_shared) and then reads the clock: the store needs the value, so the
// clock read waits for whatever load produced it. A clock read alone would not wait.
__device__ __forceinline__ unsigned long long clock_after(uint32_t value, unsigned long long slot) {
  unsigned long long t;
  asm volatile("st.shared.u32 [%1], %2;\n\tmov.u64 %0, %%clock64;" : "=l"(t) : "l"(slot), "r"(value) : "memory");
  return t;
}

// Nanoseconds of the GPU's global timer (the same on every SM; about 1 us resolution on
// some parts, so time spans of many microseconds with it).
__device__ __forceinline__ unsigned long long globaltimer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
}

}  // namespace memtopo::device
