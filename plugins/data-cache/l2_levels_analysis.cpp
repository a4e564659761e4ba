#include "l2_levels_analysis.hpp"

#include <cstddef>

#include <memtopo/analysis.hpp>

namespace data_cache {
namespace an = memtopo::analysis;

namespace {

// Levels within 5 % are one: an L2's near hits move by that much between footprints and runs
// (an H100's between 270 and 283 cycles, 4.8 %; an H200's between 273 and 285, 4.2 %, which
// at 4 % made a level of their own in one run of three, 3 levels and then 4).
constexpr double kTolerance = 0.05;
// A level starts where the time has gone this far from the previous level to it.
constexpr double kStartFraction = 0.125;

double median_of(const std::vector<double>& v, size_t first, size_t last) {
  return an::median(std::vector<double>(v.begin() + static_cast<std::ptrdiff_t>(first),
                                        v.begin() + static_cast<std::ptrdiff_t>(last) + 1));
}

}  // namespace

// A larger footprint never hits a nearer level more often, so a plateau no slower than the one
// before it is that level again: the first footprints past the L1 can creep a few percent
// above the near L2 and form a short plateau of their own (an H100 run: 282 cycles over three
// footprints, then 270 to 274 up to 22 MB; docs/results/log/h100.md). Such plateaus are merged,
// with the median of the whole span, and so is a plateau between two of one level (an H200
// run: three footprints at 285 cycles between 273 and 273, a glitch of the GPU's; the span
// they closed stood as a level of its own, 273.06 then 273.33).
FootprintLevels footprint_levels(const std::vector<double>& footprints, const std::vector<double>& cycles) {
  FootprintLevels out;
  std::vector<an::Plateau> rising;
  for (const an::Plateau& p : an::plateaus(cycles, kTolerance, 3)) {
    if (rising.empty() || p.median > rising.back().median * (1 + kTolerance)) {
      rising.push_back(p);
      continue;
    }
    rising.back().last = p.last;
    rising.back().median = median_of(cycles, rising.back().first, p.last);
    while (rising.size() >= 2 && rising.back().median <= rising[rising.size() - 2].median * (1 + kTolerance)) {
      an::Plateau& before = rising[rising.size() - 2];
      before.last = rising.back().last;
      before.median = median_of(cycles, before.first, before.last);
      rising.pop_back();
    }
  }
  if (rising.empty()) return out;
  for (const an::Plateau& p : rising) out.latencies_cycles.push_back(p.median);
  out.start_bytes = an::level_start_positions(cycles, footprints, rising, kStartFraction);
  return out;
}

}  // namespace data_cache
