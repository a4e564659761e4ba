#include "mlp_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace mlp {

InFlight loads_in_flight(const std::vector<Point>& curve) {
  InFlight f;
  double fastest = 0;
  for (const Point& p : curve)
    if (p.latency > 0 && (fastest == 0 || p.latency < fastest)) fastest = p.latency;
  if (fastest <= 0) {
    f.note = "no point with a latency";
    return f;
  }
  double sum = 0, weight = 0;
  for (const Point& p : curve)
    if (p.latency > 0 && p.latency <= 1.1 * fastest) {
      const double w = p.loads > 0 ? p.loads : 1;
      sum += w * p.latency;
      weight += w;
    }
  f.latency = sum / weight;
  // The plateau of throughput: the points within 3 % of the most, pooled by their loads (the
  // single highest point is the one that fluctuated up).
  // The queues hold requests: where lanes' loads met on a line, fewer than the loads.
  double most = 0, top = 0, top_requests = 0, top_weight = 0;
  for (const Point& p : curve) most = std::max(most, p.per_cycle);
  for (const Point& p : curve)
    if (p.per_cycle >= 0.97 * most) {
      const double w = p.loads > 0 ? p.loads : 1;
      top += w * p.per_cycle;
      top_requests += w * p.per_cycle * p.requests_per_load;
      top_weight += w;
    }
  f.per_cycle = top / top_weight;
  f.loads = top_requests / top_weight * f.latency;
  f.least_loads = top_requests / top_weight * fastest;
  const Point& last = curve.back();
  // Twice the chains and no more throughput: the limit is reached, whether the rate stays
  // (a plateau) or falls past it (the chains then contend for more than the queues).
  const bool stopped = curve.size() >= 2 && curve[curve.size() - 2].per_cycle >= 0.95 * last.per_cycle;
  const bool flat = stopped && last.per_cycle >= 0.95 * most;
  const bool slower = last.latency >= 1.5 * f.latency;
  f.saturated = stopped && slower;
  auto num = [](double v) { return std::to_string(int(std::lround(v))); };
  f.note = "unqueued " + num(f.latency) + " cycles per load; at most " + num(1000 * f.per_cycle) +
           " loads per 1000 cycles; at " + num(last.chains) + " chains " + num(last.latency) + " cycles per load";
  if (f.saturated && !flat) f.note += "; the throughput fell past its most";
  if (!f.saturated)
    f.note += std::string(stopped ? "; the latency barely grew, so the limit may lie beyond"
                                  : "; the throughput still grew at the most chains: the limit lies beyond") +
              " (at least the most throughput x the fastest point's " + num(fastest) + " cycles)";
  return f;
}

double requests_per_load(double lanes, double lines) {
  if (lanes <= 1 || lines < 1) return 1;
  return -lines * std::expm1(lanes * std::log1p(-1 / lines)) / lanes;
}

namespace {

// The cycles between two steps of a lane, from every lane's window: a lane's window less its
// ordinary steps is the time between steps plus what its interrupted steps took, so that,
// over the lanes, that per step grows with the share of interrupted steps: the line's value
// at no interruption (least squares). Where every lane saw the same share, only lanes
// without one tell it. nullopt: not known.
std::optional<double> between_steps(const std::vector<LaneTally>& lanes, double steps) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const LaneTally& t : lanes) {
    if (t.window_cycles <= 0) continue;
    const double x = t.interrupted_steps / steps, y = (t.window_cycles - t.clean_cycles) / steps;
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  if (n == 0) return std::nullopt;
  const double spread = n * sxx - sx * sx;
  if (spread <= 1e-12 * std::max(1.0, n * sxx)) {
    if (sx > 0) return std::nullopt;
    return std::max(0.0, sy / n);
  }
  return std::max(0.0, (sy * sxx - sx * sxy) / spread);
}

}  // namespace

double present_chains(const std::vector<LaneTally>& lanes, double steps) {
  if (lanes.empty() || steps <= 0) return double(lanes.size());
  const std::optional<double> gap = between_steps(lanes, steps);
  if (!gap) return double(lanes.size());  // nothing to tell time away from the rest
  double present = 0;
  for (const LaneTally& t : lanes) {
    const double clean_steps = steps - t.interrupted_steps;
    if (t.interrupted_steps <= 0 || t.window_cycles <= 0 || clean_steps <= 0) {
      present += 1;
      continue;
    }
    const double interrupted = t.window_cycles - t.clean_cycles - steps * *gap;
    const double away = interrupted - t.interrupted_steps * t.clean_cycles / clean_steps;
    present += 1 - std::clamp(away / t.window_cycles, 0.0, 1.0);
  }
  return present;
}

std::vector<Shape> sm_shapes(unsigned most_warps, unsigned most_chains, unsigned most_lane_chains) {
  std::vector<Shape> s;
  for (unsigned c = 1; c <= most_chains; c *= 2) {
    if (c <= most_warps) s.push_back({c, 1, 1});
    else if (c / most_warps <= 32 && c % most_warps == 0) s.push_back({most_warps, c / most_warps, 1});
    else if (c % (most_warps * 32) == 0 && c / (most_warps * 32) <= most_lane_chains)
      s.push_back({most_warps, 32, c / (most_warps * 32)});
  }
  return s;
}

std::vector<Shape> warp_shapes() {
  std::vector<Shape> s;
  for (unsigned l = 1; l <= 32; l *= 2) s.push_back({1, l, 1});
  return s;
}

std::vector<Shape> thread_shapes(unsigned most_lane_chains) {
  std::vector<Shape> s;
  for (unsigned k = 1; k <= most_lane_chains; k *= 2) s.push_back({1, 1, k});
  return s;
}

}  // namespace mlp
