// memtopo-bandwidth-check: an independent check of the stream rates memtopo reports
// (throughput.*, docs/global-throughput.md). Plain CUDA C++, none of memtopo's code. Reads
// 16-byte vectors in two shapes and prints TB/s by CUDA events:
//  - "grid": one element per thread over a huge grid (the classic stream kernel, no loop);
//  - "shared": every block reads the whole of a small footprint from its own starting round,
//    so that each line is read by every SM (L2 lines a far SM copies near).
//
//   memtopo-bandwidth-check [DEVICE_ORDINAL]
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

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
