// Distributed shared memory in PTX (sm_90): the cluster address of a shared variable of
// another block, loads through it, and the cluster barrier. Written out rather than through
// cooperative groups so that a timed chain holds nothing but the loads.
#pragma once

#include <cstdint>

namespace hopper_dsmem {

// The shared::cta address of a shared variable.
__device__ __forceinline__ uint32_t cta_address(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }

// The shared::cluster address of the same variable in the block of cluster rank `rank`.
__device__ __forceinline__ uint32_t cluster_address(uint32_t cta_addr, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(cta_addr), "r"(rank));
  return r;
}

__device__ __forceinline__ uint32_t load_cluster(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

__device__ __forceinline__ uint32_t load_cta(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

// Loads of 4, 8 or 16 bytes through a cluster address, folded into one word.
template <int Width>
__device__ __forceinline__ uint32_t load_cluster_wide(uint32_t addr) {
  uint32_t a, b, c, d;
  if constexpr (Width == 4) {
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(a) : "r"(addr) : "memory");
    return a;
  } else if constexpr (Width == 8) {
    asm volatile("ld.shared::cluster.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr) : "memory");
    return a ^ b;
  } else {
    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d)
                 : "r"(addr)
                 : "memory");
    return a ^ b ^ c ^ d;
  }
}

// The same widths through a shared::cta address (the block's own shared memory).
template <int Width>
__device__ __forceinline__ uint32_t load_cta_wide(uint32_t addr) {
  uint32_t a, b, c, d;
  if constexpr (Width == 4) {
    asm volatile("ld.shared.u32 %0, [%1];" : "=r"(a) : "r"(addr) : "memory");
    return a;
  } else if constexpr (Width == 8) {
    asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "r"(addr) : "memory");
    return a ^ b;
  } else {
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(addr) : "memory");
    return a ^ b ^ c ^ d;
  }
}

// The same widths from global memory through L2 only.
template <int Width>
__device__ __forceinline__ uint32_t load_global_cg(const char* p) {
  uint32_t a, b, c, d;
  if constexpr (Width == 4) {
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(a) : "l"(p) : "memory");
    return a;
  } else if constexpr (Width == 8) {
    asm volatile("ld.global.cg.v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : "l"(p) : "memory");
    return a ^ b;
  } else {
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "l"(p) : "memory");
    return a ^ b ^ c ^ d;
  }
}

// Every thread of every block of the cluster arrives (release) and waits (acquire).
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive;\n\tbarrier.cluster.wait;" ::: "memory");
}

}  // namespace hopper_dsmem
