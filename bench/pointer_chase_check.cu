// memtopo-pointer-chase-check: an independent check of the load-to-use latency memtopo
// reports (latency_cycles, docs/format.md). Plain CUDA C++, none of memtopo's code: 64-bit
// pointers, p = *p, 32 loads unrolled between two clock64() reads, the last loaded pointer
// stored to shared memory before the second read so that it waits for the last load. The
// same window without loads gives the cost of the two reads and the store, which is taken
// off. Prints the median cycles per load over many windows, for footprints that stay in L1
// (.ca and the read-only path) and in L2 (.cg).
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

template <int P>
__global__ void chase(unsigned long long* start, int warm_loads, long long* window_cycles, long long* empty_cycles) {
  __shared__ unsigned long long sink;
  unsigned long long* p = start;
  for (int i = 0; i < warm_loads; ++i) p = next<P>(p);
  for (int w = 0; w < kWindows; ++w) {
    const long long t0 = clock64();
#pragma unroll
    for (int i = 0; i < kLoadsPerWindow; ++i) p = next<P>(p);
    *static_cast<volatile unsigned long long*>(&sink) = reinterpret_cast<unsigned long long>(p);
    const long long t1 = clock64();
    window_cycles[w] = t1 - t0;
    const long long e0 = clock64();
    *static_cast<volatile unsigned long long*>(&sink) = reinterpret_cast<unsigned long long>(p);
    const long long e1 = clock64();
    empty_cycles[w] = e1 - e0;
  }
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

// Cycles per load of a chase over `footprint` bytes, one pointer every `stride` bytes.
template <int P>
double measure(unsigned long long* buf, size_t footprint, size_t stride, long long* d_out) {
  const size_t n = footprint / stride, words = stride / 8;
  std::vector<unsigned long long> host(footprint / 8, 0);
  // One cycle through the lines in a scattered order: i -> 5 i + 1 modulo n (n a power of two).
  for (size_t i = 0; i < n; ++i) host[i * words] = reinterpret_cast<unsigned long long>(buf + ((i * 5 + 1) % n) * words);
  check(cudaMemcpy(buf, host.data(), footprint, cudaMemcpyHostToDevice), "cudaMemcpy");
  chase<P><<<1, 1>>>(buf, int(4 * n), d_out, d_out + kWindows);
  check(cudaGetLastError(), "launch");
  check(cudaDeviceSynchronize(), "kernel");
  std::vector<long long> window(kWindows), empty(kWindows);
  check(cudaMemcpy(window.data(), d_out, sizeof(long long) * kWindows, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check(cudaMemcpy(empty.data(), d_out + kWindows, sizeof(long long) * kWindows, cudaMemcpyDeviceToHost), "cudaMemcpy");
  const double raw = median(window) / kLoadsPerWindow, bare = median(empty);
  std::printf("    raw %.2f cycles per load; window without loads %.0f cycles\n", raw, bare);
  return (median(window) - bare) / kLoadsPerWindow;
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
  cudaFree(buf);
  cudaFree(d_out);
  return 0;
}
