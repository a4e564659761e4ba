// memtopo device toolkit: access programs, a lane's whole sequence of loads of a common
// pattern in one call. On the GPU each is the loop it describes; on the simulated GPU the
// lanes of a warp that start one together run as the warp's program, natively and step by
// step in the order of simulated time (mt_access_program, measure.h): streams and random
// chains over many megabytes cost the simulator per warp instruction, not per thread switch.
//
//   sweep<MT_SWEEP_READ, Path::GlobalCg, 16, 4>(src, nullptr, thread_index(), n, step, spread, 0)
//   random_chains<Path::GlobalCg, 8>(base, places, mask, warm, steps, ceiling, slot)
//   follow_chains<Path::GlobalCa, 4, 32>(pointers, trips)
//   block_sweep<Path::Cluster, 16, 65536>(cluster_address(own, peer), thread_index(), 1024, rounds)
#pragma once

#include "memtopo/device/clock.hpp"
#include "memtopo/device/load.hpp"
#include "memtopo/device/random.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace memtopo::device {

#if defined(__CUDA_ARCH__)
namespace detail {

template <int W>
struct vec_of;
template <>
struct vec_of<4> {
  using type = unsigned;
};
template <>
struct vec_of<8> {
  using type = uint2;
};
template <>
struct vec_of<16> {
  using type = uint4;
};

// Volatile loads: the compiler may neither merge the same place's loads of two passes nor drop
// a pass whose words cancel in the xor (the intrinsics __ldcg/__ldca are pure to it).
template <bool Cg>
__device__ __forceinline__ unsigned sweep_load(const unsigned* p) {
  unsigned v;
  if constexpr (Cg) asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p));
  else asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p));
  return v;
}
template <bool Cg>
__device__ __forceinline__ uint2 sweep_load(const uint2* p) {
  uint2 v;
  if constexpr (Cg) asm volatile("ld.global.cg.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  else asm volatile("ld.global.ca.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "l"(p));
  return v;
}
template <bool Cg>
__device__ __forceinline__ uint4 sweep_load(const uint4* p) {
  uint4 v;
  if constexpr (Cg)
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm volatile("ld.global.ca.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}
// Volatile stores, for the same reason: a pass's stores are never dropped for the next pass's.
__device__ __forceinline__ void sweep_store(unsigned* p, unsigned v) {
  asm volatile("st.global.u32 [%0], %1;" ::"l"(p), "r"(v));
}
__device__ __forceinline__ void sweep_store(uint2* p, uint2 v) {
  asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(p), "r"(v.x), "r"(v.y));
}
__device__ __forceinline__ void sweep_store(uint4* p, uint4 v) {
  asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
}
__device__ __forceinline__ unsigned fold(unsigned v) { return v; }
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x ^ v.y; }
__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ __forceinline__ unsigned bump(unsigned v) { return v + 1; }
__device__ __forceinline__ uint2 bump(uint2 v) { return make_uint2(v.x + 1, v.y); }
__device__ __forceinline__ uint4 bump(uint4 v) { return make_uint4(v.x + 1, v.y, v.z, v.w); }
template <class V>
__device__ __forceinline__ V fill(unsigned x) {
  if constexpr (sizeof(V) == 4) return x;
  else if constexpr (sizeof(V) == 8) return make_uint2(x, x);
  else return make_uint4(x, x, x, x);
}

// One place of a sweep: element i and the Ilp - 1 that follow `spread` apart.
template <uint32_t Op, int Ilp, bool Cg, class V>
__device__ __forceinline__ void access_place(const V* s, V* d, unsigned long long i, unsigned long long spread,
                                             unsigned value, unsigned& acc) {
  V v[Ilp];
  if constexpr (Op != MT_SWEEP_WRITE) {
#pragma unroll
    for (int k = 0; k < Ilp; ++k) v[k] = sweep_load<Cg>(s + i + k * spread);
  }
#pragma unroll
  for (int k = 0; k < Ilp; ++k) {
    if constexpr (Op == MT_SWEEP_READ) acc ^= fold(v[k]);
    else if constexpr (Op == MT_SWEEP_WRITE) sweep_store(d + i + k * spread, fill<V>(unsigned(i) + value));
    else if constexpr (Op == MT_SWEEP_COPY) sweep_store(d + i + k * spread, v[k]);
    else sweep_store(d + i + k * spread, bump(v[k]));
  }
}

}  // namespace detail
#else
namespace detail {
// A sweep's description on the simulated GPU, its places still to fill in.
inline mt_access_program sweep_program(uint32_t path, uint32_t width, uint32_t op, uint32_t ilp) {
  mt_access_program p{};
  p.struct_size = sizeof p;
  p.kind = MT_PROGRAM_SWEEP;
  p.path = path;
  p.width = width;
  p.op = op;
  p.ilp = ilp;
  return p;
}
// Runs the lane's sweep as (part of) its warp's program: the xor of every word it loaded.
inline uint32_t sweep_fold(const mt_access_program& p) {
  mt_program_result r{};
  r.struct_size = sizeof r;
  sim().program(sim().self, &p, &r);
  return r.fold;
}
}  // namespace detail
#endif

