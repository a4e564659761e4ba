// The GPU of the [gpu] tests: CUDA device 0, or the skip code (77, CTest's SKIP_RETURN_CODE)
// when there is none, so that ctest shows the test as skipped.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "memtopo/engine.hpp"

inline std::unique_ptr<memtopo::engine::Device> open_gpu() {
  if (memtopo::engine::cuda_device_count() == 0) {
    std::printf("no CUDA device: skipped\n");
    std::fflush(stdout);
    std::exit(77);
  }
  return memtopo::engine::open_cuda(0);
}
