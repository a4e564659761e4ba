// memtopo-gpu-stream-load: another process's work on one GPU, for fleet tests (docs/fleet.md,
// "GPU state"): it copies a buffer of 1 GiB back and forth on device ORDINAL for SECONDS, as a
// training job beside memtopo would. Plain CUDA, none of memtopo's code.
//   memtopo-gpu-stream-load ORDINAL SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <cuda_runtime.h>

namespace {

__global__ void copy(const float4* __restrict__ from, float4* __restrict__ to, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    to[i] = from[i];
}

bool ok(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "memtopo-gpu-stream-load: %s: %s\n", what, cudaGetErrorString(e));
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: memtopo-gpu-stream-load ORDINAL SECONDS\n");
    return 2;
  }
  const int ordinal = std::atoi(argv[1]);
  const double seconds = std::atof(argv[2]);
  if (!ok(cudaSetDevice(ordinal), "cudaSetDevice")) return 1;
  const size_t bytes = size_t(1) << 30, n = bytes / sizeof(float4);
  float4 *a = nullptr, *b = nullptr;
  if (!ok(cudaMalloc(&a, bytes), "cudaMalloc") || !ok(cudaMalloc(&b, bytes), "cudaMalloc")) return 1;
  cudaMemset(a, 0, bytes);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  size_t copies = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int k = 0; k < 16; ++k, ++copies) copy<<<1024, 256>>>(copies % 2 ? b : a, copies % 2 ? a : b, n);
    if (!ok(cudaDeviceSynchronize(), "copy")) return 1;
  }
  std::printf("memtopo-gpu-stream-load: %zu copies of 1 GiB on device %d in %.1f s\n", copies, ordinal, seconds);
  return 0;
}
