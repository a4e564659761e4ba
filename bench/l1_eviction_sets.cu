// memtopo-l1-eviction-sets: minimal eviction sets of the L1 data cache of one SM, found by group
// testing (plain CUDA, none of memtopo's code), the evidence behind the L1's ways where its set
// index is a hash that strides cannot see.
//
//   memtopo-l1-eviction-sets [DEVICE] [TARGETS] [CARVEOUT_PERCENT] [POOL_FACTOR] [X_MODE] [PASSES] [THREADS]
//                            [LOAD] [MISS_CYCLES] [BUFFER_MIB]
//
// One block does everything, so one SM's L1 is the cache under test: its thread 0 loads a
// target line x, THREADS (default 1) threads load the sets. A pool of POOL_FACTOR (default 3)
// times the L1's lines is drawn at random from a 256 MiB buffer. "S evicts x" when x, loaded
// with .ca (X_MODE 1: and once more, a hit; 2: after S's first pass, not before it), then every
// line of S loaded with .ca in PASSES (default 4) passes, loads again slower than 100 cycles
// (an L1 hit takes about 32 on the GPUs measured, an L2 hit about 280). Each test is the majority of three trials. The
// reduction splits S into 64 groups (single lines once S has fewer) and drops the first group
// whose removal still evicts x, until no group can go: a set from which no line can go, whose
// size is the number of ways of x's set where the replacement keeps the last W lines of a set.
// The lists of candidates live in global memory read and written with .cg, which does not
// allocate in the L1. CARVEOUT_PERCENT (default 0: the largest L1) is the kernel's preferred
// shared-memory carveout. Prints per target: the pool's verdict, the minimal set's size,
// whether every line of it is needed (each left out in turn, three trials), the tests it took,
// the set's line numbers (offset / 128) for a later look at the index function, and the cycles
// per line of each pass of the first trial over the whole pool (hits or misses of S itself).
#include <cuda_runtime.h>

#include "bench_common.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kLine = 128;
constexpr int kGroups = 64;
// LOAD "cg" (default "ca"): S and x are loaded .cg, the L2 is the cache under test (the pool
// factor still counts in units of L1 + shared lines: about 100 per 25 MiB on an H100), and a
// load slower than MISS_CYCLES (default 100) missed the cache under test. BUFFER_MIB: the
// buffer the lines are drawn from (default 256).
__constant__ int load_cg;
__constant__ long long miss_cycles;

__device__ __forceinline__ unsigned load_line(const unsigned* p) { return load_cg ? __ldcg(p) : __ldca(p); }

__device__ volatile unsigned sink;
__constant__ int passes_of_s;  // passes over S per trial (PASSES, default 4)
// The cycles of each pass of the first trial (whether the L1 keeps S's lines), up to 64.
__device__ long long first_trial_pass_cycles[64];
__device__ int first_trial_done;
__device__ long long first_trial_x_cycles;  // x's first load in the first trial

// The time of one .ca load of `p`; the volatile store waits for it before the second clock.
__device__ long long timed_load(const unsigned* p) {
  const long long t0 = clock64();
  const unsigned v = load_line(p);
  sink = v;
  return clock64() - t0;
}

