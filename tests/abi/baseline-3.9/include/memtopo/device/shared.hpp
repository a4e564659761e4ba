// memtopo device toolkit: shared memory a kernel declares, its state-space addresses, and
// distributed shared memory (the shared memory of the other blocks of a cluster, sm_90).
//
//   MEMTOPO_SHARED(uint32_t, ring, 1024);   // __shared__ uint32_t ring[1024]
//   MEMTOPO_SHARED_VAR(uint32_t, sink);      // __shared__ uint32_t sink
//   uint32_t* dyn = dynamic_shared<uint32_t>();
//
// Declare shared variables at the top of the kernel, in the same order in every thread (the
// simulated GPU carves them from the block's shared memory in that order).
#pragma once

#include "memtopo/device/portable.hpp"

#if defined(__CUDA_ARCH__)
#define MEMTOPO_SHARED(T, name, count) __shared__ T name[count]
#define MEMTOPO_SHARED_VAR(T, name) __shared__ T name
#else
#define MEMTOPO_SHARED(T, name, count) \
  T* const name = static_cast<T*>(::memtopo::device::detail::sim_shared_static(sizeof(T) * (count), alignof(T)))
#define MEMTOPO_SHARED_VAR(T, name) \
  T& name = *static_cast<T*>(::memtopo::device::detail::sim_shared_static(sizeof(T), alignof(T)))
#endif

namespace memtopo::device {

namespace detail {
inline void* sim_shared_static(uint32_t bytes, uint32_t align) {
  return sim().shared_static(sim().self, bytes, align);
}
inline uint32_t sim_shared_offset(const void* p) {
  uint32_t size = 0;
  const char* base = static_cast<const char*>(sim().shared_base(sim().self, &size));
  return uint32_t(static_cast<const char*>(p) - base);
}
}  // namespace detail

// The block's dynamic shared memory (LaunchConfig::dynamic_shared_bytes), 16-byte aligned.
template <class T>
MEMTOPO_INLINE T* dynamic_shared() {
#if defined(__CUDA_ARCH__)
  extern __shared__ __align__(16) unsigned char memtopo_dynamic_shared[];
  return reinterpret_cast<T*>(memtopo_dynamic_shared);
#else
  uint32_t size = 0;
  return static_cast<T*>(detail::sim().shared_base(detail::sim().self, &size));
#endif
}

// The shared-space (shared::cta) address of a shared variable: what Path::Shared loads take.
MEMTOPO_INLINE uint32_t shared_address(const void* p) {
#if defined(__CUDA_ARCH__)
  return uint32_t(__cvta_generic_to_shared(p));
#else
  return detail::sim_shared_offset(p);
#endif
}

// The shared::cluster address of the shared-space address `cta_address` in the block of
// cluster rank `rank` (mapa): what Path::Cluster loads take.
MEMTOPO_INLINE uint32_t cluster_address(uint32_t cta_address, uint32_t rank) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(cta_address), "r"(rank));
  return r;
#elif defined(__CUDA_ARCH__)
  (void)rank;
  return cta_address;
#else
  // The simulated GPU's encoding: a flag, the rank, the offset in that block's shared memory.
  return 0x80000000u | ((rank & 0x7fu) << 24) | (cta_address & 0xffffffu);
#endif
}

// One 32-bit load through a shared::cta or shared::cluster address.
MEMTOPO_INLINE uint32_t load_shared(uint32_t address) {
#if defined(__CUDA_ARCH__)
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
  return v;
#else
  return uint32_t(detail::sim_load_word(MT_SPACE_SHARED, address));
#endif
}
MEMTOPO_INLINE uint32_t load_cluster(uint32_t address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(address) : "memory");
  return v;
#elif defined(__CUDA_ARCH__)
  return load_shared(address);
#else
  return uint32_t(detail::sim_load_word(MT_OP_PATH_CLUSTER, address));
#endif
}

}  // namespace memtopo::device
