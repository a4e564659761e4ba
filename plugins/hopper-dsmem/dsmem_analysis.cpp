#include "dsmem_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <memtopo/analysis.hpp>

namespace an = memtopo::analysis;

namespace hopper_dsmem {

std::vector<DistanceLatency> latency_by_distance(const std::vector<ChaseSample>& samples) {
  std::map<int64_t, std::vector<double>> by;
  for (const ChaseSample& s : samples)
    if (std::isfinite(s.cycles_per_load) && s.cycles_per_load > 0) by[s.distance].push_back(s.cycles_per_load);
  std::vector<DistanceLatency> out;
  for (const auto& [d, x] : by)
    out.push_back({d, an::median(x), an::percentile(x, 10), an::percentile(x, 90), int64_t(x.size())});
  return out;
}

std::optional<PeerLatency> peer_latency(const std::vector<DistanceLatency>& by_distance, double tolerance) {
  std::vector<double> medians;
  for (const DistanceLatency& d : by_distance)
    if (d.distance > 0) medians.push_back(d.median_cycles);
  if (medians.empty()) return std::nullopt;
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  PeerLatency p;
  p.median_cycles = an::median(medians);
  p.spread_cycles = *hi - *lo;
  p.depends_on_distance = p.spread_cycles > tolerance * 0.5 * (*hi + *lo);
  return p;
}

}  // namespace hopper_dsmem
