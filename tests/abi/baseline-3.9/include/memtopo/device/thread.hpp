// memtopo device toolkit: where a thread runs (its indices, SM, lane and warp), SM pinning by
// claiming, and barriers. Each call works on the GPU and on the simulated GPU.
#pragma once

#include "memtopo/device/portable.hpp"

namespace memtopo::device {

MEMTOPO_INLINE Dim3 thread_idx() {
#if defined(__CUDA_ARCH__)
  return {threadIdx.x, threadIdx.y, threadIdx.z};
#else
  const auto p = detail::sim_place();
  return {p.thread.x, p.thread.y, p.thread.z};
#endif
}
MEMTOPO_INLINE Dim3 block_idx() {
#if defined(__CUDA_ARCH__)
  return {blockIdx.x, blockIdx.y, blockIdx.z};
#else
  const auto p = detail::sim_place();
  return {p.block.x, p.block.y, p.block.z};
#endif
}
MEMTOPO_INLINE Dim3 block_dim() {
#if defined(__CUDA_ARCH__)
  return {blockDim.x, blockDim.y, blockDim.z};
#else
  const auto p = detail::sim_place();
  return {p.block_dim.x, p.block_dim.y, p.block_dim.z};
#endif
}
MEMTOPO_INLINE Dim3 grid_dim() {
#if defined(__CUDA_ARCH__)
  return {gridDim.x, gridDim.y, gridDim.z};
#else
  const auto p = detail::sim_place();
  return {p.grid_dim.x, p.grid_dim.y, p.grid_dim.z};
#endif
}

// The x components, which one-dimensional kernels use.
MEMTOPO_INLINE uint32_t thread_index() { return thread_idx().x; }
MEMTOPO_INLINE uint32_t block_index() { return block_idx().x; }
MEMTOPO_INLINE uint32_t block_threads() { return block_dim().x; }
MEMTOPO_INLINE uint32_t grid_blocks() { return grid_dim().x; }

// The SM this thread runs on (0 .. nsmid() - 1; may exceed the SM count on some GPUs).
MEMTOPO_INLINE uint32_t smid() {
#if defined(__CUDA_ARCH__)
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
#else
  return detail::sim_place().sm;
#endif
}

// One more than the largest %smid of the device.
MEMTOPO_INLINE uint32_t nsmid() {
#if defined(__CUDA_ARCH__)
  uint32_t n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  return n;
#else
  return detail::sim_place().sm_count;
#endif
}

// This thread's lane in its warp and its warp in the block.
MEMTOPO_INLINE uint32_t lane_id() {
#if defined(__CUDA_ARCH__)
  uint32_t l;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
  return l;
#else
  return detail::sim_place().lane;
#endif
}
MEMTOPO_INLINE uint32_t warp_id() {
#if defined(__CUDA_ARCH__)
  const uint32_t linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return linear / 32;
#else
  return detail::sim_place().warp;
#endif
}

// Every thread of the block arrives, then all go on (__syncthreads).
MEMTOPO_INLINE void sync_block() {
#if defined(__CUDA_ARCH__)
  __syncthreads();
#else
  detail::sim().barrier(detail::sim().self, MT_BARRIER_BLOCK);
#endif
}

// Thread-block clusters (compute capability 9.0): this block's rank in its cluster and the
// cluster's size. Compiled for an older architecture, a block is a cluster of one.
MEMTOPO_INLINE uint32_t cluster_rank() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
#elif defined(__CUDA_ARCH__)
  return 0;
#else
  return detail::sim_place().cluster_rank;
#endif
}
MEMTOPO_INLINE uint32_t cluster_blocks() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
#elif defined(__CUDA_ARCH__)
  return 1;
#else
  return detail::sim_place().cluster_blocks;
#endif
}

// Every thread of every block of the cluster arrives (release) and waits (acquire).
MEMTOPO_INLINE void cluster_sync() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
#elif defined(__CUDA_ARCH__)
  __syncthreads();
#else
  detail::sim().barrier(detail::sim().self, MT_BARRIER_CLUSTER);
#endif
}

}  // namespace memtopo::device
