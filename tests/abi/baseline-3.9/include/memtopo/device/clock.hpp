// memtopo device toolkit: clock reads for kernels that time loads. The engine's own kernels
// use the same reads, so a probe's kernel times loads exactly as memtopo does.
#pragma once

#include "memtopo/device/portable.hpp"

namespace memtopo::device {

// The SM's cycle counter. On the GPU `volatile` and the memory clobber keep it in place
// relative to the loads and stores around it; on the simulated GPU it is the thread's clock.
MEMTOPO_INLINE unsigned long long clock_now() {
#if defined(__CUDA_ARCH__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
#else
  return detail::sim().clock(detail::sim().self);
#endif
}

// Stores `value` to the shared-memory word at `slot` (a shared-space address, from
// shared_address) and then reads the clock: the store needs the value, so the clock read waits
// for whatever load produced it. A clock read alone would not wait. The store is volatile:
// after a plain st.shared ptxas may schedule the clock read first where the load's address was
// known early (independent loads timed one after another then read an L2 hit as a few cycles:
// docs/results/log/h200.md, "L1: eviction sets"), never after a volatile one. (On the simulated GPU a thread waits for its loads anyway.)
MEMTOPO_INLINE unsigned long long clock_after(uint32_t value, unsigned long long slot) {
#if defined(__CUDA_ARCH__)
  unsigned long long t;
  asm volatile("st.volatile.shared.u32 [%1], %2;\n\tmov.u64 %0, %%clock64;" : "=l"(t) : "l"(slot), "r"(value) : "memory");
  return t;
#else
  (void)value;
  (void)slot;
  return detail::sim().clock(detail::sim().self);
#endif
}

// Nanoseconds of the GPU's global timer (the same on every SM; about 1 us resolution on
// some parts, so time spans of many microseconds with it).
MEMTOPO_INLINE unsigned long long globaltimer_ns() {
#if defined(__CUDA_ARCH__)
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
  return t;
#else
  return detail::sim().globaltimer_ns(detail::sim().self);
#endif
}

// Cycles of work a kernel does that the simulated GPU would not otherwise see (an instruction
// sequence whose cost a probe models); nothing on the GPU, where the work itself takes them.
MEMTOPO_INLINE void spend_cycles(uint64_t cycles) {
#if defined(__CUDA_ARCH__)
  (void)cycles;
#else
  detail::sim().spend(detail::sim().self, cycles);
#endif
}

}  // namespace memtopo::device
