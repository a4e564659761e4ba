#include "memtopo/analysis/extrapolate.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memtopo::analysis {
namespace {

struct Line {
  double c = 0, a = 0, var_c = 0, chi2 = 0;
  bool ok = false;
};

// Weighted least squares y = c - a x.
Line fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sy += w[i] * y[i];
    sxx += w[i] * x[i] * x[i];
    sxy += w[i] * x[i] * y[i];
  }
  Line l;
  const double det = sw * sxx - sx * sx;
  if (!(det > 0)) return l;
  const double slope = (sw * sxy - sx * sy) / det;
  l.c = (sy - slope * sx) / sw;
  l.a = -slope;
  l.var_c = sxx / det;
  for (size_t i = 0; i < x.size(); ++i) l.chi2 += w[i] * std::pow(y[i] - (l.c - l.a * x[i]), 2);
  l.ok = true;
  return l;
}

}  // namespace

RateFit extrapolate_to_infinite_rate(const std::vector<double>& t, const std::vector<double>& y,
                                     const std::vector<double>& se) {
  RateFit f;
  const size_t n = y.size();
  if (n == 0 || t.size() != n || se.size() != n) {
    f.why = "no counts";
    return f;
  }
  std::vector<double> w(n);
  double sw = 0, swy = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!(se[i] > 0) || !(t[i] > 0)) {
      f.why = "a count without a standard error or a time";
      return f;
    }
    w[i] = 1 / (se[i] * se[i]);
    sw += w[i];
    swy += w[i] * y[i];
  }
  const double mean = swy / sw;
  double chi2_flat = 0;
  for (size_t i = 0; i < n; ++i) chi2_flat += w[i] * std::pow(y[i] - mean, 2);
  // Rate independent: the counts scatter no more than a chi-square with n - 1 degrees of
  // freedom allows three standard deviations above its mean.
  const double dof = double(n) - 1;
  if (n < 3 || chi2_flat <= dof + 3 * std::sqrt(2 * dof)) {
    f.ok = true;
    f.limit = mean;
    f.standard_error = std::sqrt(1 / sw);
    f.chi2 = chi2_flat;
    return f;
  }
  f.rate_dependent = true;
  Line best;
  double best_beta = 0;
  std::vector<std::pair<double, Line>> all;
  for (int k = 10; k <= 150; ++k) {
    const double beta = k / 100.0;
    std::vector<double> x(n);
    for (size_t i = 0; i < n; ++i) x[i] = std::pow(t[i], beta);
    const Line l = fit_line(x, y, w);
    if (!l.ok) continue;
    all.push_back({beta, l});
    if (!best.ok || l.chi2 < best.chi2) {
      best = l;
      best_beta = beta;
    }
  }
  if (!best.ok || !(best.a > 0)) {
    f.why = "the counts change with the rate, but do not grow towards faster rates";
    f.limit = mean;
    f.standard_error = std::sqrt(1 / sw);
    f.chi2 = chi2_flat;
    return f;
  }
  const double dof_fit = double(n) - 3;
  const double scale = dof_fit > 0 ? std::max(1.0, best.chi2 / dof_fit) : 1.0;
  double lo = best.c, hi = best.c;
  for (const auto& [beta, l] : all)
    if (l.a > 0 && l.chi2 <= best.chi2 + scale) {
      lo = std::min(lo, l.c);
      hi = std::max(hi, l.c);
    }
  f.ok = true;
  f.limit = best.c;
  f.a = best.a;
  f.beta = best_beta;
  f.chi2 = best.chi2;
  const double beyond = best.a * std::pow(*std::min_element(t.begin(), t.end()), best_beta);
  f.standard_error = std::sqrt(best.var_c * scale + std::pow((hi - lo) / 2, 2) + beyond * beyond);
  return f;
}

}  // namespace memtopo::analysis
