// memtopo-dsmem-chase: an independent check of dsmem.remote_latency_cycles (plain CUDA C++,
// none of memtopo's code; sm_90). One thread of cluster rank 0 chases a ring of 32-bit
// shared::cluster addresses in the shared memory of the block of rank d (mapa once, before the
// chase; `ld.shared::cluster.u32 r, [r]` in the loop), timing windows of 32 and of 96 dependent
// loads, the last loaded value stored to shared memory before the second clock read. The
// per-load latency is the difference of the two windows' medians over 64 loads, so the clock
// reads and the store cancel. Every block asks for more than half an SM's shared memory, so each
// lies on an SM of its own. Prints, per cluster size, the latency by rank distance, by whether
// the peer is the SM's TPC sibling (SM ids 2t and 2t+1), and the median over all peers.
//
//   memtopo-dsmem-chase [DEVICE_ORDINAL] [LAUNCHES]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "bench_common.cuh"

namespace {

constexpr unsigned kRingWords = 1024;
constexpr int kShort = 32, kLong = 96, kWindows = 64;
constexpr unsigned kMaxCluster = 16;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ unsigned mapa(unsigned cta_address, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(cta_address), "r"(rank));
  return r;
}
__device__ __forceinline__ unsigned cta_address(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.aligned;\nbarrier.cluster.wait.aligned;" ::: "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_size() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned smid() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}
template <bool Cluster>
__device__ __forceinline__ unsigned follow(unsigned p) {
  if (Cluster) asm volatile("ld.shared::cluster.u32 %0, [%0];" : "+r"(p)::"memory");
  else asm volatile("ld.shared.u32 %0, [%0];" : "+r"(p)::"memory");
  return p;
}

// Cycles of `Loads` dependent loads from p, the last one waited for (stored before the clock).
template <bool Cluster, int Loads>
__device__ long long window(unsigned& p, volatile unsigned* sink) {
  const long long t0 = clock64();
#pragma unroll
  for (int i = 0; i < Loads; ++i) p = follow<Cluster>(p);
  *sink = p;
  return clock64() - t0;
}

template <bool Cluster>
__device__ float per_load(unsigned p, volatile unsigned* sink, long long* scratch) {
  for (int i = 0; i < 64; ++i) p = follow<Cluster>(p);
  for (int w = 0; w < kWindows; ++w) {
    scratch[w] = window<Cluster, kShort>(p, sink);
    scratch[kWindows + w] = window<Cluster, kLong>(p, sink);
  }
  // Medians by selection (one thread, 64 values each).
  auto median = [](long long* v) {
    for (int i = 0; i <= kWindows / 2; ++i)
      for (int j = i + 1; j < kWindows; ++j)
        if (v[j] < v[i]) {
          const long long t = v[i];
          v[i] = v[j];
          v[j] = t;
        }
    return float(v[kWindows / 2]);
  };
  const float s = median(scratch), l = median(scratch + kWindows);
  return (l - s) / float(kLong - kShort);
}
#endif

// out per cluster: [0, n) latency to rank d's shared memory (d = 0: the block's own, through
// its cluster address), [n] the shared::cta chase; sms per block.
__global__ void cluster_chase(float* out, int* sms, long long* scratch) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ unsigned ring[];  // kRingWords, then local ring, then padding
  __shared__ unsigned sink;
  unsigned* local = ring + kRingWords;
  const unsigned rank = cluster_rank(), n = cluster_size();
  for (unsigned i = threadIdx.x; i < kRingWords; i += blockDim.x) {
    const unsigned next = (i + 33) % kRingWords;
    ring[i] = mapa(cta_address(&ring[next]), rank);
    local[i] = cta_address(&local[next]);
  }
  if (threadIdx.x == 0) sms[blockIdx.x] = int(smid());
  cluster_sync();
  if (rank == 0 && threadIdx.x == 0) {
    const unsigned c = blockIdx.x / n;
    long long* mine = scratch + size_t(c) * 2 * kWindows;
    for (unsigned d = 0; d < n; ++d) out[c * (kMaxCluster + 1) + d] = per_load<true>(mapa(cta_address(&ring[0]), d), &sink, mine);
    out[c * (kMaxCluster + 1) + kMaxCluster] = per_load<false>(cta_address(&local[0]), &sink, mine);
  }
  cluster_sync();
