#include "streams_search.hpp"

#include <algorithm>

namespace global_throughput {
namespace {

constexpr double kLevelsOff = 1.02;  // a doubling that gains less than 2 % found the plateau

// `warps` per SM as blocks of 256 threads, or one smaller block.
StreamConfig shaped(uint32_t warps, uint32_t ilp, uint32_t width) {
  StreamConfig c;
  c.threads = std::min<uint32_t>(warps * 32, 256);
  c.blocks_per_sm = warps * 32 / c.threads;
  c.ilp = ilp;
  c.width_bytes = width;
  return c;
}

}  // namespace

std::string StreamConfig::text() const {
  if (shape == 1)
    return "a block of " + std::to_string(threads) + " threads per round, " + std::to_string(blocks_per_sm) +
           " at once per SM, ILP " + std::to_string(ilp) + ", " + std::to_string(width_bytes) + " B accesses";
  return std::string(shape == 2 ? "every block the whole footprint, " : "") + std::to_string(blocks_per_sm) +
         (blocks_per_sm == 1 ? " block per SM x " : " blocks per SM x ") + std::to_string(threads) + " threads, ILP " +
         std::to_string(ilp) + ", " + std::to_string(width_bytes) + " B accesses" +
         (footprint_bytes ? ", " + std::to_string(footprint_bytes >> 10) + " KiB footprint" : std::string());
}

std::vector<StreamPoint> search_surface(const SearchSpace& space,
                                        const std::function<double(const StreamConfig&)>& measure) {
  std::vector<StreamPoint> points;
  auto run = [&](const StreamConfig& c) {
    for (const StreamPoint& p : points)
      if (p.config.text() == c.text()) return p.rate;
    if (!space.allowed(c) || c.blocks_per_sm > space.max_blocks_per_sm || c.threads > space.max_threads_per_block)
      return -1.0;
    points.push_back({c, measure(c)});
    return points.back().rate;
  };
  double last_best = 0;
  for (uint32_t ilp = 1; ilp <= 8; ilp *= 2) {
    double best = 0, previous = -1;
    for (uint32_t warps = 4; warps <= space.max_warps_per_sm; warps *= 2) {
      const double r = run(shaped(warps, ilp, 16));
      if (r < 0) break;
      best = std::max(best, r);
      if (previous > 0 && r < kLevelsOff * previous) break;
      previous = r;
    }
    if (best < kLevelsOff * last_best) break;
    last_best = std::max(last_best, best);
  }
  if (points.empty() || !space.refine) return points;
  const StreamConfig top = points[best_point(points)].config;
  for (uint32_t threads : {128u, 512u, 1024u}) {
    if (top.warps_per_sm() * 32 % threads) continue;
    StreamConfig c = top;
    c.threads = threads;
    c.blocks_per_sm = top.warps_per_sm() * 32 / threads;
    if (c.blocks_per_sm >= 1) run(c);
  }
  for (uint32_t width : {8u, 4u}) {
    StreamConfig c = top;
    c.width_bytes = width;
    run(c);
    c.ilp = std::min<uint32_t>(8, top.ilp * 16 / width);  // as many bytes in flight, where ILP allows
    run(c);
  }
  return points;
}

void confirm_best(std::vector<StreamPoint>& points, size_t top, size_t extra,
                  const std::function<double(size_t)>& remeasure, const std::function<void(size_t, size_t)>& keep) {
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return points[a].rate > points[b].rate; });
  order.resize(std::min(top, order.size()));
  for (size_t i : order) {
    std::vector<std::pair<double, size_t>> windows = {{points[i].rate, 0}};
    for (size_t w = 1; w <= extra; ++w) windows.emplace_back(remeasure(i), w);
    std::stable_sort(windows.begin(), windows.end());
    const auto& median = windows[(windows.size() - 1) / 2];
    points[i].rate = median.first;
    keep(i, median.second);
  }
}

size_t best_point(const std::vector<StreamPoint>& points) {
  size_t best = 0;
  for (size_t i = 1; i < points.size(); ++i)
    if (points[i].rate > points[best].rate) best = i;
  return best;
}

size_t smallest_within(const std::vector<StreamPoint>& points, double share) {
  const double floor = share * points[best_point(points)].rate;
  size_t pick = best_point(points);
  for (size_t i = 0; i < points.size(); ++i) {
    const StreamConfig &c = points[i].config, &p = points[pick].config;
    if (points[i].rate < floor) continue;
    if (c.bytes_in_flight_per_sm() < p.bytes_in_flight_per_sm() ||
        (c.bytes_in_flight_per_sm() == p.bytes_in_flight_per_sm() && c.warps_per_sm() < p.warps_per_sm()))
      pick = i;
  }
  return pick;
}

}  // namespace global_throughput
