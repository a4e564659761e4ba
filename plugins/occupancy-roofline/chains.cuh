// occupancy-roofline: one dependent step of each instruction type, as inline PTX. Every step is
// `asm volatile` with operands in registers the compiler cannot see through (kernel parameters),
// so nvcc keeps every step and folds none; ptxas keeps them because the chains' last values
// reach a store (clock_after, keep_if). Each type's start(), warm() and bits() make the chains
// of one thread independent of each other and give the value those stores need.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include <memtopo/cuda/device.cuh>

namespace occupancy_roofline {

// Instructions per thread in one loop trip: the loop's own counter, compare and branch stay
// under 3 % of the issue slots.
constexpr unsigned kBodyOps = 128;
constexpr unsigned kSharedRingWords = 1024;  // 4 KiB: rows of 32 words, one bank per lane
constexpr unsigned kGlobalRingRows = 32;     // rows of 32 pointers (256 B): 8 KiB, L1-resident

// What every chain kernel gets: the loop trips and the chains' operands, the rings of the load
// chains, and where to write the clock records.
struct ChainArgs {
  unsigned iterations = 0;  // loop trips of kBodyOps instructions per thread
  float f_mul = 0.5f, f_add = 0.5f;
  double d_mul = 0.5, d_add = 0.5;
  uint32_t i_mul = 3, i_add = 1;
  uint32_t h_mul = 0, h_add = 0;    // half2 0.5, 0.5 (bit patterns)
  uint32_t b_mul = 0, b_add = 0;    // bfloat162 0.5, 0.5
  const unsigned long long* ring = nullptr;  // kGlobalRingRows x 32 pointers, row r to row r + 1
  // The ring of the L2 chains: rows of 32 pointers, row r to a row far from it.
  const unsigned long long* l2_ring = nullptr;
  unsigned l2_rows = 0;
  unsigned long long* records = nullptr;     // per warp: SM, start, end
  uint32_t* sink = nullptr;
  uint32_t flag = 0;  // 0 at run time: keep_if never stores, but ptxas cannot know
  unsigned paths = 1;        // divergence: lane l takes path l % paths
  float f_path_step = 0.0f;  // 0 at run time: path p adds f_add + p x this, its own register
  unsigned ilp = 1;          // chains per thread of the launch
  // The DRAM chains: a zeroed window of rows of 32 words (a power of two of them) and the
  // launch's chain count, every chain's stride through it (GlobalLoadDram).
  const unsigned long long* dram_rows = nullptr;
  unsigned long long dram_row_mask = 0;
  unsigned long long dram_chains = 0;
};

// One warp's clock record: its SM, its start and its end (read by Records::read).
__device__ __forceinline__ void write_record(const ChainArgs& a, unsigned warp, unsigned long long start,
                                             unsigned long long end) {
  unsigned long long* r = a.records + 3 * (blockIdx.x * (blockDim.x / 32) + warp);
  r[0] = memtopo::device::smid();
  r[1] = start;
  r[2] = end;
}

// Each type: T (a chain's value), prepare (the block's setup), kWarmSteps (untimed steps that
// bring a load chain's data in), start (chain c of a thread), step, bits (a 32-bit word of the
// value for the final stores). The compute types need no setup and no warm-up.
struct Compute {
  static constexpr unsigned kWarmSteps = 0;
  static __device__ void prepare(const ChainArgs&) {}
};

struct Ffma : Compute {
  using T = float;
  static __device__ T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.f_add + float(c); }
  static __device__ __forceinline__ T step(T x, const ChainArgs& a) {
    asm volatile("fma.rn.f32 %0, %0, %1, %2;" : "+f"(x) : "f"(a.f_mul), "f"(a.f_add));
    return x;
  }
  static __device__ uint32_t bits(T x) { return __float_as_uint(x); }
};

struct Dfma : Compute {
  using T = double;
  static __device__ T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.d_add + double(c); }
  static __device__ __forceinline__ T step(T x, const ChainArgs& a) {
    asm volatile("fma.rn.f64 %0, %0, %1, %2;" : "+d"(x) : "d"(a.d_mul), "d"(a.d_add));
    return x;
  }
  static __device__ uint32_t bits(T x) { return uint32_t(__double_as_longlong(x) >> 32); }
};

struct Imad : Compute {
  using T = uint32_t;
  static __device__ T start(const ChainArgs& a, unsigned, unsigned lane, unsigned c) { return a.i_add + lane + c; }
  static __device__ __forceinline__ T step(T x, const ChainArgs& a) {
    asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(x) : "r"(a.i_mul), "r"(a.i_add));
    return x;
  }
  static __device__ uint32_t bits(T x) { return x; }
};

// rsqrt: its fixed point is 1, so the chain's values stay normal numbers.
struct Sfu : Compute {
  using T = float;
  static __device__ T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.f_add + float(c); }
  static __device__ __forceinline__ T step(T x, const ChainArgs&) {
    asm volatile("rsqrt.approx.ftz.f32 %0, %0;" : "+f"(x));
    return x;
  }
  static __device__ uint32_t bits(T x) { return __float_as_uint(x); }
};

struct Hfma2 : Compute {
  using T = uint32_t;  // a half2's bits
  static __device__ T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.h_add + c; }
  static __device__ __forceinline__ T step(T x, const ChainArgs& a) {
    asm volatile("fma.rn.f16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a.h_mul), "r"(a.h_add));
    return x;
  }
  static __device__ uint32_t bits(T x) { return x; }
};

