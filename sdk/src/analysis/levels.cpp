#include "memtopo/analysis/levels.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "memtopo/analysis/robust.hpp"

namespace memtopo::analysis {
namespace {

// Groups smaller than this have no trustworthy spread of their own.
constexpr size_t kSpreadMinCount = 5;
// Spread assumed for such a group, relative to its magnitude (2 % of a latency).
constexpr double kSmallGroupRelativeSpread = 0.02;

// Type-7 quantile of the sorted range v[b, e).
double sorted_quantile(const std::vector<double>& v, size_t b, size_t e, double q) {
  const double h = static_cast<double>(e - b - 1) * q;
  const size_t lo = b + static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, e - 1);
  return v[lo] + (h - std::floor(h)) * (v[hi] - v[lo]);
}

double robust_spread(const std::vector<double>& v, size_t b, size_t e) {
  if (e - b < 2) return 0;
  return (sorted_quantile(v, b, e, 0.75) - sorted_quantile(v, b, e, 0.25)) / 1.349;
}

}  // namespace

uint32_t Levels::classify(double value) const {
  uint32_t k = 0;
  while (k < boundaries.size() && value > boundaries[k]) ++k;
  return k;
}

std::vector<uint8_t> Levels::misses(uint32_t hit_level) const {
  std::vector<uint8_t> out(level_of.size(), 0);
  for (size_t i = 0; i < level_of.size(); ++i) out[i] = level_of[i] > hit_level ? 1 : 0;
  return out;
}

Levels find_levels(const std::vector<uint32_t>& latencies, const LevelOptions& options) {
  return find_levels(to_doubles(latencies), options);
}

TwoModes two_modes(std::vector<double> x, double min_ratio, double min_fraction) {
  if (x.size() < 4) return {};
  std::sort(x.begin(), x.end());
  double lo = x[x.size() / 10], hi = x[x.size() * 9 / 10];
  size_t n_low = 0;
  for (int k = 0; k < 32 && hi > lo; ++k) {
    const auto cut = std::upper_bound(x.begin(), x.end(), (lo + hi) / 2);
    n_low = size_t(cut - x.begin());
    if (n_low == 0 || n_low == x.size()) return {};
    const double l = median(std::vector<double>(x.begin(), cut)), h = median(std::vector<double>(cut, x.end()));
    if (l == lo && h == hi) break;
    lo = l;
    hi = h;
  }
  const double least = min_fraction * double(x.size());
  if (!(hi > min_ratio * lo) || double(n_low) < least || double(x.size() - n_low) < least) return {};
  return {lo, hi, n_low, x.size() - n_low};
}

TwoModes two_modes_or_separated(const std::vector<double>& x, double min_ratio, double min_fraction,
                                double close_fraction, double spreads) {
  const TwoModes m = two_modes(x, min_ratio, min_fraction);
  if (m.found()) return m;
  const TwoModes close = two_modes(x, 1.0, std::max(min_fraction, close_fraction));
  if (!close.found()) return {};
  std::vector<double> low, high;
  for (double v : x) (v <= close.split() ? low : high).push_back(v);
  const double spread = std::max({mad(low, true), mad(high, true), 1.0});
  return close.high - close.low >= spreads * spread ? close : TwoModes{};
}

