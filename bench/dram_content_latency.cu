// memtopo-dram-content-latency: does what a line holds change how long a DRAM read of it takes
// on a GPU? (mlp/loads-in-flight reads about 600 cycles per random DRAM load from a buffer
// mapped fresh and about 680 from a pool buffer another probe wrote; docs/results/log/h100.md,
// "What l1d-geometry leaves behind".) Plain CUDA, none of memtopo's code.
//
//   memtopo-dram-content-latency [BUFFER_MIB] [ROUNDS]
//   memtopo-dram-content-latency BUFFER_MIB sparse
//   memtopo-dram-content-latency BUFFER_MIB untouched
//
// One thread chases a random cycle of 8-byte pointers, one per 128 B line, over a cudaMalloc
// buffer of BUFFER_MIB (default 2048), after a warm-up of 2^20 loads; the rest of every line
// holds, by variant: zeros, ones (0xff), random bytes, or zeros written over a kernel's random
// bytes (the content of "zeros" with the history of "random"). Prints cycles per load of 8192
// timed loads for each variant, ROUNDS times (default 2) in turn. `sparse`: the pointers alone
// are written, by a kernel, into a buffer fresh from cudaMalloc (the rest of each line as the
// allocation left it), then into the same buffer after a kernel wrote every word of it, then
// into a second fresh buffer. `untouched`: no pointers; one thread loads random lines (the next
// line drawn after the last load returned, whatever it held) from a buffer fresh from
// cudaMalloc that nothing wrote, then from the same buffer after a kernel wrote every word,
// then from a second fresh buffer.
#include <cuda_runtime.h>

#include "bench_common.cuh"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kLine = 128;

__global__ void chase(const uint64_t* start, uint64_t warm, uint64_t timed, unsigned long long* out) {
  const uint64_t* p = start;
  for (uint64_t i = 0; i < warm; ++i) p = reinterpret_cast<const uint64_t*>(__ldcg(p));
  const long long t0 = clock64();
  for (uint64_t i = 0; i < timed; ++i) p = reinterpret_cast<const uint64_t*>(__ldcg(p));
  const long long t1 = clock64();
  out[0] = static_cast<unsigned long long>(t1 - t0);
  out[1] = reinterpret_cast<uint64_t>(p);  // keeps the chase
}

__global__ void scribble(uint64_t* buf, uint64_t words, uint64_t seed) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < words; i += uint64_t(gridDim.x) * blockDim.x) {
    uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
    x ^= x >> 31;
    buf[i] = x * 0xbf58476d1ce4e5b9ull;
  }
}

__global__ void link(uint64_t* buf, const uint32_t* order, uint64_t lines) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < lines; i += uint64_t(gridDim.x) * blockDim.x)
    buf[uint64_t(order[i]) * (kLine / 8)] = reinterpret_cast<uint64_t>(buf) + uint64_t(order[(i + 1) % lines]) * kLine;
}

// Random lines, each load waiting for the one before (its value feeds the draw without
// changing it).
__global__ void random_lines(const uint64_t* buf, uint64_t lines, uint64_t warm, uint64_t timed, unsigned long long* out) {
  uint64_t x = 0x9e3779b97f4a7c15ull;
  long long t0 = 0;
  for (uint64_t i = 0; i < warm + timed; ++i) {
    if (i == warm) t0 = clock64();
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const uint64_t v = __ldcg(buf + (x % lines) * (kLine / 8));
    x += v == 0x5eedf00dcafef00dull ? 1 : 0;
  }
  out[0] = static_cast<unsigned long long>(clock64() - t0);
  out[1] = x;
}

double chase_cycles(const uint64_t* buf, uint32_t first, unsigned long long* out) {
  chase<<<1, 1>>>(buf + uint64_t(first) * (kLine / 8), uint64_t(1) << 20, 8192, out);
  unsigned long long h[2];
  CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  return double(h[0]) / 8192.0;
}

}  // namespace