// A stream of one lane: at places i = first, first + step, ... below end (elements of W bytes
// from src and dst), Ilp accesses at i, i + spread, ..., loads issued together, then (by Op,
// MT_SWEEP_*) the stores; `passes` times, `value` one more each pass. Returns the xor of every
// word loaded (keep it, or the loads go).
template <uint32_t Op, Path P, int W, int Ilp>
MEMTOPO_INLINE uint32_t sweep(const void* src, void* dst, uint64_t first, uint64_t end, uint64_t step, uint64_t spread,
                              uint32_t value, uint32_t passes = 1) {
  static_assert(P == Path::GlobalCa || P == Path::GlobalCg, "sweeps read through .ca or .cg");
  static_assert(W == 4 || W == 8 || W == 16, "accesses of 4, 8 or 16 bytes");
  static_assert(Ilp == 1 || Ilp == 2 || Ilp == 4 || Ilp == 8, "ILP 1, 2, 4 or 8");
#if defined(__CUDA_ARCH__)
  using V = typename detail::vec_of<W>::type;
  const V* s = static_cast<const V*>(src);
  V* d = static_cast<V*>(dst);
  unsigned acc = 0;
  for (uint32_t p = 0; p < passes; ++p)
    for (unsigned long long i = first; i < end; i += step)
      detail::access_place<Op, Ilp, P == Path::GlobalCg>(s, d, i, spread, value + p, acc);
  return acc;
#else
  if (passes == 0) return 0;
  mt_access_program p = detail::sweep_program(uint32_t(P), uint32_t(W), Op, uint32_t(Ilp));
  p.src = reinterpret_cast<uint64_t>(src);
  p.dst = reinterpret_cast<uint64_t>(dst);
  p.first = first;
  p.end = end;
  p.step = step;
  p.spread = spread;
  p.value = value;
  p.passes = passes;
  return detail::sweep_fold(p);
#endif
}

// A block's sweep of its own `Bytes` (a constant of the kernel: a bound in a register slowed an
// H200's 4 B shared loads by 5 %) from `base`: lane `lane` of `lanes` reads W bytes at lane x W,
// (lane + lanes) x W, ... below Bytes, `passes` times. Global paths take a generic address,
// Shared and Cluster a 32-bit state-space address (shared_address, cluster_address). Returns the
// xor of every word loaded. On the GPU the loop is unrolled 16 deep (its loads in flight
// together); on the simulated GPU it is the warp's MT_PROGRAM_SWEEP.
template <Path P, int W, unsigned Bytes>
MEMTOPO_INLINE uint32_t block_sweep(unsigned long long base, unsigned lane, unsigned lanes, uint32_t passes) {
  static_assert(P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Shared || P == Path::Cluster,
                "block sweeps on .ca, .cg, shared memory or the cluster's");
  static_assert(W == 4 || W == 8 || W == 16, "accesses of 4, 8 or 16 bytes");
  static_assert(Bytes % W == 0, "whole accesses");
#if defined(__CUDA_ARCH__)
  uint32_t acc = 0;
  const unsigned step = lanes * unsigned(W);
  for (uint32_t r = 0; r < passes; ++r) {
#pragma unroll 16
    for (unsigned off = lane * unsigned(W); off < Bytes; off += step) acc ^= load_wide<P, W>(base + off);
  }
  return acc;
#else
  if (passes == 0) return 0;
  mt_access_program p = detail::sweep_program(uint32_t(P), uint32_t(W), MT_SWEEP_READ, 1);
  p.src = base;
  p.first = lane;
  p.end = Bytes / unsigned(W);
  p.step = lanes;
  p.passes = passes;
  return detail::sweep_fold(p);
#endif
}

// What random_chains saw: cycles of its timed steps (once per chain), the loads of steps above
// the ceiling (left out), and the clock at the first timed step and at the end.
struct ChainTally {
  uint64_t cycles = 0, outliers = 0, first = 0, last = 0;
};

