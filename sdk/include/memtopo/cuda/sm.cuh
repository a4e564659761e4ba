// memtopo device toolkit: where a block runs (SM number, cluster rank) and SM pinning by
// claiming: launch more blocks than SMs, and let the first block that lands on a wanted SM
// claim it while every other block there leaves.
#pragma once

#include <cstdint>

namespace memtopo::device {

// The SM this thread runs on (0 .. nsmid() - 1; may exceed the SM count on some parts).
__device__ __forceinline__ uint32_t smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// One more than the largest %smid of the device.
__device__ __forceinline__ uint32_t nsmid() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
}

// Claims the SM this block runs on: true for exactly one block per SM. `owner` has one
// zeroed int per SM slot (nsmid() entries); call from one thread of the block.
__device__ __forceinline__ bool claim_sm(int32_t* owner, uint32_t slots, uint32_t* sm_out = nullptr) {
  const uint32_t s = smid();
  if (sm_out) *sm_out = s;
  if (s >= slots) return false;
  return atomicCAS(owner + s, 0, 1) == 0;
}

// Thread-block clusters (compute capability 9.0): this block's rank in its cluster and the
// cluster's size. Compiled for an older architecture, a block is a cluster of one.
__device__ __forceinline__ uint32_t cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#else
  return 0;
#endif
}
__device__ __forceinline__ uint32_t cluster_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
#else
  return 1;
#endif
}

}  // namespace memtopo::device