int main(int argc, char** argv) {
  const uint64_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 2048;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  const uint64_t bytes = mib << 20, lines = bytes / kLine, words = bytes / 8;
  uint64_t* buf = nullptr;
  unsigned long long* out = nullptr;
  CHECK(cudaMalloc(&buf, bytes));
  CHECK(cudaMalloc(&out, 16));
  // One random cycle through every line (Sattolo).
  std::vector<uint32_t> order(lines);
  for (uint64_t i = 0; i < lines; ++i) order[i] = uint32_t(i);
  uint64_t s = 0x6d656d746f706full;
  for (uint64_t i = lines - 1; i > 0; --i) std::swap(order[i], order[next_random(s) % i]);
  if (argc > 2 && std::string(argv[2]) == "untouched") {
    const char* what[] = {"fresh, never written", "after every word written", "second fresh, never written"};
    for (int v = 0; v < 3; ++v) {
      if (v == 1) {
        scribble<<<1024, 256>>>(buf, words, 9);
      } else if (v == 2) {
        uint64_t* other = nullptr;
        CHECK(cudaMalloc(&other, bytes));
        CHECK(cudaFree(buf));
        buf = other;
      }
      CHECK(cudaDeviceSynchronize());
      random_lines<<<1, 1>>>(buf, lines, uint64_t(1) << 18, 8192, out);
      unsigned long long h[2];
      CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
      std::printf("%-28s %.1f cycles per load\n", what[v], double(h[0]) / 8192.0);
      std::fflush(stdout);
    }
    return 0;
  }
  if (argc > 2 && std::string(argv[2]) == "sparse") {
    uint32_t* dev_order = nullptr;
    CHECK(cudaMalloc(&dev_order, lines * 4));
    CHECK(cudaMemcpy(dev_order, order.data(), lines * 4, cudaMemcpyHostToDevice));
    const char* what[] = {"fresh, pointers only", "after every word written", "second fresh, pointers only"};
    for (int v = 0; v < 3; ++v) {
      if (v == 1) {
        scribble<<<1024, 256>>>(buf, words, 5);
      } else if (v == 2) {
        uint64_t* other = nullptr;
        CHECK(cudaMalloc(&other, bytes));
        CHECK(cudaFree(buf));
        buf = other;
      }
      link<<<1024, 256>>>(buf, dev_order, lines);
      CHECK(cudaDeviceSynchronize());
      std::printf("%-28s %.1f cycles per load\n", what[v], chase_cycles(buf, order[0], out));
      std::fflush(stdout);
    }
    return 0;
  }
  std::vector<uint64_t> host(words);
  const char* names[] = {"zeros", "ones", "random", "zeros-over-random"};
  for (int r = 0; r < rounds; ++r) {
    for (int v = 0; v < 4; ++v) {
      if (v == 3) {
        scribble<<<1024, 256>>>(buf, words, uint64_t(r) * 7 + 1);
        CHECK(cudaDeviceSynchronize());
      }
      uint64_t g = 0x1234567ull + uint64_t(r);
      for (uint64_t i = 0; i < words; ++i)
        host[i] = v == 1 ? ~0ull : v == 2 ? next_random(g) : 0;
      for (uint64_t i = 0; i < lines; ++i)
        host[uint64_t(order[i]) * (kLine / 8)] =
            reinterpret_cast<uint64_t>(buf) + uint64_t(order[(i + 1) % lines]) * kLine;
      CHECK(cudaMemcpy(buf, host.data(), bytes, cudaMemcpyHostToDevice));
      const uint64_t* start = buf + uint64_t(order[0]) * (kLine / 8);
      chase<<<1, 1>>>(start, uint64_t(1) << 20, 8192, out);
      unsigned long long h[2];
      CHECK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
      std::printf("round %d %-18s %.1f cycles per load\n", r + 1, names[v], double(h[0]) / 8192.0);
      std::fflush(stdout);
    }
  }
  return 0;
}
