// The latency levels of l2-levels' footprint sweep (l2_levels_analysis.cpp): plateaus that
// rise, and the footprint where each begins.
#pragma once

#include <cstdint>
#include <vector>

namespace data_cache {

struct FootprintLevels {
  std::vector<double> latencies_cycles;  // one per level, rising
  std::vector<double> start_bytes;       // where each begins; the first: the sweep's first footprint
};

// `footprints`: increasing; `cycles`: the load-to-use time at each. Empty when no plateau.
FootprintLevels footprint_levels(const std::vector<double>& footprints, const std::vector<double>& cycles);

}  // namespace data_cache
