// memtopo device toolkit: uses of a loaded value that the compiler cannot drop, so that a
// measured load is never optimised away.
#pragma once

#include "memtopo/device/portable.hpp"

namespace memtopo::device {

// Keeps the C++ compiler from dropping the computation of `value`. It emits no instruction,
// so ptxas may still drop a load whose value nothing else reads (a chase whose last index
// feeds nothing loads nothing): where the loads must happen, use keep_if.
template <class T>
MEMTOPO_INLINE void keep(T value) {
#if defined(__CUDA_ARCH__)
  asm volatile("" ::"r"(static_cast<uint32_t>(value)));
#else
  (void)value;
#endif
}

// Writes the value to `sink` only when `flag` (a run-time 0 the compiler cannot see through,
// e.g. a kernel parameter) is set: the load must complete before the kernel ends, and no
// memory traffic happens while timing.
template <class T>
MEMTOPO_INLINE void keep_if(T value, T* sink, uint32_t flag) {
  if (flag) *sink = value;
}

}  // namespace memtopo::device
