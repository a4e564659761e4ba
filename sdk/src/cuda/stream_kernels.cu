// The bandwidth-stream kernels: every block sweeps its own rounds (or one round, or all of
// them), each thread keeping ILP accesses of one width in flight, its warp's accesses adjacent
// (docs/measurement.md, "Bandwidth streams"). One instantiation per shape, operation, width,
// ILP and read path.
#include <type_traits>

#include "memtopo/measure.h"
#include "stream_kernels.hpp"

namespace memtopo::cuda {
namespace {

template <int W>
using Vec = std::conditional_t<W == 4, unsigned, std::conditional_t<W == 8, uint2, uint4>>;

template <bool Cg, class V>
__device__ __forceinline__ V load(const V* p) {
  return Cg ? __ldcg(p) : __ldca(p);
}

__device__ __forceinline__ unsigned fold(unsigned v) { return v; }
__device__ __forceinline__ unsigned fold(uint2 v) { return v.x ^ v.y; }
__device__ __forceinline__ unsigned fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }
__device__ __forceinline__ unsigned bump(unsigned v) { return v + 1; }
__device__ __forceinline__ uint2 bump(uint2 v) { return make_uint2(v.x + 1, v.y); }
__device__ __forceinline__ uint4 bump(uint4 v) { return make_uint4(v.x + 1, v.y, v.z, v.w); }
template <class V>
__device__ __forceinline__ V fill(unsigned x) {
  if constexpr (sizeof(V) == 4) return x;
  else if constexpr (sizeof(V) == 8) return make_uint2(x, x);
  else return make_uint4(x, x, x, x);
}

// One thread's accesses of one round: element i and the ILP - 1 that follow a block apart.
template <unsigned Op, int Ilp, bool Cg, class V>
__device__ __forceinline__ void access_round(const V* s, V* d, unsigned long long i, unsigned p, unsigned& acc) {
  V v[Ilp];
  if constexpr (Op != MT_STREAM_WRITE) {
#pragma unroll
    for (int k = 0; k < Ilp; ++k) v[k] = load<Cg>(s + i + k * blockDim.x);
  }
#pragma unroll
  for (int k = 0; k < Ilp; ++k) {
    if constexpr (Op == MT_STREAM_READ) acc ^= fold(v[k]);
    else if constexpr (Op == MT_STREAM_WRITE) d[i + k * blockDim.x] = fill<V>(unsigned(i) + p);
    else if constexpr (Op == MT_STREAM_COPY) d[i + k * blockDim.x] = v[k];
    else d[i + k * blockDim.x] = bump(v[k]);
  }
}

// MT_STREAM_GRID: block b makes round b once; a launch is one pass.
template <unsigned Op, int W, int Ilp, bool Cg>
__global__ void grid_kernel(const char* src, char* dst, unsigned long long, unsigned pass, unsigned long long*,
                            unsigned* sink) {
  using V = Vec<W>;
  const V* s = reinterpret_cast<const V*>(src);
  V* d = reinterpret_cast<V*>(Op == MT_STREAM_COPY ? dst : const_cast<char*>(src));
  unsigned acc = 0;
  access_round<Op, Ilp, Cg>(s, d, (unsigned long long)(blockIdx.x) * blockDim.x * Ilp + threadIdx.x, pass, acc);
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

// MT_STREAM_SHARED: every block reads all `rounds` rounds, from its own on, `passes` times.
template <unsigned Op, int W, int Ilp, bool Cg>
__global__ void shared_kernel(const char* src, char*, unsigned long long rounds, unsigned passes,
                              unsigned long long* block_cycles, unsigned* sink) {
  using V = Vec<W>;
  const V* s = reinterpret_cast<const V*>(src);
  const unsigned long long round = (unsigned long long)(blockDim.x) * Ilp;
  unsigned acc = 0;
  __syncthreads();
  const unsigned long long t0 = clock64();
  for (unsigned p = 0; p < passes; ++p) {
    unsigned long long r = blockIdx.x % rounds;
    for (unsigned long long k = 0; k < rounds; ++k) {
      access_round<MT_STREAM_READ, Ilp, Cg>(s, static_cast<V*>(nullptr), r * round + threadIdx.x, p, acc);
      r = r + 1 == rounds ? 0 : r + 1;
    }
  }
  __syncthreads();
  const unsigned long long t1 = clock64();
  if (threadIdx.x == 0) block_cycles[blockIdx.x] = t1 - t0;
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

template <unsigned Op, int W, int Ilp, bool Cg>
__global__ void stream_kernel(const char* src, char* dst, unsigned long long slice_bytes, unsigned passes,
                              unsigned long long* block_cycles, unsigned* sink) {
  using V = Vec<W>;
  // A block's slice is every gridDim-th round of the footprint, from round blockIdx.x: at any
  // time the blocks read neighbouring rounds, as DRAM pages favour, and each block still
  // re-reads only its own lines in the next pass, as an L1 needs.
  const unsigned long long round = (unsigned long long)(blockDim.x) * Ilp, rounds = slice_bytes / sizeof(V) / round;
  const V* s = reinterpret_cast<const V*>(src) + blockIdx.x * round;
  V* d = reinterpret_cast<V*>(Op == MT_STREAM_COPY ? dst : const_cast<char*>(src)) + blockIdx.x * round;
  const unsigned long long n = rounds * gridDim.x * round, step = round * gridDim.x;
  unsigned acc = 0;
  __syncthreads();
  const unsigned long long t0 = clock64();
  for (unsigned p = 0; p < passes; ++p) {
    for (unsigned long long i = threadIdx.x; i < n; i += step) access_round<Op, Ilp, Cg>(s, d, i, p, acc);
  }
  __syncthreads();
  const unsigned long long t1 = clock64();
  if (threadIdx.x == 0) block_cycles[blockIdx.x] = t1 - t0;
  if (acc == 0x9e3779b9u) sink[0] = acc;  // never in practice; the reads must not be dropped
}

using StreamFn = void (*)(const char*, char*, unsigned long long, unsigned, unsigned long long*, unsigned*);

template <unsigned Op, int W, int Ilp, bool Cg>
StreamFn pick_shape(uint32_t shape) {
  if (shape == MT_STREAM_GRID) return &grid_kernel<Op, W, Ilp, Cg>;
  if constexpr (Op == MT_STREAM_READ)
    if (shape == MT_STREAM_SHARED) return &shared_kernel<Op, W, Ilp, Cg>;
  return &stream_kernel<Op, W, Ilp, Cg>;
}
template <unsigned Op, int W, int Ilp>
StreamFn pick_path(uint32_t shape, bool cg) {
  return cg ? pick_shape<Op, W, Ilp, true>(shape) : pick_shape<Op, W, Ilp, false>(shape);
}
template <unsigned Op, int W>
StreamFn pick_ilp(const StreamLaunch& l) {
  switch (l.ilp) {
    case 1: return pick_path<Op, W, 1>(l.shape, l.cg);
    case 2: return pick_path<Op, W, 2>(l.shape, l.cg);
    case 4: return pick_path<Op, W, 4>(l.shape, l.cg);
    default: return pick_path<Op, W, 8>(l.shape, l.cg);
  }
}
template <unsigned Op>
StreamFn pick_width(const StreamLaunch& l) {
  switch (l.width) {
    case 4: return pick_ilp<Op, 4>(l);
    case 8: return pick_ilp<Op, 8>(l);
    default: return pick_ilp<Op, 16>(l);
  }
}
StreamFn pick(const StreamLaunch& l) {
  switch (l.op) {
    case MT_STREAM_READ: return pick_width<MT_STREAM_READ>(l);
    case MT_STREAM_WRITE: return pick_width<MT_STREAM_WRITE>(l);
    case MT_STREAM_COPY: return pick_width<MT_STREAM_COPY>(l);
    default: return pick_width<MT_STREAM_UPDATE>(l);
  }
}

}  // namespace

cudaError_t stream_blocks_per_sm(const StreamLaunch& l, int* blocks) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, pick(l), int(l.threads), 0);
}

cudaError_t launch_stream(const StreamLaunch& l) {
  const StreamFn f = pick(l);
  const void* fp = reinterpret_cast<const void*>(f);
  cudaError_t e = cudaFuncSetAttribute(fp, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       l.carveout_percent < 0 ? int(cudaSharedmemCarveoutDefault) : l.carveout_percent);
  if (e != cudaSuccess) return e;
  if (l.shape != MT_STREAM_GRID) {
    f<<<l.blocks, l.threads>>>(static_cast<const char*>(l.src), static_cast<char*>(l.dst), l.slice_bytes, l.passes,
                               l.block_cycles, l.sink);
    return cudaGetLastError();
  }
  for (unsigned p = 0; p < l.passes; ++p) {
    f<<<l.blocks, l.threads>>>(static_cast<const char*>(l.src), static_cast<char*>(l.dst), 0, p, nullptr, l.sink);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace memtopo::cuda
