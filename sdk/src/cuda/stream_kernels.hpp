// Interface to the bandwidth-stream kernels (stream_kernels.cu, ABI 2.4's mt_job::stream_op).
// They need none of the chase kernels' __constant__ state, so they live in their own
// translation unit.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace memtopo::cuda {

struct StreamLaunch {
  uint32_t op = 0;       // mt_stream_op
  uint32_t shape = 0;    // mt_stream_shape
  uint32_t width = 4;    // bytes per access: 4, 8 or 16
  uint32_t ilp = 1;      // accesses in flight per thread: 1, 2, 4 or 8
  bool cg = false;       // reads bypass L1 (ld.global.cg)
  uint32_t blocks = 1, threads = 256;
  int32_t carveout_percent = -1;
  const void* src = nullptr;
  void* dst = nullptr;   // COPY: the written buffer
  uint64_t slice_bytes = 0;  // ROUNDS: per block, whole rounds; SHARED: the rounds of the footprint
  uint32_t passes = 1;       // GRID: launches
  unsigned long long* block_cycles = nullptr;  // [blocks]
  uint32_t* sink = nullptr;                    // keeps reads alive
};

cudaError_t launch_stream(const StreamLaunch& l);
// The blocks of l's kernel one SM holds at once.
cudaError_t stream_blocks_per_sm(const StreamLaunch& l, int* blocks);

}  // namespace memtopo::cuda
