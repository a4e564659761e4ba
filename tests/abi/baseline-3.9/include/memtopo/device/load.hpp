// memtopo device toolkit: one load through each memory path, timed or not, pointer loads for
// load-to-use chases, and groups of independent loads in flight together. The engine's
// kernels are built from the same loads; a probe kernel that times a load this way gets
// numbers comparable with memtopo's.
//
// On the simulated GPU a thread waits for each load (or group of loads) before it goes on:
// loads meant to be in flight together must be one load_group, as a thread that issues them
// back to back and then uses them all would on the GPU.
#pragma once

#include "memtopo/device/portable.hpp"

namespace memtopo::device {

// Memory paths, numbered as mt_space (measure.h); Register replaces the load by a register
// move (what the timing itself costs); Cluster reads another block's shared memory
// (ld.shared::cluster); Param reads kernel parameters (ld.param).
enum class Path : uint32_t {
  GlobalCa = 0,  // ld.global.ca
  GlobalCg = 1,  // ld.global.cg
  Readonly = 2,  // ld.global.nc
  Texture = 3,   // tex.1d on a texture object
  Constant = 4,  // ld.const
  Shared = 5,    // ld.shared
  Register = 6,  // mov: no load
  Cluster = 7,   // ld.shared::cluster
  Param = 8,     // ld.param
};

#if defined(__CUDA_ARCH__)
// One timed load: clock, load, a store of the loaded value to the shared word at `slot`
// (the thesis' Figure 4.3: the second clock read must wait for the load), clock. The store is
// volatile, which keeps ptxas from reading the second clock before it (clock_after says why).
#define MEMTOPO_DETAIL_TIMED_LOAD(LOAD)                                 \
  asm volatile(                                                         \
      "{\n\t.reg .u64 t0, t1;\n\t.reg .u32 d1, d2, d3;\n\t"             \
      "mov.u64 t0, %%clock64;\n\t" LOAD                                 \
      "\n\t"                                                            \
      "st.volatile.shared.u32 [%3], %0;\n\t"                            \
      "mov.u64 t1, %%clock64;\n\t"                                      \
      "sub.u64 t1, t1, t0;\n\t"                                         \
      "cvt.u32.u64 %1, t1;\n\t}"                                        \
      : "=r"(value), "=r"(cycles)                                       \
      : "l"(address), "l"(slot), "r"(index)                             \
      : "memory")
#define MEMTOPO_DETAIL_LOAD(LOAD) \
  asm volatile("{\n\t.reg .u32 d1, d2, d3;\n\t" LOAD "\n\t}" : "=r"(value) : "l"(address), "r"(index) : "memory")
#endif

// One timed load: `address` is a generic address for the global paths, a state-space address
// for Constant, Shared and Param, the texture object for Texture (then `index` is the
// coordinate). Returns the loaded word; `cycles` gets the raw cycles between the two clock
// reads. Bytes 8 or 16: a vector load on the global paths and in shared memory, from an
// address aligned to it; the first word is returned and the others are only waited for.
template <Path P, uint32_t Bytes = 4>
MEMTOPO_INLINE uint32_t timed_load(unsigned long long address, uint32_t index, unsigned long long slot,
                                   uint32_t& cycles) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "loads of 4, 8 or 16 bytes");
  static_assert(Bytes == 4 || P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Readonly || P == Path::Shared,
                "vector loads on the global paths and in shared memory");
  uint32_t value;
