// Error handling and small helpers shared by the host side of the CUDA backend.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "memtopo/errors.hpp"

namespace memtopo::cuda {

// Throws memtopo::Error "<what>: <CUDA message>" when e is not cudaSuccess. The backend's C
// functions catch it and return it as their error message; nothing aborts the process.
inline void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

inline int device_attribute(cudaDeviceAttr a, int device) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, a, device), "cudaDeviceGetAttribute");
  return v;
}

inline uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

}  // namespace memtopo::cuda
