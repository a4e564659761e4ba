// Small kernels: the timing overhead, stride-array fills, %nsmid.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "chase_common.cuh"

namespace memtopo::cuda::detail {

__global__ void overhead_kernel(uint32_t* out, uint32_t samples) {
  extern __shared__ uint32_t dyn[];  // index [kStepsPerPass+1], latency [kStepsPerPass+1]
  uint32_t* s_latency = dyn + kStepsPerPass + 1;
  const unsigned long long index_base = __cvta_generic_to_shared(dyn);
  const Resolved r{};  // the timed step of kSpaceOverhead reads nothing from it
  uint32_t j = threadIdx.x;
  // Chunk -1 is a warm-up (instruction cache); chunks 0.. are copied out.
  for (int chunk = -1; uint64_t(chunk + 1) * kStepsPerPass <= samples; ++chunk) {
    for (uint32_t k = 0; k < kStepsPerPass; ++k) {
      uint32_t cycles;
      j = timed_step<kSpaceOverhead>(r, j, index_base + 4ull * k, cycles);
      s_latency[k] = cycles;
    }
    if (chunk >= 0)
      for (uint32_t k = 0; k < kStepsPerPass; ++k) out[uint64_t(chunk) * kStepsPerPass + k] = s_latency[k];
  }
}

__global__ void stride_fill_kernel(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start, uint64_t count) {
  // stride < elems <= 2^32 and k < elems, so k * stride fits in 64 bits.
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < count; k += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t pos = (start + (k * stride) % elems) % elems;
    buffer[pos] = uint32_t((pos + stride) % elems);
  }
}

// The pointer form of a stride array (MT_PATTERN_POINTERS on a global path): the 64-bit
// address of the next element at each visited element's byte offset.
__global__ void stride_pointer_fill_kernel(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start,
                                           uint64_t count) {
  // Up to 2^38 elements (MT_CAP_WIDE_STRIDE): k * stride needs 128 bits.
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < count; k += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t pos = uint64_t(((unsigned __int128)(start) + (unsigned __int128)(k) * stride) % elems);
    *reinterpret_cast<unsigned long long*>(buffer + pos) = reinterpret_cast<unsigned long long>(buffer + (pos + stride) % elems);
  }
}

__global__ void smid_count_kernel(uint32_t* out) { *out = device::nsmid(); }

// The const-space address of the chase buffer (constant pointer chases store addresses).
__global__ void constant_base_kernel(unsigned long long* out) {
  unsigned long long a;
  asm("cvta.to.const.u64 %0, %1;" : "=l"(a) : "l"(c_chase));
  *out = a;
}

}  // namespace memtopo::cuda::detail