#if defined(__CUDA_ARCH__)
  if constexpr (Bytes == 8) {
    if constexpr (P == Path::GlobalCa) MEMTOPO_DETAIL_TIMED_LOAD("ld.global.ca.v2.u32 {%0, d1}, [%2];");
    else if constexpr (P == Path::GlobalCg) MEMTOPO_DETAIL_TIMED_LOAD("ld.global.cg.v2.u32 {%0, d1}, [%2];");
    else if constexpr (P == Path::Readonly) MEMTOPO_DETAIL_TIMED_LOAD("ld.global.nc.v2.u32 {%0, d1}, [%2];");
    else MEMTOPO_DETAIL_TIMED_LOAD("ld.shared.v2.u32 {%0, d1}, [%2];");
  } else if constexpr (Bytes == 16) {
    if constexpr (P == Path::GlobalCa) MEMTOPO_DETAIL_TIMED_LOAD("ld.global.ca.v4.u32 {%0, d1, d2, d3}, [%2];");
    else if constexpr (P == Path::GlobalCg) MEMTOPO_DETAIL_TIMED_LOAD("ld.global.cg.v4.u32 {%0, d1, d2, d3}, [%2];");
    else if constexpr (P == Path::Readonly) MEMTOPO_DETAIL_TIMED_LOAD("ld.global.nc.v4.u32 {%0, d1, d2, d3}, [%2];");
    else MEMTOPO_DETAIL_TIMED_LOAD("ld.shared.v4.u32 {%0, d1, d2, d3}, [%2];");
  } else if constexpr (P == Path::GlobalCa) {
    MEMTOPO_DETAIL_TIMED_LOAD("ld.global.ca.u32 %0, [%2];");
  } else if constexpr (P == Path::GlobalCg) {
    MEMTOPO_DETAIL_TIMED_LOAD("ld.global.cg.u32 %0, [%2];");
  } else if constexpr (P == Path::Readonly) {
    MEMTOPO_DETAIL_TIMED_LOAD("ld.global.nc.u32 %0, [%2];");
  } else if constexpr (P == Path::Texture) {
    MEMTOPO_DETAIL_TIMED_LOAD("tex.1d.v4.u32.s32 {%0, d1, d2, d3}, [%2, {%4}];");
  } else if constexpr (P == Path::Constant) {
    MEMTOPO_DETAIL_TIMED_LOAD("ld.const.u32 %0, [%2];");
  } else if constexpr (P == Path::Param) {
    MEMTOPO_DETAIL_TIMED_LOAD("ld.param.u32 %0, [%2];");
  } else if constexpr (P == Path::Shared) {
    MEMTOPO_DETAIL_TIMED_LOAD("ld.shared.u32 %0, [%2];");
  } else {
    MEMTOPO_DETAIL_TIMED_LOAD("mov.u32 %0, %4;");
  }
#else
  (void)slot;
  const uint64_t t0 = detail::sim().clock(detail::sim().self);
  uint32_t words[4] = {0, 0, 0, 0};
  uint64_t a = P == Path::Texture || P == Path::Register ? uint64_t(index) : uint64_t(address);
  detail::sim().load(detail::sim().self, uint32_t(P) | MT_OP_TIMED, &a, 1, Bytes, words);
  value = P == Path::Register ? index : words[0];
  cycles = uint32_t(detail::sim().clock(detail::sim().self) - t0);
#endif
  return value;
}

// One untimed load, operands as timed_load's.
template <Path P>
MEMTOPO_INLINE uint32_t load(unsigned long long address, uint32_t index) {
  uint32_t value;
#if defined(__CUDA_ARCH__)
  if constexpr (P == Path::GlobalCa) {
    MEMTOPO_DETAIL_LOAD("ld.global.ca.u32 %0, [%1];");
  } else if constexpr (P == Path::GlobalCg) {
    MEMTOPO_DETAIL_LOAD("ld.global.cg.u32 %0, [%1];");
  } else if constexpr (P == Path::Readonly) {
    MEMTOPO_DETAIL_LOAD("ld.global.nc.u32 %0, [%1];");
  } else if constexpr (P == Path::Texture) {
    MEMTOPO_DETAIL_LOAD("tex.1d.v4.u32.s32 {%0, d1, d2, d3}, [%1, {%2}];");
  } else if constexpr (P == Path::Constant) {
    MEMTOPO_DETAIL_LOAD("ld.const.u32 %0, [%1];");
  } else if constexpr (P == Path::Param) {
    MEMTOPO_DETAIL_LOAD("ld.param.u32 %0, [%1];");
  } else if constexpr (P == Path::Shared) {
    MEMTOPO_DETAIL_LOAD("ld.shared.u32 %0, [%1];");
  } else {
    MEMTOPO_DETAIL_LOAD("mov.u32 %0, %2;");
  }
#else
  if constexpr (P == Path::Register) {
    value = index;
  } else {
    value = uint32_t(detail::sim_load_word(uint32_t(P), P == Path::Texture ? uint64_t(index) : uint64_t(address)));
  }
#endif
  return value;
}

#if defined(__CUDA_ARCH__)
#undef MEMTOPO_DETAIL_TIMED_LOAD
#undef MEMTOPO_DETAIL_LOAD
#endif

// Pointer chases (load-to-use latency): the loaded value is the next load's address, with
// no instruction between two loads. Global paths hold 64-bit generic addresses; Constant and
// Shared hold 32-bit addresses of their state space (the load takes a 32-bit register), and
// Cluster 32-bit shared::cluster addresses (cluster_address, memtopo/device/shared.hpp);
// a texture chase is load<Path::Texture> with the loaded index as the next coordinate.
template <Path P>
MEMTOPO_INLINE unsigned long long follow(unsigned long long p) {
  static_assert(P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Readonly,
                "64-bit pointers live on the global paths");
#if defined(__CUDA_ARCH__)
  if constexpr (P == Path::GlobalCa) {
    asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
  } else if constexpr (P == Path::GlobalCg) {
    asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
  } else {
    asm volatile("ld.global.nc.u64 %0, [%0];" : "+l"(p)::"memory");
  }
  return p;
#else
  return detail::sim_load_word(uint32_t(P), p, 8);
#endif
}

