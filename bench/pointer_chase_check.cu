// memtopo-pointer-chase-check: an independent check of the load-to-use latency memtopo
// reports (latency_cycles, docs/format.md). Plain CUDA C++, none of memtopo's code: 64-bit
// pointers, p = *p, 32 loads unrolled between two clock64() reads, the last loaded pointer
// stored to shared memory before the second read so that it waits for the last load. The
// same window without loads gives the cost of the two reads and the store, which is taken
// off. Prints the median cycles per load over many windows, for footprints that stay in L1
// (.ca and the read-only path) and in L2 (.cg), and for 32-bit chases of shared memory and of
// the constant cache (ld.shared / ld.const, the address of the next word in the loaded word).
//
//   memtopo-pointer-chase-check [DEVICE_ORDINAL]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

constexpr int kLoadsPerWindow = 32;
constexpr int kWindows = 2048;

enum Path { kCa = 0, kNc = 1, kCg = 2 };

template <int P>
__device__ __forceinline__ unsigned long long* next(unsigned long long* p) {
  if (P == kCa) return reinterpret_cast<unsigned long long*>(__ldca(p));
  if (P == kNc) return reinterpret_cast<unsigned long long*>(__ldg(p));
  return reinterpret_cast<unsigned long long*>(__ldcg(p));
}

// kWindows windows of kLoadsPerWindow dependent loads `p = next(p)`, each between two clock
// reads, the last pointer stored to shared memory before the second read; then the same window
// without loads. T is the pointer's type, 64-bit generic or 32-bit state-space.
template <class T, class Next>
__device__ void time_windows(T p, Next next, long long* window_cycles, long long* empty_cycles) {
  __shared__ T sink;
  for (int w = 0; w < kWindows; ++w) {
    const long long t0 = clock64();
#pragma unroll
    for (int i = 0; i < kLoadsPerWindow; ++i) p = next(p);
    *static_cast<volatile T*>(&sink) = p;
    const long long t1 = clock64();
    window_cycles[w] = t1 - t0;
    const long long e0 = clock64();
    *static_cast<volatile T*>(&sink) = p;
    const long long e1 = clock64();
    empty_cycles[w] = e1 - e0;
  }
}

template <int P>
__global__ void chase(unsigned long long* start, int warm_loads, long long* window_cycles, long long* empty_cycles) {
  unsigned long long* p = start;
  for (int i = 0; i < warm_loads; ++i) p = next<P>(p);
  time_windows(p, [](unsigned long long* q) { return next<P>(q); }, window_cycles, empty_cycles);
}

// 32-bit chases: a ring of 64 words, each holding the state-space address of the next.
constexpr int kRingWords = 64;
__constant__ unsigned const_ring[kRingWords];

// The ring's address in the constant state space (the generic address converted).
__global__ void const_ring_base(unsigned* base) {
  unsigned long long a;
  asm("cvta.to.const.u64 %0, %1;" : "=l"(a) : "l"(const_ring));
  *base = unsigned(a);
}

template <bool Shared>
__device__ __forceinline__ unsigned next32(unsigned p) {
  if (Shared) asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  else asm volatile("ld.const.u32 %0, [%0];" : "+r"(p)::"memory");
  return p;
}

template <bool Shared>
__global__ void chase32(long long* window_cycles, long long* empty_cycles) {
  __shared__ unsigned ring[kRingWords];
  unsigned p;
  if (Shared) {
    for (int i = 0; i < kRingWords; ++i) ring[i] = static_cast<unsigned>(__cvta_generic_to_shared(&ring[(i + 1) % kRingWords]));
    p = static_cast<unsigned>(__cvta_generic_to_shared(&ring[0]));
  } else {
    p = const_ring[0];
  }
  for (int i = 0; i < 4 * kRingWords; ++i) p = next32<Shared>(p);
  time_windows(p, [](unsigned q) { return next32<Shared>(q); }, window_cycles, empty_cycles);
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  std::fprintf(stderr, "memtopo-pointer-chase-check: %s: %s\n", what, cudaGetErrorString(e));
  std::exit(1);
}

double median(std::vector<long long> v) {
  std::sort(v.begin(), v.end());
  return double(v[v.size() / 2]);
}

