// Near and far L2 hits (near_far.hpp).
#include "near_far.hpp"

#include <memtopo/analysis.hpp>

namespace cache_sharing {

namespace an = memtopo::analysis;

NearFar near_far(std::vector<double> lat) {
  const an::TwoModes m = an::two_modes_or_separated(lat, 1.15);
  return m.found() ? NearFar{m.low, m.high} : NearFar{};
}

}  // namespace cache_sharing