// One trial: thread 0 loads x into the L1, the block loads the candidates of S but
// [skip_begin, skip_end) PASSES times (each thread every blockDim-th line, a barrier between
// passes), then thread 0 loads x again. The lines hold zeros; `mask` (its low bits 0 at run
// time) makes each thread use its loads before the barrier, which then follows their end.
__device__ bool evicts_once(const unsigned* buf, uint32_t x, const uint32_t* s, uint32_t n, uint32_t skip_begin,
                            uint32_t skip_end, unsigned mask) {
  __shared__ bool evicted;
  const unsigned* px = buf + uint64_t(x) * (kLine / 4);
  const unsigned low = mask & 0x3fffffffu;
  const bool record = threadIdx.x == 0 && !first_trial_done;
  unsigned acc = 0;
  // x's first load, before S or (mask bit 30) after S's first pass; its time is kept.
  auto load_x = [&] {
    if (threadIdx.x != 0) return;
    const long long t = timed_load(px);
    if (record) first_trial_x_cycles = t;
    if (mask & 0x80000000u) acc += load_line(px + (acc & low));  // x hit once more
    if (acc & low) sink = acc;
  };
  if (!(mask & 0x40000000u)) load_x();
  __syncthreads();
  const uint32_t kept = n - (skip_end - skip_begin);
  long long t_pass = clock64();
  for (int pass = 0; pass < passes_of_s; ++pass) {
    if (pass == 1 && (mask & 0x40000000u)) {
      load_x();
      __syncthreads();
    }
    for (uint32_t i = threadIdx.x; i < kept; i += blockDim.x) {
      const uint32_t j = i < skip_begin ? i : i + (skip_end - skip_begin);
      acc += load_line(buf + uint64_t(__ldcg(s + j)) * (kLine / 4));
    }
    if (acc & low) sink = acc;
    __syncthreads();
    if (record && pass < 64) {
      const long long now = clock64();
      first_trial_pass_cycles[pass] = now - t_pass;
      t_pass = now;
    }
  }
  if (record) first_trial_done = 1;
  if (threadIdx.x == 0) evicted = timed_load(px + (acc & low)) > miss_cycles;
  __syncthreads();
  return evicted;
}

__device__ bool evicts(const unsigned* buf, uint32_t x, const uint32_t* s, uint32_t n, uint32_t skip_begin,
                       uint32_t skip_end, unsigned mask, unsigned long long* tests) {
  int yes = 0;
  for (int t = 0; t < 3; ++t) yes += evicts_once(buf, x, s, n, skip_begin, skip_end, mask) ? 1 : 0;
  *tests += 1;
  return yes >= 2;
}

