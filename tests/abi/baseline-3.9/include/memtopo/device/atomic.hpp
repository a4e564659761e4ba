// memtopo device toolkit: atomics and stores that bypass the L1, on global or shared memory.
#pragma once

#include "memtopo/device/thread.hpp"

namespace memtopo::device {

namespace detail {
template <class T>
inline T sim_atomic(uint32_t op, T* p, T operand, T compare = T()) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomics of 4 or 8 bytes");
  return T(sim().atomic(sim().self, op, MT_SPACE_GLOBAL_CG, reinterpret_cast<uint64_t>(p), uint32_t(sizeof(T)),
                        uint64_t(operand), uint64_t(compare)));
}
}  // namespace detail

template <class T>
MEMTOPO_INLINE T atomic_add(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  return detail::sim_atomic(MT_ATOMIC_ADD, p, v);
#endif
}
template <class T>
MEMTOPO_INLINE T atomic_max(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return atomicMax(p, v);
#else
  return detail::sim_atomic(MT_ATOMIC_MAX, p, v);
#endif
}
template <class T>
MEMTOPO_INLINE T atomic_exch(T* p, T v) {
#if defined(__CUDA_ARCH__)
  return atomicExch(p, v);
#else
  return detail::sim_atomic(MT_ATOMIC_EXCH, p, v);
#endif
}
template <class T>
MEMTOPO_INLINE T atomic_cas(T* p, T compare, T v) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, compare, v);
#else
  return detail::sim_atomic(MT_ATOMIC_CAS, p, v, compare);
#endif
}

// A store that goes to the L2 only (st.global.cg), so that recording never puts lines into
// the L1 under test.
template <class T>
MEMTOPO_INLINE void store_cg(T* p, T v) {
#if defined(__CUDA_ARCH__)
  __stcg(p, v);
#else
  detail::sim().store(detail::sim().self, MT_SPACE_GLOBAL_CG, reinterpret_cast<uint64_t>(p), uint32_t(sizeof(T)), &v);
#endif
}

// Claims the SM this block runs on: true for exactly one block per SM. `owner` has one
// zeroed int per SM slot (nsmid() entries); call from one thread of the block.
MEMTOPO_INLINE bool claim_sm(int32_t* owner, uint32_t slots, uint32_t* sm_out = nullptr) {
  const uint32_t s = smid();
  if (sm_out) *sm_out = s;
  if (s >= slots) return false;
  return atomic_cas(owner + s, int32_t(0), int32_t(1)) == 0;
}

}  // namespace memtopo::device