// K chains of one lane in lockstep: at each step, one load of each chain issued back to back,
// then a store of each loaded value (which waits for it) to the shared word at `slot`, timed
// as a group; each load's cycles are the group's. Chain c draws its places from places[c]
// (byte offsets from `base`), each tied to the last loaded value through `mask` (0, but unknown
// to the compiler: a kernel parameter) so that the loads of one chain depend on each other.
// `warmup` steps untimed, then `steps` timed; a step above `ceiling` cycles (0: none) is an
// interruption, its loads counted as outliers and its cycles left out.
template <Path P, uint32_t K>
MEMTOPO_INLINE ChainTally random_chains(const char* base, RandomPlaces (&places)[K], uint32_t mask, uint64_t warmup,
                                        uint64_t steps, uint32_t ceiling, unsigned long long slot) {
  static_assert(P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Readonly, "random chains on a global path");
  static_assert(K >= 1 && K <= 8, "1 to 8 chains a lane");
  ChainTally y;
#if defined(__CUDA_ARCH__)
  const uint32_t limit = ceiling ? ceiling : 0xffffffffu;
  uint32_t j[K], v[K];
#pragma unroll
  for (uint32_t i = 0; i < K; ++i) j[i] = places[i].next();
  for (uint64_t k = 0; k < warmup + steps; ++k) {
    if (k == warmup) y.first = clock_now();
    uint32_t cycles = 0;
    if constexpr (K == 1) {
      // One chain: the timed load whose window the backend's timing_overhead() measures, with
      // nothing the compiler could place between its clock reads.
      v[0] = timed_load<P>(reinterpret_cast<unsigned long long>(base + j[0]), j[0], slot, cycles);
    } else {
      const unsigned long long t0 = clock_now();
#pragma unroll
      for (uint32_t i = 0; i < K; ++i) v[i] = load<P>(reinterpret_cast<unsigned long long>(base + j[i]), j[i]);
#pragma unroll
      for (uint32_t i = 0; i < K; ++i) asm volatile("st.volatile.shared.u32 [%0], %1;" ::"l"(slot), "r"(v[i]));
      cycles = uint32_t(clock_now() - t0);
    }
#pragma unroll
    for (uint32_t i = 0; i < K; ++i) j[i] = places[i].next() ^ (v[i] & mask);
    if (k < warmup) continue;
    if (cycles > limit) {
      y.outliers += K;
      continue;
    }
    y.cycles += uint64_t(K) * cycles;
  }
  y.last = clock_now();
#else
  (void)mask;
  (void)slot;
  mt_access_program p{};
  p.struct_size = sizeof p;
  p.kind = MT_PROGRAM_RANDOM;
  p.path = uint32_t(P);
  p.width = 4;
  p.src = reinterpret_cast<uint64_t>(base);
  p.chains = K;
  p.candidates = places[0].candidates;
  p.stride = places[0].stride;
  p.ceiling = ceiling;
  p.warmup = warmup;
  p.steps = steps;
  for (uint32_t i = 0; i < K; ++i) p.states[i] = places[i].x;
  mt_program_result r{};
  r.struct_size = sizeof r;
  detail::sim().program(detail::sim().self, &p, &r);
  for (uint32_t i = 0; i < K; ++i) places[i].x = r.states[i];
  y.cycles = r.cycles;
  y.outliers = r.outliers;
  y.first = r.first;
  y.last = r.last;
#endif
  return y;
}

// Ilp pointer chains of one lane, Unroll x `trips` dependent loads each: at each step every
// chain loads the pointer it holds, the Ilp loads issued together (p[c] = *p[c]). Global paths
// hold 64-bit generic addresses (T unsigned long long), Shared 32-bit shared-space addresses
// (T uint32_t, from shared_address). On the GPU the steps of a trip are unrolled, with no
// instruction between a load and the next load of its chain.
template <Path P, int Ilp, int Unroll, class T>
MEMTOPO_INLINE void follow_chains(T (&p)[Ilp], uint64_t trips) {
  constexpr bool kShared = P == Path::Shared;
  static_assert(kShared || P == Path::GlobalCa || P == Path::GlobalCg || P == Path::Readonly,
                "pointer chains on a global path or in shared memory");
  static_assert(sizeof(T) == (kShared ? 4 : 8), "64-bit pointers on the global paths, 32-bit in shared memory");
  static_assert(Ilp >= 1 && Ilp <= 8, "1 to 8 chains a lane");
#if defined(__CUDA_ARCH__)
  for (uint64_t i = 0; i < trips; ++i) {
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
#pragma unroll
      for (int c = 0; c < Ilp; ++c) {
        if constexpr (kShared)
          p[c] = follow32<P>(p[c]);
        else
          p[c] = follow<P>(p[c]);
      }
  }
#else
  mt_access_program a{};
  a.struct_size = sizeof a;
  a.kind = MT_PROGRAM_FOLLOW;
  a.path = uint32_t(P);
  a.width = uint32_t(sizeof(T));
  a.chains = uint32_t(Ilp);
  a.steps = trips * uint64_t(Unroll);
  for (int c = 0; c < Ilp; ++c) a.states[c] = uint64_t(p[c]);
  mt_program_result r{};
  r.struct_size = sizeof r;
  detail::sim().program(detail::sim().self, &a, &r);
  for (int c = 0; c < Ilp; ++c) p[c] = T(r.states[c]);
#endif
}

}  // namespace memtopo::device