// Every thread of the block runs this (the same decisions: evicts() returns the same to all);
// thread 0 alone rewrites S. out[0]: the pool evicts x; out[1]: the minimal set's size; out[2]:
// lines of it that could go alone; out[3]: tests; then the set's line numbers.
__global__ void reduce(const unsigned* buf, uint32_t x, uint32_t* s, uint32_t n, unsigned mask, unsigned long long* out) {
  unsigned long long tests = 0;
  const bool pool_evicts = evicts(buf, x, s, n, n, n, mask, &tests);
  if (threadIdx.x == 0) out[0] = pool_evicts ? 1 : 0;
  if (!pool_evicts) {
    if (threadIdx.x == 0) out[1] = n, out[3] = tests;
    return;
  }
  bool removed = true;
  while (removed && n > 1) {
    removed = false;
    const uint32_t groups = n < kGroups ? n : kGroups;
    for (uint32_t g = 0; g < groups && !removed; ++g) {
      const uint32_t b = uint32_t(uint64_t(n) * g / groups), e = uint32_t(uint64_t(n) * (g + 1) / groups);
      if (!evicts(buf, x, s, n, b, e, mask, &tests)) continue;
      if (threadIdx.x == 0)
        for (uint32_t i = e; i < n; ++i) __stcg(s + b + (i - e), __ldcg(s + i));  // S without the group
      __threadfence_block();
      __syncthreads();
      n -= e - b;
      removed = true;
    }
  }
  unsigned long long needless = 0;
  for (uint32_t i = 0; i < n; ++i) needless += evicts(buf, x, s, n, i, i + 1, mask, &tests) ? 1 : 0;
  if (threadIdx.x != 0) return;
  out[1] = n;
  out[2] = needless;
  out[3] = tests;
  for (uint32_t i = 0; i < n && i < 256; ++i) out[4 + i] = __ldcg(s + i);
}

}  // namespace

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  const int targets = argc > 2 ? std::atoi(argv[2]) : 8;
  const int carveout = argc > 3 ? std::atoi(argv[3]) : 0;
  const double pool_factor = argc > 4 ? std::atof(argv[4]) : 3.0;
  // X_MODE: 1 x hit once more; 2 x loaded after S's first pass instead of before it; 3 both.
  const int x_mode = argc > 5 ? std::atoi(argv[5]) : 0;
  const int passes = argc > 6 ? std::atoi(argv[6]) : 4;
  const int threads = argc > 7 ? std::atoi(argv[7]) : 1;
  const int cg = argc > 8 && std::string(argv[8]) == "cg" ? 1 : 0;
  const long long miss = argc > 9 ? std::atoll(argv[9]) : 100;
  const uint64_t kBufferBytes = (argc > 10 ? uint64_t(std::atoll(argv[10])) : 256) << 20;
  CHECK(cudaMemcpyToSymbol(load_cg, &cg, sizeof cg));
  CHECK(cudaMemcpyToSymbol(miss_cycles, &miss, sizeof miss));
  CHECK(cudaMemcpyToSymbol(passes_of_s, &passes, sizeof passes));
  CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  CHECK(cudaFuncSetAttribute(reduce, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
  // The L1's lines at this carveout are not known here: the pool is sized from the unified
  // L1/shared storage per SM, an upper bound on the L1.
  const uint64_t storage_lines = uint64_t(prop.sharedMemPerMultiprocessor + 32 * 1024) / kLine;
  const uint32_t pool = uint32_t(pool_factor * double(storage_lines));
  std::printf("%s: carveout %d %%, pool %u lines (%.1f x %llu lines of L1 + shared), %d passes by %d threads, "
              "miss > %lld cycles\n",
              prop.name, carveout, pool, pool_factor, static_cast<unsigned long long>(storage_lines), passes,
              threads, miss);
  unsigned* buf = nullptr;
  uint32_t* s = nullptr;
  unsigned long long* out = nullptr;
  CHECK(cudaMalloc(&buf, kBufferBytes));
  CHECK(cudaMemset(buf, 0, kBufferBytes));
  CHECK(cudaMalloc(&s, pool * sizeof(uint32_t)));
  CHECK(cudaMalloc(&out, (4 + 256) * sizeof(unsigned long long)));
  const uint32_t lines = uint32_t(kBufferBytes / kLine);
  uint64_t seed = 0x6c31657669637473ull;
  std::vector<uint32_t> all(lines);
  for (uint32_t i = 0; i < lines; ++i) all[i] = i;
  for (int t = 0; t < targets; ++t) {
    // Distinct random lines: the first is the target, the next `pool` the candidates.
    for (uint32_t i = 0; i <= pool; ++i) std::swap(all[i], all[i + next_random(seed) % (lines - i)]);
    const uint32_t x = all[0];
    CHECK(cudaMemcpy(s, all.data() + 1, pool * sizeof(uint32_t), cudaMemcpyHostToDevice));
    const int zero = 0;
    CHECK(cudaMemcpyToSymbol(first_trial_done, &zero, sizeof zero));
    reduce<<<1, threads>>>(buf, x, s, pool, (x_mode & 1 ? 0x80000000u : 0u) | (x_mode & 2 ? 0x40000000u : 0u), out);
    std::vector<unsigned long long> h(4 + 256);
    CHECK(cudaMemcpy(h.data(), out, h.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::printf("target %d (line %u): pool evicts %s, minimal set %llu lines, %llu could go alone, %llu tests; lines",
                t, x, h[0] ? "yes" : "no", h[1], h[2], h[3]);
    for (unsigned long long i = 0; h[0] && i < h[1] && i < 256; ++i) std::printf(" %llu", h[4 + i]);
    std::printf("\n");
    long long pc[64];
    CHECK(cudaMemcpyFromSymbol(pc, first_trial_pass_cycles, sizeof pc));
    long long xc = 0;
    CHECK(cudaMemcpyFromSymbol(&xc, first_trial_x_cycles, sizeof xc));
    std::printf("  x's first load %lld cycles; cycles per line of each pass over the pool (first trial):", xc);
    for (int i = 0; i < passes && i < 64; ++i) std::printf(" %.1f", double(pc[i]) / pool);
    std::printf("\n");
    std::fflush(stdout);
  }
  return 0;
}
