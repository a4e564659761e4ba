// The fill-and-sample kernel of the plain-CUDA L2 checks (l2_capacity_check.cu,
// l2_buffer_pages.cu): one block of 1024 threads reads every 128 B line of a footprint with .cg
// four times, each pass in another pseudo-random order, then 8 warps, one lane each, time .cg
// loads of distinct random lines of it, one at a time, into a histogram of 16-cycle bins by
// quarter of the sample.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace l2check {

constexpr uint64_t kLine = 128;
constexpr int kFillThreads = 1024;
constexpr int kSampleWarps = 8;
constexpr int kSamplesPerWarp = 128;
constexpr int kBins = 64;  // 16-cycle bins from 0 to 1024 cycles (the last takes the rest)

// A bijection of [0, n): i -> (a i + b) mod n with a odd and coprime to n (n is a multiple
// of 2^k times small factors; the caller picks a prime a).
__device__ __forceinline__ uint64_t permute(uint64_t i, uint64_t a, uint64_t b, uint64_t n) {
  return (i * a + b) % n;
}

// hist[q][bin]: q = quarter of the samples (in each warp's order).
__global__ void fill_and_sample(const uint64_t* buf, uint64_t lines, uint64_t seed, unsigned* hist) {
  __shared__ unsigned sh[4][kBins];
  __shared__ volatile uint64_t sink_shared[kSampleWarps];
  for (int i = threadIdx.x; i < 4 * kBins; i += blockDim.x) (&sh[0][0])[i] = 0;
  const uint64_t primes[5] = {1000003, 999983, 1000033, 999979, 1000037};
  uint64_t sink = 0;
  for (int pass = 0; pass < 4; ++pass) {
    const uint64_t a = primes[pass], b = seed * 7919 + pass * 104729;
    for (uint64_t i = threadIdx.x; i < lines; i += blockDim.x)
      sink += __ldcg(buf + permute(i, a, b, lines) * (kLine / 8));
  }
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (warp < kSampleWarps && lane == 0) {
    // Distinct lines: sample k of all warps is index k of one more bijection.
    const uint64_t a = primes[4], b = seed * 15485863 + 12345;
    uint64_t dep = 0;
    for (int k = 0; k < kSamplesPerWarp; ++k) {
      const uint64_t idx = permute(uint64_t(k) * kSampleWarps + warp, a, b, lines);
      const uint64_t* p = buf + idx * (kLine / 8) + dep;
      const long long t0 = clock64();
      const uint64_t v = __ldcg(p);
      sink_shared[warp] = v;  // a volatile store waits for the load before the second clock
      const long long t1 = clock64();
      dep = v;  // the lines hold zeros: the next address waits for this load too
      const int bin = int((t1 - t0) / 16);
      atomicAdd(&sh[k * 4 / kSamplesPerWarp][bin < kBins ? bin : kBins - 1], 1u);
    }
  }
  __syncthreads();
  for (int i = threadIdx.x; i < 4 * kBins; i += blockDim.x) atomicAdd(hist + i, (&sh[0][0])[i]);
  if (sink == 0x5eed) hist[0] += 1;  // keeps the fill
}

}  // namespace l2check
