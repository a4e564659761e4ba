// The kernel of the L2 eviction sets' counted check (eviction_count.cu): one thread loads a
// list of lines .cg in turn, `passes` times over, each load after the one before. The list is
// read into shared memory first, so that the counted L2 reads are the lines' own (and a few
// sectors of the list, which a launch of 0 passes counts alone).
#pragma once

#include <memtopo/device/kernel.hpp>

namespace data_cache {

constexpr uint32_t kMaxCycleLines = 128;

struct CycleArgs {
  unsigned long long buf;  // line k at buf + k * line_bytes
  uint32_t line_bytes;
  const uint32_t* lines;
  uint32_t count;  // at most kMaxCycleLines
  uint32_t passes;
  uint32_t* sink;
  uint32_t zero;  // 0 at run time, unknown to the compiler
};

MEMTOPO_KERNEL void eviction_cycle(CycleArgs a) {
  namespace md = memtopo::device;
  MEMTOPO_SHARED(uint32_t, list, kMaxCycleLines);
  if (md::thread_index() != 0) return;
  for (uint32_t i = 0; i < a.count && i < kMaxCycleLines; ++i)
    list[i] = md::load<md::Path::GlobalCg>(reinterpret_cast<unsigned long long>(a.lines + i), 0);
  uint32_t v = 0;
  for (uint32_t p = 0; p < a.passes; ++p)
    for (uint32_t i = 0; i < a.count && i < kMaxCycleLines; ++i)
      v += md::load<md::Path::GlobalCg>(a.buf + (unsigned long long)list[i] * a.line_bytes + (v & a.zero), 0);
  md::keep_if(v, a.sink, a.zero);
}

}  // namespace data_cache
