// memtopo-bandwidth-check: an independent check of the stream rates memtopo reports
// (throughput.*, docs/global-throughput.md). Plain CUDA C++, none of memtopo's code. Reads
// 16-byte vectors in two shapes and prints TB/s by CUDA events:
//  - "grid": one element per thread over a huge grid (the classic stream kernel, no loop);
//  - "shared": every block reads the whole of a small footprint from its own starting round,
//    so that each line is read by every SM (L2 lines a far SM copies near);
//  - "distinct": every block reads its own slice of an L2-sized footprint (its own offset,
//    ILP 4 loads of 16 B through .cg), so that no two SMs ask for the same line: the L2's own
//    read bandwidth, which merged requests for shared lines do not inflate.
// "profile" runs one point of each L2 shape once (for ncu to count what each level served).
//
//   memtopo-bandwidth-check [DEVICE_ORDINAL] [profile]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench_common.cuh"

namespace {

__global__ void grid_read(const uint4* p, unsigned long long n, unsigned* sink) {
  const unsigned long long i = (unsigned long long)(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint4 v = __ldcg(p + i);
  if ((v.x ^ v.y ^ v.z ^ v.w) == 0x9e3779b9u) sink[0] = 1;
}

__global__ void grid_write(uint4* p, unsigned long long n) {
  const unsigned long long i = (unsigned long long)(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) p[i] = make_uint4(unsigned(i), 0, 0, 0);
}

// Every block sweeps all `n` vectors (a power of two), `passes` times, from its own round on.
__global__ void shared_read(const uint4* p, unsigned long long n, unsigned passes, unsigned* sink) {
  unsigned acc = 0;
  const unsigned long long start = (unsigned long long)(blockIdx.x) * blockDim.x * 2 & (n - 1);
  for (unsigned q = 0; q < passes; ++q)
    for (unsigned long long k = threadIdx.x; k < n; k += 2 * blockDim.x) {
      const uint4 a = __ldcg(p + ((start + k) & (n - 1))), b = __ldcg(p + ((start + k + blockDim.x) & (n - 1)));
      acc ^= a.x ^ b.y;
    }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// Block b reads vectors [b * slice, (b + 1) * slice) `passes` times, each thread four
// independent loads a step (`slice` a multiple of 4 x blockDim.x).
__global__ void distinct_read(const uint4* p, unsigned long long slice, unsigned passes, unsigned* sink) {
  const uint4* s = p + (unsigned long long)(blockIdx.x) * slice;
  const unsigned b = blockDim.x;
  unsigned acc = 0;
  for (unsigned q = 0; q < passes; ++q)
    for (unsigned long long k = threadIdx.x; k < slice; k += 4ull * b) {
      const uint4 w = __ldcg(s + k), x = __ldcg(s + k + b), y = __ldcg(s + k + 2 * b), z = __ldcg(s + k + 3 * b);
      acc ^= w.x ^ x.y ^ y.z ^ z.w;
    }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

float time_ms(cudaEvent_t a, cudaEvent_t b) {
  float ms = 0;
  cudaEventSynchronize(b);
  cudaEventElapsedTime(&ms, a, b);
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  const int dev = argc > 1 ? std::atoi(argv[1]) : 0;
  if (cudaSetDevice(dev) != cudaSuccess) return std::printf("no CUDA device %d\n", dev), 1;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const unsigned long long big = 4ull << 30;
  uint4* p = nullptr;
  unsigned* sink = nullptr;
  if (cudaMalloc(&p, big) != cudaSuccess || cudaMalloc(&sink, 64) != cudaSuccess) return std::printf("cudaMalloc failed\n"), 1;
  cudaMemset(p, 0, big);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  const unsigned long long n = big / 16;
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev);
  // Distinct lines: a footprint of a quarter and an eighth of the L2, cut into one slice per
  // block; passes for about 16 GiB of reads.
  auto distinct = [&](unsigned long long footprint, unsigned per_sm, unsigned threads, unsigned passes) {
    const unsigned blocks = per_sm * unsigned(sms);
    const unsigned long long slice = footprint / 16 / blocks / (4ull * threads) * (4ull * threads);
    if (slice == 0) return 0.0;  // a slice under one step of the block: no such point
    distinct_read<<<blocks, threads>>>(p, slice, 1, sink);
    cudaEventRecord(a);
    distinct_read<<<blocks, threads>>>(p, slice, passes, sink);
    cudaEventRecord(b);
    return double(slice) * 16 * blocks * passes / (time_ms(a, b) * 1e-3) / 1e12;
  };
  if (argc > 2 && std::string(argv[2]) == "profile") {
    // One timed launch of each L2 shape (the points memtopo's streams report on an H100), for ncu.
    distinct_read<<<4 * sms, 256>>>(p, (unsigned long long)(l2) / 4 / 16 / (4 * sms) / 1024 * 1024, 20, sink);
    shared_read<<<8 * sms, 256>>>(p, (1ull << 20) / 16, 4, sink);
    CHECK(cudaDeviceSynchronize());
    std::printf("profiled: distinct_read (4 blocks of 256 per SM, a quarter of the L2, 20 passes), shared_read (8 blocks "
                "per SM, 1 MiB, 4 passes)\n");
    return 0;
  }
  for (unsigned long long f : {(unsigned long long)(l2) / 4, (unsigned long long)(l2) / 8})
    for (unsigned per_sm : {1u, 2u, 4u, 8u})
      for (unsigned threads : {256u, 512u, 1024u}) {
        if (per_sm * threads > 2048) continue;
        const unsigned passes = unsigned((16ull << 30) / f);
        const double rate = distinct(f, per_sm, threads, passes);
        if (rate == 0) continue;
        std::printf("distinct %5.2f MiB, %u blocks of %4u per SM, ILP 4: L2 read %.3f TB/s\n", double(f) / (1 << 20),
                    per_sm, threads, rate);
      }
  for (unsigned threads : {256u, 512u, 1024u}) {
    const unsigned blocks = unsigned((n + threads - 1) / threads);
    grid_read<<<blocks, threads>>>(p, n, sink);
    cudaEventRecord(a);
    for (int r = 0; r < 5; ++r) grid_read<<<blocks, threads>>>(p, n, sink);
    cudaEventRecord(b);
    const double read = 5.0 * big / (time_ms(a, b) * 1e-3) / 1e12;
    cudaEventRecord(a);
    for (int r = 0; r < 5; ++r) grid_write<<<blocks, threads>>>(p, n);
    cudaEventRecord(b);
    const double write = 5.0 * big / (time_ms(a, b) * 1e-3) / 1e12;
    std::printf("grid %4u threads: DRAM read %.3f TB/s, write %.3f TB/s (4 GiB)\n", threads, read, write);
  }
  for (unsigned long long mib : {1ull, 2ull, 4ull, 8ull, 16ull}) {
    const unsigned long long m = (mib << 20) / 16;
    for (unsigned per_sm : {2u, 4u, 8u}) {
      const unsigned passes = unsigned(std::max(1ull, 64ull / mib));
      shared_read<<<per_sm * sms, 256>>>(p, m, 1, sink);
      cudaEventRecord(a);
      shared_read<<<per_sm * sms, 256>>>(p, m, passes, sink);
      cudaEventRecord(b);
      const double bytes = double(mib << 20) * passes * per_sm * sms;
      std::printf("shared %2llu MiB, %u blocks of 256 per SM: L2 read %.3f TB/s\n", mib, per_sm,
                  bytes / (time_ms(a, b) * 1e-3) / 1e12);
    }
  }
  return 0;
}
