#include "tma_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <memtopo/analysis.hpp>

namespace an = memtopo::analysis;

namespace hopper_tma {

std::vector<double> best_over_stages(const std::vector<ThroughputPoint>& points, Method method, Scope scope,
                                     const std::vector<int64_t>& sizes) {
  std::vector<double> best(sizes.size(), 0.0);
  for (const ThroughputPoint& p : points) {
    if (p.method != method || p.scope != scope) continue;
    const auto it = std::find(sizes.begin(), sizes.end(), p.bytes_per_transfer);
    if (it != sizes.end()) best[size_t(it - sizes.begin())] = std::max(best[size_t(it - sizes.begin())], p.gbps);
  }
  return best;
}

double scope_ceiling(const std::vector<ThroughputPoint>& points, Scope scope) {
  double most = 0;
  for (const ThroughputPoint& p : points)
    if (p.scope == scope) most = std::max(most, p.gbps);
  return most;
}

std::optional<Crossover> crossover(const std::vector<int64_t>& sizes, const std::vector<double>& tma,
                                   const std::vector<double>& other, double margin, double ceiling_gbps,
                                   double tie_share) {
  const size_t n = std::min({sizes.size(), tma.size(), other.size()});
  auto tie = [&](size_t i) {
    return ceiling_gbps > 0 && tma[i] >= tie_share * ceiling_gbps && other[i] >= tie_share * ceiling_gbps;
  };
  auto wins = [&](size_t i) { return tma[i] > 0 && other[i] > 0 && !tie(i) && tma[i] > other[i] * (1 + margin); };
  if (n == 0 || !wins(n - 1)) return std::nullopt;
  size_t first = n - 1;
  while (first > 0 && wins(first - 1)) --first;
  return Crossover{sizes[first], first == 0};
}

std::vector<SizeLatency> latency_by_size(const std::vector<LatencySample>& samples) {
  std::map<int64_t, std::vector<double>> by;
  for (const LatencySample& s : samples)
    if (std::isfinite(s.cycles) && s.cycles > 0) by[s.bytes].push_back(s.cycles);
  std::vector<SizeLatency> out;
  for (const auto& [bytes, x] : by)
    out.push_back({bytes, an::trimmed_mean(x, 0.25), an::percentile(x, 10), an::percentile(x, 90)});
  return out;
}

}  // namespace hopper_tma
