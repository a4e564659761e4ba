#include "memtopo/analysis/changepoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <queue>
#include <random>
#include <string>

#include "memtopo/analysis/ks.hpp"
#include "memtopo/analysis/levels.hpp"
#include "memtopo/analysis/robust.hpp"
#include "rng.hpp"

namespace memtopo::analysis {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fmt(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

bool all_finite(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); });
}

// O(1) segment costs from prefix sums (squared error, normal mean+variance); the L1 cost
// takes a median per segment.
class SegmentCosts {
 public:
  SegmentCosts(const std::vector<double>& x, Cost cost, double var_floor)
      : x_(x), cost_(cost), var_floor_(var_floor), s1_(x.size() + 1, 0), s2_(x.size() + 1, 0) {
    for (size_t i = 0; i < x.size(); ++i) {
      s1_[i + 1] = s1_[i] + x[i];
      s2_[i + 1] = s2_[i] + x[i] * x[i];
    }
    if (cost == Cost::Linear) {
      // Sums of i*x against a position origin of 0; the fit recentres per segment.
      sx_.assign(x.size() + 1, 0);
      for (size_t i = 0; i < x.size(); ++i) sx_[i + 1] = sx_[i] + static_cast<double>(i) * x[i];
    }
  }
  // Residual sum of squares of the least-squares line through x[b, e).
  double linear_sse(size_t b, size_t e) const {
    const double n = static_cast<double>(e - b);
    if (e - b < 3) return 0;
    const double sy = s1_[e] - s1_[b], syy = s2_[e] - s2_[b];
    const double c = 0.5 * static_cast<double>(b + e - 1);  // mean position
    const double sxy = (sx_[e] - sx_[b]) - c * sy;           // sum (i - c) y
    const double sxx = n * (n * n - 1) / 12.0;               // sum (i - c)^2
    return std::max(0.0, syy - sy * sy / n - sxy * sxy / sxx);
  }
  double sse(size_t b, size_t e) const {
    const double n = static_cast<double>(e - b), s = s1_[e] - s1_[b];
    return std::max(0.0, (s2_[e] - s2_[b]) - s * s / n);
  }
  double mean(size_t b, size_t e) const { return (s1_[e] - s1_[b]) / static_cast<double>(e - b); }
  double operator()(size_t b, size_t e) const {
    if (e <= b) return 0;
    switch (cost_) {
      case Cost::SquaredError: return sse(b, e);
      case Cost::Linear: return linear_sse(b, e);
      case Cost::NormalMeanVar: {
        const double n = static_cast<double>(e - b);
        return n * std::log(std::max(sse(b, e) / n, var_floor_));
      }
      case Cost::AbsoluteDeviation: {
        buf_.assign(x_.begin() + static_cast<std::ptrdiff_t>(b), x_.begin() + static_cast<std::ptrdiff_t>(e));
        const double m = median(buf_);
        double c = 0;
        for (size_t i = b; i < e; ++i) c += std::fabs(x_[i] - m);
        return c;
      }
    }
    return 0;
  }

 private:
  const std::vector<double>& x_;
  Cost cost_;
  double var_floor_;
  std::vector<double> s1_, s2_, sx_;
  mutable std::vector<double> buf_;
};

// Sum of |x - median| over a growing multiset, by a running median (two heaps).
class RunningL1 {
 public:
  void add(double v) {
    if (lo_.empty() || v <= lo_.top()) {
      lo_.push(v);
      sum_lo_ += v;
    } else {
      hi_.push(v);
      sum_hi_ += v;
    }
    if (lo_.size() > hi_.size() + 1) {
      sum_lo_ -= lo_.top();
      sum_hi_ += lo_.top();
      hi_.push(lo_.top());
      lo_.pop();
    } else if (hi_.size() > lo_.size()) {
      sum_hi_ -= hi_.top();
      sum_lo_ += hi_.top();
      lo_.push(hi_.top());
      hi_.pop();
    }
  }
  double cost() const {
    if (lo_.empty()) return 0;
    const double m = lo_.top();
    return m * static_cast<double>(lo_.size()) - sum_lo_ + sum_hi_ - m * static_cast<double>(hi_.size());
  }