// bf16x2 FMA needs sm_80; the fat binary's older code is never run (the probe checks the
// compute capability) and holds a plain move in its place.
struct Hfma2Bf16 : Compute {
  using T = uint32_t;  // a bfloat162's bits
  static __device__ T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.b_add + c; }
  static __device__ __forceinline__ T step(T x, const ChainArgs& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("fma.rn.bf16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a.b_mul), "r"(a.b_add));
#else
    asm volatile("mov.b32 %0, %0;" : "+r"(x));
#endif
    return x;
  }
  static __device__ uint32_t bits(T x) { return x; }
};

// F2I, reading the last result's integer bits as a float: every step is the same conversion
// (an alternating F2I / I2F chain would mix I2FP, which Ampere and later run on the FMA pipe).
struct Cvt : Compute {
  using T = uint32_t;
  static __device__ T start(const ChainArgs& a, unsigned, unsigned lane, unsigned c) { return a.i_add + lane + c; }
  static __device__ __forceinline__ T step(T x, const ChainArgs&) {
    asm volatile("{\n\t.reg .f32 t;\n\tmov.b32 t, %0;\n\tcvt.rzi.s32.f32 %0, t;\n\t}" : "+r"(x));
    return x;
  }
  static __device__ uint32_t bits(T x) { return x; }
};

// Dependent ld.shared: word i holds the address of word i + 32, so lane l stays in bank l and
// a warp's 32 loads are one conflict-free wavefront.
struct SharedLoad {
  using T = uint32_t;  // a shared-window address
  static constexpr unsigned kWarmSteps = 0;  // shared memory has no cache to warm
  static __device__ uint32_t* ring() {
    __shared__ uint32_t words[kSharedRingWords];
    return words;
  }
  static __device__ void prepare(const ChainArgs&) {
    uint32_t* w = ring();
    for (unsigned i = threadIdx.x; i < kSharedRingWords; i += blockDim.x)
      w[i] = uint32_t(__cvta_generic_to_shared(&w[(i + 32) % kSharedRingWords]));
  }
  static __device__ T start(const ChainArgs&, unsigned warp, unsigned lane, unsigned c) {
    const unsigned row = (warp * 8 + c) % (kSharedRingWords / 32);
    return uint32_t(__cvta_generic_to_shared(&ring()[row * 32 + lane]));
  }
  static __device__ __forceinline__ T step(T x, const ChainArgs&) {
    return memtopo::device::follow32<memtopo::device::Path::Shared>(x);
  }
  static __device__ uint32_t bits(T x) { return x; }
};

// Dependent ld.global.ca over 8 KiB: lane l of every row points at lane l of the next row, so a
// warp's 32 loads fall in one 256 B row (two lines), and the warm-up pass brings all rows in.
struct GlobalLoadL1 {
  using T = unsigned long long;  // a generic address
  static constexpr unsigned kWarmSteps = kGlobalRingRows;
  static __device__ void prepare(const ChainArgs&) {}
  static __device__ T start(const ChainArgs& a, unsigned warp, unsigned lane, unsigned c) {
    return reinterpret_cast<T>(a.ring + ((warp * 8 + c) % kGlobalRingRows) * 32 + lane);
  }
  static __device__ __forceinline__ T step(T x, const ChainArgs&) {
    return memtopo::device::follow<memtopo::device::Path::GlobalCa>(x);
  }
  static __device__ uint32_t bits(T x) { return uint32_t(x) ^ uint32_t(x >> 32); }
};

// Dependent ld.global.cg over a ring within the L2 and past the L1 (rows of 32 pointers, row r
// pointing at a row 0.618 of the ring away). Chains of other warps, blocks and ILP slots start
// at rows far apart.
struct GlobalLoadL2 {
  using T = unsigned long long;
  static constexpr unsigned kWarmSteps = 0;
  static __device__ void prepare(const ChainArgs&) {}
  static __device__ T start(const ChainArgs& a, unsigned warp, unsigned lane, unsigned c) {
    const unsigned long long chain = (unsigned long long)(blockIdx.x) * 512 + warp * 8 + c;
    return reinterpret_cast<T>(a.l2_ring + chain * 7919 % a.l2_rows * 32 + lane);
  }
  static __device__ __forceinline__ T step(T x, const ChainArgs&) {
    return memtopo::device::follow<memtopo::device::Path::GlobalCg>(x);
  }
  static __device__ uint32_t bits(T x) { return uint32_t(x) ^ uint32_t(x >> 32); }
};

// Dependent ld.global.cg.u64 of rows no load of the launch read before. The chain's state is a
// number: chain k's j-th load takes number k + j x chains, so no two loads of a launch share a
// number, and the number's row is number x an odd constant modulo the window's rows, a
// bijection that scatters neighbours over the window (no DRAM page or prefetch favours the
// next). The loaded word is zero and is added to the number: each load waits for the last.
struct GlobalLoadDram {
  using T = unsigned long long;
  static constexpr unsigned kWarmSteps = 0;  // a warmed row would be an L2 hit
  static __device__ void prepare(const ChainArgs&) {}
  static __device__ T start(const ChainArgs& a, unsigned warp, unsigned, unsigned c) {
    return ((unsigned long long)(blockIdx.x) * (blockDim.x / 32) + warp) * a.ilp + c;
  }
  static __device__ __forceinline__ T step(T x, const ChainArgs& a) {
    const unsigned long long row = x * 0x9E3779B97F4A7C15ull & a.dram_row_mask;
    const unsigned long long* word = a.dram_rows + row * 32 + threadIdx.x % 32;
    unsigned long long zero;
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(zero) : "l"(word) : "memory");
    return x + a.dram_chains + zero;
  }
  static __device__ uint32_t bits(T x) { return uint32_t(x) ^ uint32_t(x >> 32); }
};

}  // namespace occupancy_roofline
