// The kernel-parameter bank behind the constant bank. A constant-space chase array may be
// longer than constant memory: its tail is then passed as a __grid_constant__ kernel
// parameter and read with ld.param, which goes through the same constant caches
// (docs/measurement.md). Both backends report the reach the same way.
#pragma once

#include <cstdint>

namespace memtopo::engine {

// Kernel parameters may take 32764 bytes on Volta and later (CUDA 12.1); 31 KiB of them
// carry the array and leave room for the chase kernels' own parameters.
constexpr int64_t kParamBankBytes = 31744;

// mt_device_info::constant_reach_bytes for a device of this compute capability.
inline int64_t constant_reach(int64_t constant_memory_bytes, int cc_major) {
  if (constant_memory_bytes <= 0) return 0;
  return constant_memory_bytes + (cc_major >= 7 ? kParamBankBytes : 0);
}

}  // namespace memtopo::engine
