#include "memtopo/analysis/search.hpp"

#include <algorithm>
#include <limits>
#include <string>

#include "memtopo/analysis/changepoint.hpp"
#include "memtopo/analysis/robust.hpp"

namespace memtopo::analysis {
namespace {

uint64_t align_down(uint64_t v, uint64_t g) { return v / g * g; }
uint64_t align_up(uint64_t v, uint64_t g) { return (v + g - 1) / g * g; }

BatchPredicate batch_of(const Predicate& p) {
  return [p](const std::vector<uint64_t>& sizes) {
    std::vector<bool> out;
    out.reserve(sizes.size());
    for (uint64_t s : sizes) out.push_back(p(s));
    return out;
  };
}

}  // namespace

Bracket bisect(const BatchPredicate& predicate, uint64_t low, uint64_t high, const SearchOptions& o) {
  Bracket b;
  const uint64_t g = std::max<uint64_t>(o.granularity, 1);
  const uint64_t width = std::max(o.target_width, g);
  b.low = align_down(low, g);
  b.high = align_up(high, g);
  if (b.high <= b.low) {
    b.reason = "empty bracket [" + std::to_string(low) + ", " + std::to_string(high) + "]";
    return b;
  }
  const size_t k = std::max<size_t>(o.points_per_round, 1);
  while (b.high - b.low > width) {
    if (b.rounds >= o.max_rounds) {
      b.found = true;  // still a valid bracket, only wider than asked
      b.reason = "stopped after " + std::to_string(b.rounds) + " rounds with width " + std::to_string(b.high - b.low);
      return b;
    }
    // k points spread evenly inside (low, high), aligned and distinct.
    std::vector<uint64_t> pts;
    const uint64_t span = b.high - b.low;
    for (size_t i = 1; i <= k; ++i) {
      const uint64_t p = align_down(b.low + static_cast<uint64_t>(static_cast<long double>(span) * i / (k + 1)), g);
      if (p > b.low && p < b.high && (pts.empty() || p > pts.back())) pts.push_back(p);
    }
    if (pts.empty()) break;  // no aligned point strictly inside: as narrow as granularity allows
    const std::vector<bool> r = predicate(pts);
    ++b.rounds;
    b.evaluations += pts.size();
    // The first true point closes the bracket; the point before it (or low) opens it.
    size_t i = 0;
    while (i < pts.size() && i < r.size() && !r[i]) ++i;
    if (i > 0) b.low = pts[i - 1];
    if (i < pts.size()) b.high = pts[i];
  }
  b.found = true;
  b.reason = "transition in (" + std::to_string(b.low) + ", " + std::to_string(b.high) + "]";
  return b;
}

Bracket find_transition(const BatchPredicate& predicate, const SearchOptions& o) {
  Bracket b;
  const uint64_t g = std::max<uint64_t>(o.granularity, 1);
  uint64_t size = align_up(std::max<uint64_t>(o.start, 1), g);
  const size_t k = std::max<size_t>(o.points_per_round, 1);
  uint64_t last_false = 0;
  bool any_false = false;
  // Doubling ends at the limit itself, not at the last power of two times the start below
  // it: a cache as large as the path reaches must be looked at there too.
  const uint64_t top = std::max(align_down(o.limit, g), g);
  auto next = [&](uint64_t s) { return s < top && 2 * s > top ? top : 2 * s; };
  // Stage 1: doubling, k sizes per round.
  while (true) {
    if (b.rounds >= o.max_rounds) {
      b.reason = "no transition within " + std::to_string(b.rounds) + " doubling rounds (largest size " +
                 std::to_string(last_false) + ")";
      b.low = last_false;
      return b;
    }
    std::vector<uint64_t> pts;
    for (uint64_t s = size; pts.size() < k && s <= o.limit; s = next(s)) pts.push_back(s);
    if (pts.empty()) {
      b.low = last_false;
      b.reason = "predicate still false at " + std::to_string(last_false) + " (limit " + std::to_string(o.limit) + ")";
      return b;
    }
    const std::vector<bool> r = predicate(pts);
    ++b.rounds;
    b.evaluations += pts.size();
    size_t i = 0;
    while (i < pts.size() && i < r.size() && !r[i]) ++i;
    if (i > 0) {
      last_false = pts[i - 1];
      any_false = true;
    }
    if (i < pts.size()) {
      if (!any_false) {
        b.high = pts[i];
        b.reason = "predicate already true at the start size " + std::to_string(pts[i]);
        return b;
      }
      b.low = last_false;
      b.high = pts[i];
      break;
    }
    size = next(pts.back());
  }
  // Stage 2: bisection of (last false, first true].
  SearchOptions o2 = o;
  Bracket fine = bisect(predicate, b.low, b.high, o2);
  fine.rounds += b.rounds;
  fine.evaluations += b.evaluations;
  return fine;
}

Bracket find_transition(const Predicate& predicate, const SearchOptions& options) {
  SearchOptions o = options;
  o.points_per_round = 1;
  return find_transition(batch_of(predicate), o);
}

Sweep fine_sweep(const BatchMeasure& measure, uint64_t low, uint64_t high, const SweepOptions& o) {
  Sweep s;
  const uint64_t step = std::max<uint64_t>(o.step, 1);
  const size_t k = std::max<size_t>(o.points_per_round, 1);
  uint64_t next = align_up(low, step);
  while (next <= high) {
    if (s.sizes.size() >= o.max_points) {
      s.reason = "stopped at the cap of " + std::to_string(o.max_points) + " points (next size " + std::to_string(next) + ")";
      return s;
    }
    std::vector<uint64_t> pts;
    while (pts.size() < k && next <= high && s.sizes.size() + pts.size() < o.max_points) {
      pts.push_back(next);
      next += step;
    }
    const std::vector<double> vals = measure(pts);
    for (size_t i = 0; i < pts.size(); ++i) {
      s.sizes.push_back(pts[i]);
      s.values.push_back(i < vals.size() ? vals[i] : std::numeric_limits<double>::quiet_NaN());
    }
    if (o.stop && next <= high && o.stop(s)) {
      s.reason = "stopped early at size " + std::to_string(s.sizes.back()) + ": the answer is clear";
      return s;
    }
  }
  s.complete = true;
  s.reason = "swept " + std::to_string(s.sizes.size()) + " sizes";
  return s;
}

Sweep fine_sweep(const Measure& measure, uint64_t low, uint64_t high, const SweepOptions& options) {
  SweepOptions o = options;
  o.points_per_round = 1;
  BatchMeasure batch = [&measure](const std::vector<uint64_t>& sizes) {
    std::vector<double> out;
    for (uint64_t s : sizes) out.push_back(measure(s));
    return out;
  };
  return fine_sweep(batch, low, high, o);
}

StopHook stop_when_change_confirmed(double alpha, size_t after) {
  return [alpha, after](const Sweep& s) {
    if (s.values.size() < 2 * std::max<size_t>(after, 2)) return false;
    SingleChangeOptions o;
    o.alpha = alpha;
    o.min_segment = std::max<size_t>(after, 2);
    const SingleChange c = single_change_point(s.values, o);
    return c.found && s.values.size() - c.index >= after;
  };
}

size_t lasting_onset(const std::vector<double>& values, double fraction, size_t window) {
  const size_t n = values.size();
  const double top = n ? *std::max_element(values.begin(), values.end()) : 0;
  if (!(top > 0)) return n;
  const double cut = fraction * top;
  const size_t half = window / 2;
  size_t onset = n;
  for (size_t k = n; k-- > 0;) {
    const size_t lo = k >= half ? k - half : 0, hi = std::min(n, k + half + 1);
    if (median(std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(lo),
                                   values.begin() + static_cast<std::ptrdiff_t>(hi))) < cut)
      break;
    onset = k;
  }
  return onset;
}

}  // namespace memtopo::analysis
