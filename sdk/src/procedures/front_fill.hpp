// Lines of the front cache's set beside a stride scan's lines (Target::front).
#pragma once

#include <cstdint>

#include "memtopo/cache/measurer.hpp"

namespace memtopo::cache {

// Where k lines `stride` apart all share one set of the front cache (stride a multiple of twice
// the spacing), the lines added after them: odd multiples of the spacing, so in that front set
// and in other sets of this cache than the scanned lines' (a modulo index whose set stride is
// at least twice the spacing). Enough that the front set cycles more lines than its ways (four
// times its ways where its victims are random), capped by Front::most_fillers.
struct FrontFill {
  uint64_t spacing_bytes = 0, count = 0;
};
FrontFill front_fill(const Target& t, uint64_t k, uint64_t stride, uint64_t line_bytes);

// k lines `stride` apart (mapped_lines), then the front fill's lines.
recipes::Chase front_filled_lines(const Target& t, uint64_t k, uint64_t stride, uint64_t line_bytes);

// Measures how many fillers the chase may add: one scanned line with the front's full fill must
// run without misses (fillers that share a set of this cache beyond its ways would miss
// themselves); else half as many, down to none. Sets Front::most_fillers on the measurer.
void calibrate_front_fill(Measurer& m, uint64_t line_bytes);

}  // namespace memtopo::cache
