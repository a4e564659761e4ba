// Near and far L2 hits (near_far.hpp).
#include "near_far.hpp"

#include <algorithm>

#include <memtopo/analysis.hpp>

namespace cache_sharing {

namespace an = memtopo::analysis;

NearFar near_far(std::vector<double> lat) {
  if (lat.size() < 4) return {};
  std::sort(lat.begin(), lat.end());
  double lo = lat[lat.size() / 10], hi = lat[lat.size() * 9 / 10];
  std::vector<double> low, high;
  for (int k = 0; k < 32 && hi > lo; ++k) {
    low.clear();
    high.clear();
    for (double x : lat) (x > (lo + hi) / 2 ? high : low).push_back(x);
    if (low.empty() || high.empty()) break;
    const double l = an::median(low), h = an::median(high);
    if (l == lo && h == hi) break;
    lo = l;
    hi = h;
  }
  if (!(hi > 1.15 * lo)) return {};
  return {lo, hi};
}

}  // namespace cache_sharing