// After a chase kernel: its windows' median less the empty window's, per load (printing both).
double per_load(const long long* d_out) {
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "kernel");
  std::vector<long long> window(kWindows), empty(kWindows);
  check(cudaMemcpy(window.data(), d_out, sizeof(long long) * kWindows, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(empty.data(), d_out + kWindows, sizeof(long long) * kWindows, cudaMemcpyDeviceToHost), "cudaMemcpy");
  const double raw = median(window) / kLoadsPerWindow, bare = median(empty);
  std::printf("    raw %.2f cycles per load; window without loads %.0f cycles\n", raw, bare);
  return (median(window) - bare) / kLoadsPerWindow;
}

// Cycles per load of a chase over `footprint` bytes, one pointer every `stride` bytes.
template <int P>
double measure(unsigned long long* buf, size_t footprint, size_t stride, long long* d_out) {
  const size_t n = footprint / stride, words = stride / 8;
  std::vector<unsigned long long> host(footprint / 8, 0);
  // One cycle through the lines in a scattered order: i -> 5 i + 1 modulo n (n a power of two).
  for (size_t i = 0; i < n; ++i) host[i * words] = reinterpret_cast<unsigned long long>(buf + ((i * 5 + 1) % n) * words);
  check(cudaMemcpy(buf, host.data(), footprint, cudaMemcpyHostToDevice), "cudaMemcpy");
  chase<P><<<1, 1>>>(buf, int(4 * n), d_out, d_out + kWindows);
  return per_load(d_out);
}

// Cycles per load of a 32-bit chase in shared memory or the constant cache.
template <bool Shared>
double measure32(long long* d_out) {
  if (!Shared) {
    unsigned* d_base = nullptr;
    unsigned base = 0;
    check(cudaMalloc(&d_base, sizeof(unsigned)), "cudaMalloc");
    const_ring_base<<<1, 1>>>(d_base);
    check(cudaMemcpy(&base, d_base, sizeof base, cudaMemcpyDeviceToHost), "cudaMemcpy");
    cudaFree(d_base);
    std::vector<unsigned> ring(kRingWords);
    for (int i = 0; i < kRingWords; ++i) ring[i] = base + 4u * unsigned((i + 1) % kRingWords);
    check(cudaMemcpyToSymbol(const_ring, ring.data(), sizeof(unsigned) * kRingWords), "cudaMemcpyToSymbol");
  }
  chase32<Shared><<<1, 1>>>(d_out, d_out + kWindows);
  return per_load(d_out);
}

}  // namespace

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  std::printf("device %d: %s, compute capability %d.%d\n", device, prop.name, prop.major, prop.minor);
  unsigned long long* buf = nullptr;
  long long* d_out = nullptr;
  check(cudaMalloc(&buf, 1 << 20), "cudaMalloc");
  check(cudaMalloc(&d_out, 2 * sizeof(long long) * kWindows), "cudaMalloc");
  std::printf("load-to-use, %d dependent 64-bit loads between two clock reads, median of %d windows:\n",
              kLoadsPerWindow, kWindows);
  std::printf("  ld.global.ca, 16 KiB, 128 B apart (L1 hits):\n");
  std::printf("  -> %.2f cycles per load\n", measure<kCa>(buf, 16 << 10, 128, d_out));
  std::printf("  ld.global.nc, 16 KiB, 128 B apart (read-only path hits):\n");
  std::printf("  -> %.2f cycles per load\n", measure<kNc>(buf, 16 << 10, 128, d_out));
  std::printf("  ld.global.cg, 512 KiB, 128 B apart (L2 hits):\n");
  std::printf("  -> %.2f cycles per load\n", measure<kCg>(buf, 512 << 10, 128, d_out));
  std::printf("  ld.shared.u32, a ring of %d words:\n", kRingWords);
  std::printf("  -> %.2f cycles per load\n", measure32<true>(d_out));
  std::printf("  ld.const.u32, a ring of %d words (constant L1 hits):\n", kRingWords);
  std::printf("  -> %.2f cycles per load\n", measure32<false>(d_out));
  cudaFree(buf);
  cudaFree(d_out);
  return 0;
}