namespace {

// How far a sorted range [b, e) of v spreads: its robust spread, at least the resolution.
struct RangeScale {
  const std::vector<double>& v;
  double resolution;
  double relative_resolution;
  double operator()(size_t b, size_t e) const {
    const double centre = std::fabs(sorted_quantile(v, b, e, 0.5));
    const double floor = std::max(resolution, relative_resolution * centre);
    if (e - b >= kSpreadMinCount) return std::max(robust_spread(v, b, e), floor);
    return std::max(floor, kSmallGroupRelativeSpread * centre);
  }
};

struct Range {
  size_t b, e;
};

// Agglomerative merging of contiguous sorted ranges, smallest gap first (single linkage),
// but a gap is only bridged when it is within gap_factor of the spread of the groups on
// either side. Starting from single values, dense levels form before the wide gaps between
// them are looked at; isolated samples stay alone and become outliers.
std::vector<Range> dense_ranges(const std::vector<double>& v, const RangeScale& scale, double gap_factor) {
  const size_t n = v.size();
  std::vector<size_t> group_begin(n), group_end(n);  // valid at a group's first and last index
  for (size_t i = 0; i < n; ++i) {
    group_begin[i] = i;
    group_end[i] = i + 1;
  }
  std::vector<size_t> gaps(n > 0 ? n - 1 : 0);
  std::iota(gaps.begin(), gaps.end(), size_t{0});
  std::stable_sort(gaps.begin(), gaps.end(), [&](size_t a, size_t b) { return v[a + 1] - v[a] < v[b + 1] - v[b]; });
  std::vector<uint8_t> bridged(gaps.size(), 0);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t g : gaps) {
      if (bridged[g]) continue;
      const size_t lb = group_begin[g], le = g + 1;        // left group [lb, le)
      const size_t rb = g + 1, re = group_end[g + 1];      // right group [rb, re)
      const double gap = v[g + 1] - v[g];
      if (gap > gap_factor * std::max(scale(lb, le), scale(rb, re))) continue;
      bridged[g] = 1;
      changed = true;
      group_end[lb] = re;
      group_begin[re - 1] = lb;
    }
  }
  std::vector<Range> groups;
  for (size_t i = 0; i < n; i = group_end[i]) groups.push_back({i, group_end[i]});
  return groups;
}

// Too many levels: merge the neighbours whose gap is smallest relative to their spread.
void merge_to(std::vector<Range>& levels, size_t most, const std::vector<double>& v, const RangeScale& scale,
              std::vector<uint8_t>& sorted_outlier) {
  while (levels.size() > std::max<size_t>(most, 1)) {
    size_t best = 0;
    double best_ratio = std::numeric_limits<double>::infinity();
    for (size_t k = 0; k + 1 < levels.size(); ++k) {
      const double gap = v[levels[k + 1].b] - v[levels[k].e - 1];
      const double ratio = gap / std::max(scale(levels[k].b, levels[k].e), scale(levels[k + 1].b, levels[k + 1].e));
      if (ratio < best_ratio) {
        best_ratio = ratio;
        best = k;
      }
    }
    for (size_t i = levels[best].b; i < levels[best + 1].e; ++i) sorted_outlier[i] = 0;
    levels[best].e = levels[best + 1].e;
    levels.erase(levels.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
}

}  // namespace

Levels find_levels(const std::vector<double>& samples, const LevelOptions& o) {
  Levels out;
  const size_t n = samples.size();
  if (n == 0) {
    out.reason = "no samples";
    return out;
  }
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(samples[i])) {
      out.reason = "sample " + std::to_string(i) + " is NaN or infinite";
      return out;
    }
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return samples[a] < samples[b]; });
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = samples[order[i]];

  double res = o.resolution;
  if (!(res > 0)) {
    const bool integers = std::all_of(v.begin(), v.end(), [](double x) { return x == std::floor(x); });
    res = integers ? 1.0 : 1e-6 * std::max(std::fabs(v.front()), std::fabs(v.back()));
    if (!(res > 0)) res = 1e-12;
  }
  const RangeScale scale{v, res, o.relative_resolution};
  const double min_count = std::max<double>(static_cast<double>(o.min_count), o.min_fraction * static_cast<double>(n));
  std::vector<Range> levels;
  std::vector<uint8_t> sorted_outlier(n, 0);
  for (const Range& r : dense_ranges(v, scale, o.gap_factor)) {
    if (static_cast<double>(r.e - r.b) >= min_count) {
      levels.push_back(r);
    } else {
      for (size_t i = r.b; i < r.e; ++i) sorted_outlier[i] = 1;
    }
  }
  if (levels.empty()) {
    out.reason = "no group of at least " + std::to_string(static_cast<size_t>(std::ceil(min_count))) +
                 " similar samples among " + std::to_string(n);
    out.outlier.assign(n, 1);
    out.outlier_count = n;
    out.level_of.assign(n, 0);
    return out;
  }
  merge_to(levels, o.max_levels, v, scale, sorted_outlier);
  for (const Range& r : levels) {
    Level l;
    l.centre = sorted_quantile(v, r.b, r.e, 0.5);
    l.low = v[r.b];
    l.high = v[r.e - 1];
    l.spread = robust_spread(v, r.b, r.e);
    l.count = r.e - r.b;
    out.levels.push_back(l);
  }
  for (size_t k = 0; k + 1 < out.levels.size(); ++k)
    out.boundaries.push_back(0.5 * (out.levels[k].high + out.levels[k + 1].low));
  out.level_of.resize(n);
  out.outlier.resize(n);
  for (size_t i = 0; i < n; ++i) {
    out.level_of[order[i]] = out.classify(v[i]);
    out.outlier[order[i]] = sorted_outlier[i];
    out.outlier_count += sorted_outlier[i];
  }
  out.found = true;
  out.reason = std::to_string(out.levels.size()) + " level(s), " + std::to_string(out.outlier_count) + " outlier(s)";
  return out;
}