 private:
  std::priority_queue<double> lo_;                                       // lower half, max on top
  std::priority_queue<double, std::vector<double>, std::greater<>> hi_;  // upper half
  double sum_lo_ = 0, sum_hi_ = 0;
};

// prefix[t] = L1 cost of x[0, t) for every t.
std::vector<double> prefix_l1_costs(const std::vector<double>& x) {
  std::vector<double> out(x.size() + 1, 0);
  RunningL1 run;
  for (size_t t = 0; t < x.size(); ++t) {
    run.add(x[t]);
    out[t + 1] = run.cost();
  }
  return out;
}

struct BestSplit {
  size_t index = 0;
  double total = kInf;
};

// Exhaustive minimum of cost(0, t) + cost(t, n) with both sides >= min_segment.
BestSplit best_split(const std::vector<double>& x, Cost cost, size_t min_segment, double var_floor) {
  const size_t n = x.size();
  BestSplit best;
  if (cost == Cost::AbsoluteDeviation) {
    const std::vector<double> pre = prefix_l1_costs(x);
    std::vector<double> rev(x.rbegin(), x.rend());
    const std::vector<double> suf = prefix_l1_costs(rev);  // suf[k] = cost of the last k values
    for (size_t t = min_segment; t + min_segment <= n; ++t) {
      const double c = pre[t] + suf[n - t];
      if (c < best.total) best = {t, c};
    }
    return best;
  }
  SegmentCosts costs(x, cost, var_floor);
  for (size_t t = min_segment; t + min_segment <= n; ++t) {
    const double c = costs(0, t) + costs(t, n);
    if (c < best.total) best = {t, c};
  }
  return best;
}

double level_of_segment(const std::vector<double>& x, size_t b, size_t e, Cost cost) {
  std::vector<double> seg(x.begin() + static_cast<std::ptrdiff_t>(b), x.begin() + static_cast<std::ptrdiff_t>(e));
  return cost == Cost::AbsoluteDeviation ? median(seg) : mean(seg);
}

double variance(const std::vector<double>& x) {
  const double m = mean(x);
  double s = 0;
  for (double v : x) s += (v - m) * (v - m);
  return x.empty() ? 0 : s / static_cast<double>(x.size());
}

}  // namespace

// ------------------------------------------------------------------ reduction

GeometricReduction geometric_reduction(const std::vector<std::vector<double>>& vectors,
                                       const std::vector<double>& reference, bool per_element) {
  GeometricReduction out;
  out.distance.reserve(vectors.size());
  out.angle_rad.reserve(vectors.size());
  for (const auto& x : vectors) {
    const size_t len = reference.empty() ? x.size() : std::min(x.size(), reference.size());
    double d2 = 0, dot = 0, xx = 0, rr = 0;
    for (size_t i = 0; i < len; ++i) {
      const double r = reference.empty() ? 1.0 : reference[i];
      d2 += (x[i] - r) * (x[i] - r);
      dot += x[i] * r;
      xx += x[i] * x[i];
      rr += r * r;
    }
    double d = std::sqrt(d2);
    if (per_element && len > 0) d /= std::sqrt(static_cast<double>(len));
    out.distance.push_back(len ? d : std::numeric_limits<double>::quiet_NaN());
    // A zero vector has no angle; 0 keeps the series usable (latencies are never all zero).
    const double denom = std::sqrt(xx * rr);
    out.angle_rad.push_back(denom > 0 ? std::acos(std::clamp(dot / denom, -1.0, 1.0)) : 0.0);
  }
  return out;
}

