// Device memory mapped through the driver's virtual memory API in whole 2 MiB pages. The pool
// takes its buffers from here: cudaMalloc leaves the page size to the driver, and within one
// process its later allocations were at times mapped in smaller pages, which cost a DRAM stream
// 16 % of its bandwidth on an H100 and gave the TLB probe a level that was not the GPU's.
#pragma once

#include <cstdint>
#include <optional>

namespace memtopo::cuda {

struct MappedMemory {
  void* data = nullptr;         // 2 MiB aligned
  uint64_t bytes = 0;           // a multiple of 2 MiB
  unsigned long long handle = 0;  // the physical allocation (CUmemGenericAllocationHandle)
};

// `bytes` rounded up to the allocation granularity, mapped read-write for the current device;
// nullopt where the device or driver has no virtual memory management or the memory is not
// there (the caller falls back to cudaMalloc).
std::optional<MappedMemory> map_device_memory(uint64_t bytes);
void unmap_device_memory(const MappedMemory& m);

}  // namespace memtopo::cuda