std::vector<size_t> miss_counts(const std::vector<uint8_t>& miss, size_t window) {
  std::vector<size_t> out;
  if (window == 0) return out;
  for (size_t b = 0; b < miss.size(); b += window) {
    const size_t e = std::min(miss.size(), b + window);
    out.push_back(static_cast<size_t>(std::count_if(miss.begin() + static_cast<std::ptrdiff_t>(b),
                                                    miss.begin() + static_cast<std::ptrdiff_t>(e),
                                                    [](uint8_t m) { return m != 0; })));
  }
  return out;
}

Periodicity periodicity(const std::vector<uint8_t>& ev, const PeriodicityOptions& o) {
  Periodicity p;
  const size_t n = ev.size();
  std::vector<size_t> pos;
  for (size_t i = 0; i < n; ++i)
    if (ev[i]) pos.push_back(i);
  p.events = pos.size();
  p.event_rate = n ? static_cast<double>(pos.size()) / static_cast<double>(n) : 0;
  if (!pos.empty()) p.first_event = pos.front();
  if (pos.size() >= 2) {
    std::vector<double> spacing;
    for (size_t i = 1; i < pos.size(); ++i) spacing.push_back(static_cast<double>(pos[i] - pos[i - 1]));
    p.median_spacing = median(spacing);
  }
  if (pos.size() < std::max<size_t>(o.min_events, 2)) {
    p.reason = std::to_string(pos.size()) + " event(s) in " + std::to_string(n) + " steps: too few for a period (need " +
               std::to_string(std::max<size_t>(o.min_events, 2)) + ")";
    return p;
  }
  const size_t max_period = o.max_period ? std::min(o.max_period, n / 2) : n / 2;
  const size_t min_period = std::max<size_t>(o.min_period, 1);
  // match(lag): of the events with i + lag < n, the fraction with an event at i + lag.
  // Scanning lags upwards and keeping the first lag within 0.02 of the best avoids
  // reporting a multiple of the true period (which matches just as well).
  double best_match = -1;
  std::vector<double> match(max_period + 1, 0);
  for (size_t lag = min_period; lag <= max_period; ++lag) {
    size_t tried = 0, hit = 0;
    for (size_t i : pos) {
      if (i + lag >= n) break;
      ++tried;
      hit += ev[i + lag] ? 1 : 0;
    }
    match[lag] = tried ? static_cast<double>(hit) / static_cast<double>(tried) : 0;
    best_match = std::max(best_match, match[lag]);
  }
  if (best_match < 0) {
    p.reason = "sequence of " + std::to_string(n) + " steps is too short for periods >= " + std::to_string(min_period);
    return p;
  }
  for (size_t lag = min_period; lag <= max_period; ++lag) {
    if (match[lag] >= best_match - 0.02) {
      p.period = lag;
      break;
    }
  }
  p.match_fraction = match[p.period];
  p.strength = p.event_rate < 1 ? std::max(0.0, (p.match_fraction - p.event_rate) / (1 - p.event_rate)) : 1.0;
  if (p.strength >= o.min_strength) {
    p.found = true;
    p.reason = "period " + std::to_string(p.period) + " steps, strength " + std::to_string(p.strength);
  } else {
    p.reason = "no clear period: best lag " + std::to_string(p.period) + " repeats " +
               std::to_string(p.match_fraction) + " of events (strength " + std::to_string(p.strength) + " < " +
               std::to_string(o.min_strength) + ")";
  }
  return p;
}