std::vector<double> reduce(const std::vector<std::vector<double>>& per_size, Reduction how,
                           const ReduceOptions& options) {
  std::vector<double> out;
  out.reserve(per_size.size());
  switch (how) {
    case Reduction::GeometricDistance:
      return geometric_reduction(per_size, options.reference, options.per_element).distance;
    case Reduction::GeometricAngle:
      return geometric_reduction(per_size, options.reference, options.per_element).angle_rad;
    case Reduction::Mean:
      for (const auto& v : per_size) out.push_back(mean(v));
      return out;
    case Reduction::Median:
      for (const auto& v : per_size) out.push_back(median(v));
      return out;
    case Reduction::TrimmedMean:
      for (const auto& v : per_size) out.push_back(trimmed_mean(v, options.trim_fraction));
      return out;
    case Reduction::MissFraction: {
      double threshold = options.miss_threshold;
      if (std::isnan(threshold)) {
        std::vector<double> pooled;
        for (const auto& v : per_size) pooled.insert(pooled.end(), v.begin(), v.end());
        const Levels lv = find_levels(pooled);
        threshold = lv.boundaries.empty() ? (lv.levels.empty() ? kInf : lv.levels.back().high) : lv.boundaries[0];
      }
      for (const auto& v : per_size) {
        if (v.empty()) {
          out.push_back(std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        const auto misses = std::count_if(v.begin(), v.end(), [&](double s) { return s > threshold; });
        out.push_back(static_cast<double>(misses) / static_cast<double>(v.size()));
      }
      return out;
    }
  }
  return out;
}

double segment_cost(const std::vector<double>& series, size_t begin, size_t end, Cost cost) {
  end = std::min(end, series.size());
  if (begin >= end) return 0;
  return SegmentCosts(series, cost, 1e-12)(begin, end);
}

// Why a series cannot hold a change point (empty when it can): too short for two segments
// of min_seg values, or not finite.
static std::string unusable_series(const std::vector<double>& x, size_t min_seg) {
  if (x.size() < 2 * min_seg)
    return "series of " + std::to_string(x.size()) + " values is too short for two segments of at least " +
           std::to_string(min_seg);
  if (!all_finite(x)) return "series contains NaN or infinite values";
  return {};
}

// ------------------------------------------------------------------ single change point

SingleChange single_change_point(const std::vector<double>& x, const SingleChangeOptions& o) {
  SingleChange r;
  const size_t min_seg = std::max<size_t>(o.min_segment, o.cost == Cost::Linear ? 3 : 1);
  const size_t n = x.size();
  if (r.reason = unusable_series(x, min_seg); !r.reason.empty()) return r;
  const double var_all = variance(x);
  if (var_all == 0) {
    r.reason = "constant series: no change";
    return r;
  }
  // Relative floor: a segment with no spread at all must not win by log(0).
  const double var_floor = 1e-6 * var_all;
  const BestSplit best = best_split(x, o.cost, min_seg, var_floor);
  const double cost_all = o.cost == Cost::AbsoluteDeviation ? prefix_l1_costs(x)[n]
                                                            : SegmentCosts(x, o.cost, var_floor)(0, n);
  r.index = best.index;
  r.total_cost = best.total;
  r.cost_reduction = cost_all - best.total;
  r.left_level = level_of_segment(x, 0, best.index, o.cost);
  r.right_level = level_of_segment(x, best.index, n, o.cost);

  if (o.permutations > 0) {
    // Shuffles keep the values and destroy their order; the best split of a shuffle is what
    // chance alone achieves, so the p-value accounts for choosing the best of n - 1 splits.
    std::mt19937_64 gen(o.seed);
    std::vector<double> y(x);
    size_t as_good = 0;
    const double tol = 1e-9 * std::max(1.0, std::fabs(best.total));
    for (size_t p = 0; p < o.permutations; ++p) {
      for (size_t i = n - 1; i > 0; --i) std::swap(y[i], y[detail::uniform_below(gen, i + 1)]);
      if (best_split(y, o.cost, min_seg, var_floor).total <= best.total + tol) ++as_good;
    }
    r.permutation_p = static_cast<double>(as_good + 1) / static_cast<double>(o.permutations + 1);
  }
  if (o.ks_test) r.ks_p = confirm_change(x, best.index, o.alpha, 1).ks.p_value;
  r.p_value = std::max(r.permutation_p, r.ks_p);
  r.confidence = 1.0 - r.p_value;

  const double shift = std::fabs(r.right_level - r.left_level);
  const std::string where = "best split at index " + std::to_string(r.index) + " (" + fmt(r.left_level) + " -> " +
                            fmt(r.right_level) + ")";
  if (r.permutation_p >= o.alpha) {
    r.reason = "no significant change: " + where + " is no better than in shuffled series (p=" +
               fmt(r.permutation_p) + ", alpha=" + fmt(o.alpha) + ")";
  } else if (r.ks_p >= o.alpha) {
    r.reason = "no significant change: " + where + " fails the KS test (p=" + fmt(r.ks_p) + ", alpha=" +
               fmt(o.alpha) + ")";
  } else if (shift < o.min_shift) {
    r.reason = "change too small: " + where + ", shift " + fmt(shift) + " < min_shift " + fmt(o.min_shift);
  } else {
    r.found = true;
    r.reason = "change: " + where + ", p=" + fmt(r.p_value);
  }
  return r;
}

// ------------------------------------------------------------------ several change points

namespace {

// PELT over z (unit-noise units): the starts of the optimal segments (0 first) under penalty
// `pen` per change, segments at least min_seg long. Costs in -2 log-likelihood units at unit
// noise: Gaussian SSE (also about a line); the L1 cost times sqrt(2 pi) = 1 / density at the
// median of unit normal noise, so that a small shift gains as much as under SSE and one
// penalty fits both; Gaussian with its own variance n log var (floored at 1% of the noise
// variance: flat stretches must not win by log 0).
std::vector<size_t> pelt(const std::vector<double>& z, Cost base, double pen, size_t min_seg) {
  const size_t n = z.size();
  SegmentCosts costs(z, base, 1e-2);
  const double l1_scale = 2.5066282746310002;  // sqrt(2 pi)
  auto cost = [&](size_t b, size_t e) { return base == Cost::AbsoluteDeviation ? l1_scale * costs(b, e) : costs(b, e); };
  // F[t]: optimal penalised cost of z[0, t); last[t]: start of its last segment.
  std::vector<double> F(n + 1, kInf);
  std::vector<size_t> last(n + 1, 0);
  F[0] = -pen;
  std::vector<size_t> cand{0};
  const bool prune = base != Cost::NormalMeanVar;  // its floored cost is not sub-additive
  std::vector<double> l1(n + 1, 0);  // AbsoluteDeviation: cost(s, t) for the candidates s
  for (size_t t = min_seg; t <= n; ++t) {
    if (base == Cost::AbsoluteDeviation) {
      // One backward pass from t down to the oldest candidate gives every cost(s, t) in
      // O((t - s) log n) instead of a median per candidate.
      RunningL1 run;
      size_t next = t;
      for (size_t k = cand.size(); k-- > 0;) {
        while (next > cand[k]) run.add(z[--next]);
        l1[cand[k]] = l1_scale * run.cost();
      }
    }
    std::vector<double> at(cand.size(), kInf);
    for (size_t k = 0; k < cand.size(); ++k) {
      const size_t s = cand[k];
      if (t - s < min_seg || F[s] == kInf) continue;
      at[k] = F[s] + (base == Cost::AbsoluteDeviation ? l1[s] : cost(s, t));
      if (at[k] + pen < F[t]) {
        F[t] = at[k] + pen;
        last[t] = s;
      }
    }
    if (prune) {
      std::vector<size_t> keep;
      for (size_t k = 0; k < cand.size(); ++k)
        if (at[k] == kInf || at[k] <= F[t]) keep.push_back(cand[k]);
      cand.swap(keep);
    }
    // t can start a later segment once it is a reachable end (F finite, i.e. t >= min_seg).
    if (t + min_seg <= n && F[t] < kInf) cand.push_back(t);
  }
  std::vector<size_t> ends;
  for (size_t t = n; t > 0; t = last[t]) ends.push_back(last[t]);
  std::reverse(ends.begin(), ends.end());  // 0, c1, c2, ...
  return ends;
}

// Each change of the segmentation `b` (segment starts) with its levels and KS test against
// its neighbouring segments.
std::vector<Change> describe_changes(const std::vector<double>& x, const std::vector<size_t>& b, Cost base,
                                     double alpha) {
  std::vector<Change> out;
  const size_t n = x.size();
  for (size_t i = 1; i < b.size(); ++i) {
    Change c;
    c.index = b[i];
    const size_t lb = b[i - 1], e = i + 1 < b.size() ? b[i + 1] : n;
    c.left_level = level_of_segment(x, lb, c.index, base);
    c.right_level = level_of_segment(x, c.index, e, base);
    const std::vector<double> left(x.begin() + static_cast<std::ptrdiff_t>(lb), x.begin() + static_cast<std::ptrdiff_t>(c.index));
    const std::vector<double> right(x.begin() + static_cast<std::ptrdiff_t>(c.index), x.begin() + static_cast<std::ptrdiff_t>(e));
    c.ks_p = ks_two_sample(left, right).p_value;
    c.confidence = 1.0 - c.ks_p;
    c.confirmed = c.ks_p < alpha;
    out.push_back(c);
  }
  return out;
}

}  // namespace

MultiChange multiple_change_points(const std::vector<double>& x, const MultiChangeOptions& o) {
  MultiChange r;
  const size_t n = x.size();
  const size_t min_seg = std::max<size_t>(o.min_segment, o.cost == Cost::Linear ? 3 : 1);
  r.segment_begin = {0};
  if (r.reason = unusable_series(x, min_seg); !r.reason.empty()) return r;
  const auto [mn, mx] = std::minmax_element(x.begin(), x.end());
  const double range = *mx - *mn;
  if (range == 0) {
    r.reason = "constant series: no change";
    return r;
  }
  double sigma = o.sigma > 0 ? o.sigma : difference_sigma(x);
  if (!(sigma > 0) || !std::isfinite(sigma)) sigma = 0;
  sigma = std::max(sigma, o.min_sigma_fraction * range);
  r.sigma = sigma;
  std::vector<double> z(x);
  for (double& v : z) v /= sigma;
  const double pen = o.penalty_factor * std::log(static_cast<double>(n));
  r.penalty = pen;
  std::vector<size_t> ends = pelt(z, o.cost, pen, min_seg);
  // KS confirmation of each change against its neighbouring segments; with drop_unconfirmed
  // the least confirmed change is merged away and its neighbours re-tested, until all pass.
  r.changes = describe_changes(x, ends, o.cost, o.alpha);
  size_t dropped = 0;
  while (o.drop_unconfirmed && !r.changes.empty()) {
    size_t worst = 0;
    for (size_t i = 1; i < r.changes.size(); ++i)
      if (r.changes[i].ks_p > r.changes[worst].ks_p) worst = i;
    if (r.changes[worst].confirmed) break;
    ends.erase(ends.begin() + static_cast<std::ptrdiff_t>(worst) + 1);
    r.changes = describe_changes(x, ends, o.cost, o.alpha);
    ++dropped;
  }
  r.segment_begin = ends;
  if (dropped) r.reason = std::to_string(dropped) + " change(s) dropped by the KS test; ";
  r.found = !r.changes.empty();
  r.reason += r.found ? std::to_string(r.changes.size()) + " change(s), noise sigma " + fmt(sigma) + ", penalty " + fmt(pen)
                     : "no change worth the penalty " + fmt(pen) + " (noise sigma " + fmt(sigma) + ")";
  return r;
}

}  // namespace memtopo::analysis