template <Path P>
MEMTOPO_INLINE uint32_t follow32(uint32_t p) {
  static_assert(P == Path::Constant || P == Path::Shared || P == Path::Cluster,
                "32-bit pointers live in constant, shared and cluster shared memory");
#if defined(__CUDA_ARCH__)
  if constexpr (P == Path::Constant) {
    asm volatile("ld.const.u32 %0, [%0];" : "+r"(p)::"memory");
  } else if constexpr (P == Path::Shared) {
    asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  } else {
#if __CUDA_ARCH__ >= 900
    asm volatile("ld.shared::cluster.u32 %0, [%0];" : "+r"(p)::"memory");
#else
    asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
#endif
  }
  return p;
#else
  return uint32_t(detail::sim_load_word(uint32_t(P), p));
#endif
}

// Loads of `Bytes` (4, 8 or 16) through a path, folded into one word (the words xor'ed):
// whole vector loads whose value a kernel only keeps. Global paths take a generic address,
// Shared and Cluster a 32-bit state-space address.
template <Path P, int Bytes>
MEMTOPO_INLINE uint32_t load_wide(unsigned long long address) {
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "loads of 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__)
  uint32_t a, b, c, d;
#define MEMTOPO_DETAIL_WIDE(OP, ADDR)                                                                        \
  if constexpr (Bytes == 4) {                                                                               \
    asm volatile(OP ".u32 %0, [%1];" : "=r"(a) : ADDR(address) : "memory");                                 \
    return a;                                                                                               \
  } else if constexpr (Bytes == 8) {                                                                        \
    asm volatile(OP ".v2.u32 {%0, %1}, [%2];" : "=r"(a), "=r"(b) : ADDR(address) : "memory");               \
    return a ^ b;                                                                                           \
  } else {                                                                                                  \
    asm volatile(OP ".v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : ADDR(address) \
                 : "memory");                                                                               \
    return a ^ b ^ c ^ d;                                                                                   \
  }
#define MEMTOPO_DETAIL_L(x) "l"(x)
#define MEMTOPO_DETAIL_R(x) "r"(uint32_t(x))
  if constexpr (P == Path::GlobalCa) {
    MEMTOPO_DETAIL_WIDE("ld.global.ca", MEMTOPO_DETAIL_L)
  } else if constexpr (P == Path::GlobalCg) {
    MEMTOPO_DETAIL_WIDE("ld.global.cg", MEMTOPO_DETAIL_L)
  } else if constexpr (P == Path::Readonly) {
    MEMTOPO_DETAIL_WIDE("ld.global.nc", MEMTOPO_DETAIL_L)
  } else if constexpr (P == Path::Shared) {
    MEMTOPO_DETAIL_WIDE("ld.shared", MEMTOPO_DETAIL_R)
  } else {
    static_assert(P == Path::Cluster, "wide loads on the global paths, Shared and Cluster");
#if __CUDA_ARCH__ >= 900
    MEMTOPO_DETAIL_WIDE("ld.shared::cluster", MEMTOPO_DETAIL_R)
#else
    MEMTOPO_DETAIL_WIDE("ld.shared", MEMTOPO_DETAIL_R)
#endif
  }
#undef MEMTOPO_DETAIL_WIDE
#undef MEMTOPO_DETAIL_L
#undef MEMTOPO_DETAIL_R
#else
  uint32_t w[4] = {0, 0, 0, 0};
  uint64_t a = address;
  detail::sim().load(detail::sim().self, uint32_t(P), &a, 1, uint32_t(Bytes), w);
  return w[0] ^ w[1] ^ w[2] ^ w[3];
#endif
}

// N independent loads of `Bytes` each through a global path, issued back to back and in
// flight together; out[i] gets the first word of load i. The thread goes on once all are in.
template <Path P, int N, int Bytes = 4>
MEMTOPO_INLINE void load_group(const unsigned long long (&addresses)[N], uint32_t (&out)[N]) {
  static_assert(P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Readonly, "load groups on the global paths");
#if defined(__CUDA_ARCH__)
#pragma unroll
  for (int i = 0; i < N; ++i) out[i] = load_wide<P, Bytes>(addresses[i]);
#else
  uint32_t words[N * 4];
  uint64_t a[N];
  for (int i = 0; i < N; ++i) a[i] = addresses[i];
  detail::sim().load(detail::sim().self, uint32_t(P), a, uint32_t(N), uint32_t(Bytes), words);
  for (int i = 0; i < N; ++i) out[i] = words[i * (Bytes / 4)];
#endif
}

}  // namespace memtopo::device
