// occupancy-roofline: one dependent step of each instruction type. The compute steps are inline
// PTX, `asm volatile` with operands in registers the compiler cannot see through (kernel
// parameters), so nvcc keeps every step and folds none; ptxas keeps them because the chains' last
// values reach a store (clock_after, keep_if). The load steps are the device toolkit's loads, so
// they run on the simulated GPU too; the compute steps' host code only keeps the values flowing
// (the simulated GPU models no instruction pipelines: the probe never times them there). Each
// type's start() and bits() make the chains of one thread independent of each other and give
// the value those stores need.
#pragma once

#include <cstdint>
#include <cstring>

#include <memtopo/device/kernel.hpp>

namespace occupancy_roofline {

// Instructions per thread in one loop trip: the loop's own counter, compare and branch stay
// under 3 % of the issue slots.
constexpr unsigned kBodyOps = 128;
constexpr unsigned kSharedRingWords = 1024;  // 4 KiB: rows of 32 words, one bank per lane
constexpr unsigned kGlobalRingRows = 32;     // rows of 32 pointers (256 B): 8 KiB, L1-resident

// What every chain kernel gets: the loop trips and the chains' operands, the rings of the load
// chains, and where to write the clock records.
struct ChainArgs {
  uint32_t* shared_ring = nullptr;  // the block's ring of kSharedRingWords words (SharedLoad)
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
  // The DRAM chains: a window of rows of 32 pointers (dram_window_rows of them), linked for the
  // launch's chain count (GlobalLoadDram).
  const unsigned long long* dram_rows = nullptr;
  unsigned long long dram_window_rows = 0;
  unsigned long long dram_first_chain = 0;  // the number of the launch's chain 0 (DramWindows::take)
  // Blocks on SMs at or past this return at once (0: none): Records::read leaves them out.
  unsigned sms = 0;
};

// One warp's clock record: its SM, its start and its end (read by Records::read).
MEMTOPO_INLINE void write_record(const ChainArgs& a, unsigned warp, unsigned long long start, unsigned long long end) {
  namespace md = memtopo::device;
  unsigned long long* r = a.records + 3 * (md::block_index() * (md::block_threads() / 32) + warp);
  r[0] = md::smid();
  r[1] = start;
  r[2] = end;
}

// The bits of a float or double, on either compiler.
template <class To, class From>
MEMTOPO_INLINE To bits_of(From x) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To t;
  memcpy(&t, &x, sizeof t);
  return t;
}

// A compute step's PTX on the GPU; on the host, `host` keeps the chain's value moving.
#if defined(__CUDA_ARCH__)
#define ROOFLINE_STEP(ptx, host, ...) asm volatile(ptx : __VA_ARGS__)
#else
#define ROOFLINE_STEP(ptx, host, ...) host
#endif

// Each type: T (a chain's value), kSimulated (a load, which the simulated GPU models: its chains
// follow kPath), kSharedRing (it needs the block's shared ring), prepare (the block's setup),
// kWarmSteps (untimed steps that bring a load chain's data in), start (chain c of a thread),
// step (a compute type's one instruction), bits (a 32-bit word of the value for the final
// stores). The compute types need no setup and no warm-up.
struct Compute {
  static constexpr bool kSimulated = false;
  static constexpr bool kSharedRing = false;
  static constexpr unsigned kWarmSteps = 0;
  static MEMTOPO_HD void prepare(const ChainArgs&) {}
};
// The load types are pointer chains (memtopo::device::follow_chains on kPath): a load's value
// is the next load's address.
struct Load {
  static constexpr bool kSimulated = true;
  static constexpr bool kSharedRing = false;
  static MEMTOPO_HD void prepare(const ChainArgs&) {}
};

struct Ffma : Compute {
  using T = float;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.f_add + float(c); }
  static MEMTOPO_INLINE T step(T x, const ChainArgs& a) {
    ROOFLINE_STEP("fma.rn.f32 %0, %0, %1, %2;", x = x * a.f_mul + a.f_add, "+f"(x) : "f"(a.f_mul), "f"(a.f_add));
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return bits_of<uint32_t>(x); }
};

struct Dfma : Compute {
  using T = double;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.d_add + double(c); }
  static MEMTOPO_INLINE T step(T x, const ChainArgs& a) {
    ROOFLINE_STEP("fma.rn.f64 %0, %0, %1, %2;", x = x * a.d_mul + a.d_add, "+d"(x) : "d"(a.d_mul), "d"(a.d_add));
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return uint32_t(bits_of<uint64_t>(x) >> 32); }
};

struct Imad : Compute {
  using T = uint32_t;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned lane, unsigned c) { return a.i_add + lane + c; }
  static MEMTOPO_INLINE T step(T x, const ChainArgs& a) {
    ROOFLINE_STEP("mad.lo.u32 %0, %0, %1, %2;", x = x * a.i_mul + a.i_add, "+r"(x) : "r"(a.i_mul), "r"(a.i_add));
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return x; }
};

// rsqrt: its fixed point is 1, so the chain's values stay normal numbers.
struct Sfu : Compute {
  using T = float;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.f_add + float(c); }
  static MEMTOPO_INLINE T step(T x, const ChainArgs&) {
    ROOFLINE_STEP("rsqrt.approx.ftz.f32 %0, %0;", x = 1.0f, "+f"(x));
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return bits_of<uint32_t>(x); }
};

struct Hfma2 : Compute {
  using T = uint32_t;  // a half2's bits
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.h_add + c; }
  static MEMTOPO_INLINE T step(T x, const ChainArgs& a) {
    ROOFLINE_STEP("fma.rn.f16x2 %0, %0, %1, %2;", x ^= a.h_add, "+r"(x) : "r"(a.h_mul), "r"(a.h_add));
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return x; }
};