#endif
}

float median_of(std::vector<float> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const int dev = argc > 1 ? std::atoi(argv[1]) : 0;
  const int launches = argc > 2 ? std::atoi(argv[2]) : 3;
  CHECK(cudaSetDevice(dev));
  cudaDeviceProp p{};
  CHECK(cudaGetDeviceProperties(&p, dev));
  if (p.major < 9) return std::printf("%s: no thread-block clusters (cc %d.%d)\n", p.name, p.major, p.minor), 0;
  // More than half an SM's shared memory: one block per SM.
  const size_t smem = std::max<size_t>(p.sharedMemPerMultiprocessor / 2 + 1024, 2 * kRingWords * 4);
  CHECK(cudaFuncSetAttribute(cluster_chase, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  CHECK(cudaFuncSetAttribute(cluster_chase, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  std::printf("%s, %d SMs; one block per SM (%zu B of shared memory each); %d launches per size\n", p.name,
              p.multiProcessorCount, smem, launches);
  for (unsigned n : {2u, 4u, 8u, 16u}) {
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = n;
    attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    cfg.blockDim = dim3(128);
    cfg.dynamicSmemBytes = smem;
    int clusters = 0;
    cfg.gridDim = dim3(n);
    if (cudaOccupancyMaxActiveClusters(&clusters, cluster_chase, &cfg) != cudaSuccess || clusters < 1) {
      cudaGetLastError();
      std::printf("cluster of %2u: not placed\n", n);
      continue;
    }
    cfg.gridDim = dim3(n * unsigned(clusters));
    float* out = nullptr;
    int* sms = nullptr;
    long long* scratch = nullptr;
    CHECK(cudaMalloc(&out, sizeof(float) * clusters * (kMaxCluster + 1)));
    CHECK(cudaMalloc(&sms, sizeof(int) * n * clusters));
    CHECK(cudaMalloc(&scratch, sizeof(long long) * clusters * 2 * kWindows));
    std::vector<float> all, sibling, other, own_cluster, own_cta;
    std::vector<std::vector<float>> by_distance(n);
    for (int l = 0; l < launches; ++l) {
      CHECK(cudaLaunchKernelEx(&cfg, cluster_chase, out, sms, scratch));
      CHECK(cudaDeviceSynchronize());
      std::vector<float> o(size_t(clusters) * (kMaxCluster + 1));
      std::vector<int> s(size_t(n) * clusters);
      CHECK(cudaMemcpy(o.data(), out, o.size() * sizeof(float), cudaMemcpyDeviceToHost));
      CHECK(cudaMemcpy(s.data(), sms, s.size() * sizeof(int), cudaMemcpyDeviceToHost));
      for (int c = 0; c < clusters; ++c) {
        const float* r = &o[size_t(c) * (kMaxCluster + 1)];
        own_cluster.push_back(r[0]);
        own_cta.push_back(r[kMaxCluster]);
        const int me = s[size_t(c) * n];
        for (unsigned d = 1; d < n; ++d) {
          const int peer = s[size_t(c) * n + d];
          all.push_back(r[d]);
          by_distance[d].push_back(r[d]);
          (peer / 2 == me / 2 ? sibling : other).push_back(r[d]);
        }
      }
    }
    std::printf("cluster of %2u (%d resident): all peers %.1f cycles (%zu chases); TPC sibling %.1f (%zu), other SMs %.1f (%zu); "
                "own block through mapa %.1f, ld.shared %.1f\n",
                n, clusters, median_of(all), all.size(), median_of(sibling), sibling.size(), median_of(other), other.size(),
                median_of(own_cluster), median_of(own_cta));
    std::printf("  by rank distance:");
    for (unsigned d = 1; d < n; ++d) std::printf(" %u:%.1f", d, median_of(by_distance[d]));
    std::printf("\n");
    CHECK(cudaFree(out));
    CHECK(cudaFree(sms));
    CHECK(cudaFree(scratch));
  }
  return 0;
}
