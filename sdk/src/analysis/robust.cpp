#include "memtopo/analysis/robust.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memtopo::analysis {
namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> to_doubles(const std::vector<uint32_t>& values) {
  return std::vector<double>(values.begin(), values.end());
}

double mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  double s = 0;
  for (double v : x) s += v;
  return s / static_cast<double>(x.size());
}

double median(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  std::vector<double> v(x);
  const size_t n = v.size(), mid = n / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (n % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return 0.5 * (lo + hi);
}

double percentile(const std::vector<double>& x, double q) {
  if (x.empty() || !(q >= 0 && q <= 100)) return kNaN;
  std::vector<double> v(x);
  std::sort(v.begin(), v.end());
  const double h = (static_cast<double>(v.size()) - 1) * q / 100.0;
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

double mad(const std::vector<double>& x, bool normal_consistent) {
  if (x.empty()) return kNaN;
  const double m = median(x);
  std::vector<double> dev;
  dev.reserve(x.size());
  for (double v : x) dev.push_back(std::fabs(v - m));
  const double d = median(dev);
  return normal_consistent ? 1.482602218505602 * d : d;
}

double trimmed_mean(const std::vector<double>& x, double trim_fraction) {
  if (x.empty() || !(trim_fraction >= 0 && trim_fraction < 0.5)) return kNaN;
  std::vector<double> v(x);
  std::sort(v.begin(), v.end());
  const size_t cut = static_cast<size_t>(std::floor(trim_fraction * static_cast<double>(v.size())));
  if (2 * cut >= v.size()) return kNaN;
  double s = 0;
  for (size_t i = cut; i < v.size() - cut; ++i) s += v[i];
  return s / static_cast<double>(v.size() - 2 * cut);
}

double noise_excess(const std::vector<double>& samples, double ceiling) {
  std::vector<double> kept;
  for (double v : samples)
    if (v <= ceiling) kept.push_back(v);
  if (kept.empty()) return kNaN;
  // An interruption below the ceiling (a few in a thousand loads, hundreds of cycles each)
  // would still move the mean by cycles: samples ten spreads of the bulk above its median
  // are left out too. Noise of mean m keeps all but a vanishing tail (geometric: p90 ~ 2.3 m).
  const double low = percentile(kept, 10), bulk = std::max(percentile(kept, 90) - low, 1.0);
  const double top = median(kept) + 10 * bulk;
  kept.erase(std::remove_if(kept.begin(), kept.end(), [top](double v) { return v > top; }), kept.end());
  return std::max(0.0, mean(kept) - low);
}

double chase_noise_excess(const std::vector<double>& samples, double ceiling, const std::vector<double>& short_windows,
                          const std::vector<double>& long_windows, double loads_between) {
  const double excess = noise_excess(samples, ceiling);
  if (!std::isfinite(excess) || excess <= 0 || !(loads_between > 0)) return 0.0;
  const double s = mad(short_windows, true), l = mad(long_windows, true);
  if (!std::isfinite(s) || !std::isfinite(l)) return 0.0;
  const double per_load = (l * l - s * s) / loads_between;
  return per_load >= 0.125 * excess * excess ? excess : 0.0;
}

double geometric_mean(const std::vector<double>& x) {
  if (x.empty()) return kNaN;
  double s = 0;
  for (double v : x) {
    if (!(v > 0)) return kNaN;
    s += std::log(v);
  }
  return std::exp(s / static_cast<double>(x.size()));
}

double difference_sigma(const std::vector<double>& series) {
  if (series.size() < 2) return kNaN;
  std::vector<double> d;
  d.reserve(series.size() - 1);
  for (size_t i = 1; i < series.size(); ++i) d.push_back(series[i] - series[i - 1]);
  // The differences of iid noise have mean 0, so their median absolute value is their MAD.
  for (double& v : d) v = std::fabs(v);
  return 1.482602218505602 * median(d) / std::sqrt(2.0);
}

}  // namespace memtopo::analysis