// bf16x2 FMA needs sm_80; the fat binary's older code is never run (the probe checks the
// compute capability) and holds a plain move in its place.
struct Hfma2Bf16 : Compute {
  using T = uint32_t;  // a bfloat162's bits
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned, unsigned c) { return a.b_add + c; }
  static MEMTOPO_INLINE T step(T x, const ChainArgs& a) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("fma.rn.bf16x2 %0, %0, %1, %2;" : "+r"(x) : "r"(a.b_mul), "r"(a.b_add));
#elif defined(__CUDA_ARCH__)
    asm volatile("mov.b32 %0, %0;" : "+r"(x));
#else
    x ^= a.b_add;
#endif
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return x; }
};

// F2I, reading the last result's integer bits as a float: every step is the same conversion
// (an alternating F2I / I2F chain would mix I2FP, which Ampere and later run on the FMA pipe).
struct Cvt : Compute {
  using T = uint32_t;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned, unsigned lane, unsigned c) { return a.i_add + lane + c; }
  static MEMTOPO_INLINE T step(T x, const ChainArgs&) {
    ROOFLINE_STEP("{\n\t.reg .f32 t;\n\tmov.b32 t, %0;\n\tcvt.rzi.s32.f32 %0, t;\n\t}", x = uint32_t(int32_t(bits_of<float>(x))), "+r"(x));
    return x;
  }
  static MEMTOPO_HD uint32_t bits(T x) { return x; }
};

// Dependent ld.shared: word i holds the address of word i + 32, so lane l stays in bank l and
// a warp's 32 loads are one conflict-free wavefront.
struct SharedLoad : Load {
  using T = uint32_t;  // a shared-window address
  static constexpr memtopo::device::Path kPath = memtopo::device::Path::Shared;
  static constexpr bool kSharedRing = true;
  static constexpr unsigned kWarmSteps = 0;  // shared memory has no cache to warm
  static MEMTOPO_HD void prepare(const ChainArgs& a) {
    namespace md = memtopo::device;
    uint32_t* w = a.shared_ring;
    for (unsigned i = md::thread_index(); i < kSharedRingWords; i += md::block_threads())
      w[i] = md::shared_address(&w[(i + 32) % kSharedRingWords]);
  }
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned warp, unsigned lane, unsigned c) {
    const unsigned row = (warp * 8 + c) % (kSharedRingWords / 32);
    return memtopo::device::shared_address(&a.shared_ring[row * 32 + lane]);
  }
  static MEMTOPO_HD uint32_t bits(T x) { return x; }
};

// Dependent ld.global.ca over 8 KiB: lane l of every row points at lane l of the next row, so a
// warp's 32 loads fall in one 256 B row (two lines), and the warm-up pass brings all rows in.
struct GlobalLoadL1 : Load {
  using T = unsigned long long;  // a generic address
  static constexpr memtopo::device::Path kPath = memtopo::device::Path::GlobalCa;
  static constexpr unsigned kWarmSteps = kGlobalRingRows;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned warp, unsigned lane, unsigned c) {
    return reinterpret_cast<T>(a.ring + ((warp * 8 + c) % kGlobalRingRows) * 32 + lane);
  }
  static MEMTOPO_HD uint32_t bits(T x) { return uint32_t(x) ^ uint32_t(x >> 32); }
};

// Dependent ld.global.cg over a ring within the L2 and past the L1 (rows of 32 pointers, row r
// pointing at a row 0.618 of the ring away). Chains of other warps, blocks and ILP slots start
// at rows far apart.
struct GlobalLoadL2 : Load {
  using T = unsigned long long;
  static constexpr memtopo::device::Path kPath = memtopo::device::Path::GlobalCg;
  static constexpr unsigned kWarmSteps = 0;
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned warp, unsigned lane, unsigned c) {
    const unsigned long long chain = (unsigned long long)(memtopo::device::block_index()) * 512 + warp * 8 + c;
    return reinterpret_cast<T>(a.l2_ring + chain * 7919 % a.l2_rows * 32 + lane);
  }
  static MEMTOPO_HD uint32_t bits(T x) { return uint32_t(x) ^ uint32_t(x >> 32); }
};

// The row of chain number n of the DRAM chains: n x a prime modulo the window's rows (fewer than
// the prime: a bijection), which scatters neighbours over the window (no DRAM page or prefetch
// favours the next). Any count of rows: a power of two nearly doubled the rows of an H100's
// loads, which the simulated GPU backs with host memory.
MEMTOPO_INLINE unsigned long long dram_row(unsigned long long n, unsigned long long rows) {
  return n % rows * 2654435761ull % rows;
}

// Dependent ld.global.cg.u64 of rows no load read since the window's numbers last came round:
// chain k's j-th load reads the row of number first + k + j x chains, whose word of each lane
// points at the same lane's word of the row of number first + k + (j + 1) x chains
// (DramWindows::link), so no two loads of a launch share a row.
struct GlobalLoadDram : Load {
  using T = unsigned long long;
  static constexpr memtopo::device::Path kPath = memtopo::device::Path::GlobalCg;
  static constexpr unsigned kWarmSteps = 0;  // a warmed row would be an L2 hit
  static MEMTOPO_HD T start(const ChainArgs& a, unsigned warp, unsigned lane, unsigned c) {
    namespace md = memtopo::device;
    const unsigned long long n =
        a.dram_first_chain + ((unsigned long long)(md::block_index()) * (md::block_threads() / 32) + warp) * a.ilp + c;
    return reinterpret_cast<T>(a.dram_rows + dram_row(n, a.dram_window_rows) * 32 + lane);
  }
  static MEMTOPO_HD uint32_t bits(T x) { return uint32_t(x) ^ uint32_t(x >> 32); }
};

}  // namespace occupancy_roofline