std::vector<Plateau> plateaus(const std::vector<double>& values, double tolerance, size_t min_points) {
  std::vector<Plateau> out;
  auto close = [tolerance](double a, double b) { return std::fabs(a - b) <= tolerance * std::fabs(b); };
  for (size_t i = 0; i < values.size();) {
    std::vector<double> run{values[i]};
    size_t j = i;
    while (j + 1 < values.size() && close(values[j + 1], median(run))) run.push_back(values[++j]);
    // A ramp creeps along within the tolerance too; a plateau's first and second half have
    // the same median. Its values may jump between close sublevels: on the H100, the near L2
    // hits between 275 and 283 cycles (docs/results/log/h100.md).
    const double m = median(run);
    const size_t h = run.size() / 2;
    const bool flat = close(median(std::vector<double>(run.begin(), run.begin() + static_cast<std::ptrdiff_t>(h))),
                            median(std::vector<double>(run.end() - static_cast<std::ptrdiff_t>(h), run.end())));
    if (run.size() >= std::max<size_t>(min_points, 1) && flat) {
      if (!out.empty() && close(m, out.back().median)) {
        std::vector<double> both(values.begin() + static_cast<std::ptrdiff_t>(out.back().first),
                                 values.begin() + static_cast<std::ptrdiff_t>(j) + 1);
        out.back().last = j;
        out.back().median = median(both);
      } else {
        out.push_back({i, j, m});
      }
    }
    i = j + 1;
  }
  return out;
}

std::vector<size_t> level_starts(const std::vector<double>& values, const std::vector<Plateau>& levels,
                                 double fraction) {
  std::vector<size_t> out;
  for (size_t k = 0; k < levels.size(); ++k) {
    if (k == 0) {
      out.push_back(0);
      continue;
    }
    const double from = levels[k - 1].median, to = levels[k].median;
    const double mark = from + fraction * (to - from);
    size_t i = levels[k - 1].last + 1;
    while (i < levels[k].first && (to > from ? values[i] < mark : values[i] > mark)) ++i;
    out.push_back(i);
  }
  return out;
}

std::vector<double> level_start_positions(const std::vector<double>& values, const std::vector<double>& positions,
                                          const std::vector<Plateau>& levels, double fraction) {
  std::vector<double> out;
  if (values.size() != positions.size() || values.empty()) return out;
  const std::vector<size_t> starts = level_starts(values, levels, fraction);
  for (size_t k = 0; k < starts.size(); ++k) {
    const size_t i = starts[k];
    if (k == 0 || i == 0 || positions[i - 1] <= 0 || positions[i] <= positions[i - 1]) {
      out.push_back(positions[k == 0 ? 0 : i]);
      continue;
    }
    const double from = levels[k - 1].median, to = levels[k].median;
    const double mark = from + fraction * (to - from);
    const double span = values[i] - values[i - 1];
    const double t = span == 0 ? 1.0 : std::clamp((mark - values[i - 1]) / span, 0.0, 1.0);
    out.push_back(std::exp(std::log(positions[i - 1]) + t * (std::log(positions[i]) - std::log(positions[i - 1]))));
  }
  return out;
}

}  // namespace memtopo::analysis
