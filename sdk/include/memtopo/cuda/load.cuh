// memtopo device toolkit: one load through each memory path, timed or not, and pointer
// loads for load-to-use chases. The engine's kernels are built from these; a probe kernel
// that times a load the same way gets numbers comparable with memtopo's.
#pragma once

#include <cstdint>

namespace memtopo::device {

// Memory paths, numbered as mt_space (measure.h); Register replaces the load by a register
// move (what the timing itself costs); Param reads kernel parameters (ld.param).
enum class Path : uint32_t {
  GlobalCa = 0,  // ld.global.ca
  GlobalCg = 1,  // ld.global.cg
  Readonly = 2,  // ld.global.nc
  Texture = 3,   // tex.1d on a texture object
  Constant = 4,  // ld.const
  Shared = 5,    // ld.shared
  Register = 6,  // mov: no load
  Param = 8,     // ld.param
};

// One timed load: clock, load, a store of the loaded value to the shared word at `slot`
// (the thesis' Figure 4.3: the second clock read must wait for the load), clock. `address`
// is a generic address for the global paths, a state-space address for Constant, Shared and
// Param, the texture object for Texture (then `index` is the coordinate). Returns the loaded
// word; `cycles` gets the raw cycles between the two clock reads. The address is computed
// before the first clock read, so it is not in the sample.
#define MEMTOPO_DETAIL_TIMED_LOAD(LOAD)                                 \
  asm volatile(                                                         \
      "{\n\t.reg .u64 t0, t1;\n\t.reg .u32 d1, d2, d3;\n\t"             \
      "mov.u64 t0, %%clock64;\n\t" LOAD                                 \
      "\n\t"                                                            \
      "st.shared.u32 [%3], %0;\n\t"                                     \
      "mov.u64 t1, %%clock64;\n\t"                                      \
      "sub.u64 t1, t1, t0;\n\t"                                         \
      "cvt.u32.u64 %1, t1;\n\t}"                                        \
      : "=r"(value), "=r"(cycles)                                       \
      : "l"(address), "l"(slot), "r"(index)                             \
      : "memory")

// Bytes 8 or 16: a vector load (ld.v2 / ld.v4) on the global paths and in shared memory, from
// an address aligned to it; the first word is returned and the others are only waited for.
template <Path P, uint32_t Bytes = 4>
__device__ __forceinline__ uint32_t timed_load(unsigned long long address, uint32_t index, unsigned long long slot,
                                               uint32_t& cycles) {
  uint32_t value;
  static_assert(Bytes == 4 || Bytes == 8 || Bytes == 16, "loads of 4, 8 or 16 bytes");
  static_assert(Bytes == 4 || P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Readonly || P == Path::Shared,
                "vector loads on the global paths and in shared memory");
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
  return value;
}
#undef MEMTOPO_DETAIL_TIMED_LOAD

// One untimed load, operands as timed_load's.
#define MEMTOPO_DETAIL_LOAD(LOAD) \
  asm volatile("{\n\t.reg .u32 d1, d2, d3;\n\t" LOAD "\n\t}" : "=r"(value) : "l"(address), "r"(index) : "memory")

template <Path P>
__device__ __forceinline__ uint32_t load(unsigned long long address, uint32_t index) {
  uint32_t value;
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
  return value;
}
#undef MEMTOPO_DETAIL_LOAD

// Pointer chases (load-to-use latency): the loaded value is the next load's address, with
// no instruction between two loads. Global paths hold 64-bit generic addresses; Constant and
// Shared hold 32-bit addresses of their state space (the load takes a 32-bit register);
// a texture chase is load<Path::Texture> with the loaded index as the next coordinate.
template <Path P>
__device__ __forceinline__ unsigned long long follow(unsigned long long p) {
  if constexpr (P == Path::GlobalCa) {
    asm volatile("ld.global.ca.u64 %0, [%0];" : "+l"(p)::"memory");
  } else if constexpr (P == Path::GlobalCg) {
    asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p)::"memory");
  } else {
    static_assert(P == Path::Readonly, "64-bit pointers live on the global paths");
    asm volatile("ld.global.nc.u64 %0, [%0];" : "+l"(p)::"memory");
  }
  return p;
}

template <Path P>
__device__ __forceinline__ uint32_t follow32(uint32_t p) {
  if constexpr (P == Path::Constant) {
    asm volatile("ld.const.u32 %0, [%0];" : "+r"(p)::"memory");
  } else {
    static_assert(P == Path::Shared, "32-bit pointers live in constant and shared memory");
    asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  }
  return p;
}

}  // namespace memtopo::device
