#include "memtopo/analysis/ks.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <boost/math/distributions/kolmogorov_smirnov.hpp>

namespace memtopo::analysis {

double kolmogorov_survival(double lambda) {
  if (!(lambda > 0)) return 1.0;
  if (!std::isfinite(lambda)) return 0.0;
  // Boost's distribution with n observations describes D_n: P(D_n <= x) = theta4(0 | 2 x^2 n/pi)
  // in the limit, i.e. P(K <= sqrt(n) x). With n = 1 it is the Kolmogorov distribution itself.
  boost::math::kolmogorov_smirnov_distribution<double> k(1.0);
  return std::clamp(boost::math::cdf(boost::math::complement(k, lambda)), 0.0, 1.0);
}

KsResult ks_two_sample(const std::vector<double>& a, const std::vector<double>& b) {
  KsResult r;
  r.n1 = a.size();
  r.n2 = b.size();
  if (a.empty() || b.empty()) {
    r.reason = a.empty() ? "first sample is empty" : "second sample is empty";
    return r;
  }
  std::vector<double> x(a), y(b);
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  const double n1 = static_cast<double>(x.size()), n2 = static_cast<double>(y.size());
  // Walk both sorted samples; at each distinct value step past all copies in both samples
  // before comparing the ECDFs, so ties (integer cycle counts) are handled exactly.
  size_t i = 0, j = 0;
  double d = 0;
  while (i < x.size() && j < y.size()) {
    const double v = std::min(x[i], y[j]);
    while (i < x.size() && x[i] == v) ++i;
    while (j < y.size() && y[j] == v) ++j;
    d = std::max(d, std::fabs(static_cast<double>(i) / n1 - static_cast<double>(j) / n2));
  }
  r.valid = true;
  r.statistic = d;
  r.effective_n = n1 * n2 / (n1 + n2);
  // Two samples: the same limiting distribution as the one-sample test with n = n1 n2/(n1+n2).
  boost::math::kolmogorov_smirnov_distribution<double> dist(r.effective_n);
  r.p_value = d > 0 ? std::clamp(boost::math::cdf(boost::math::complement(dist, d)), 0.0, 1.0) : 1.0;
  r.confidence = 1.0 - r.p_value;
  return r;
}

ChangeConfirmation confirm_change(const std::vector<double>& series, size_t index, double alpha, size_t min_side) {
  ChangeConfirmation c;
  c.alpha = alpha;
  min_side = std::max<size_t>(min_side, 1);
  if (index < min_side || index > series.size() || series.size() - index < min_side) {
    c.reason = "change at index " + std::to_string(index) + " leaves fewer than " + std::to_string(min_side) +
               " values on one side of a series of " + std::to_string(series.size());
    return c;
  }
  std::vector<double> left(series.begin(), series.begin() + static_cast<std::ptrdiff_t>(index));
  std::vector<double> right(series.begin() + static_cast<std::ptrdiff_t>(index), series.end());
  c.ks = ks_two_sample(left, right);
  c.confirmed = c.ks.valid && c.ks.p_value < alpha;
  c.reason = "KS D=" + std::to_string(c.ks.statistic) + " p=" + std::to_string(c.ks.p_value) +
             (c.confirmed ? " < alpha=" : " >= alpha=") + std::to_string(alpha);
  return c;
}

}  // namespace memtopo::analysis
