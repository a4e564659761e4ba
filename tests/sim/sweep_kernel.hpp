// A stream as one access program per lane (Op: MT_SWEEP_*, 16 B, ILP 2) over `bytes` of src
// (and dst), the kernel the simulator tests stream with.
#pragma once

#include <cstdint>

#include "memtopo/device/kernel.hpp"

namespace simtest {

template <uint32_t Op>
MEMTOPO_KERNEL void sweep_stream(const char* src, char* dst, unsigned long long bytes, unsigned* sink) {
  namespace md = memtopo::device;
  const unsigned long long threads = uint64_t(md::grid_blocks()) * md::block_threads();
  const unsigned long long me = uint64_t(md::block_index()) * md::block_threads() + md::thread_index();
  const uint32_t acc = md::sweep<Op, md::Path::GlobalCg, 16, 2>(src, dst, me, bytes / 16, 2 * threads, threads, 7);
  md::keep_if(acc, sink, unsigned(acc == 0x5eed));
}

}  // namespace simtest
