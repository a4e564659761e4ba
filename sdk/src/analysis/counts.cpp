#include "memtopo/analysis/counts.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <boost/math/distributions/chi_squared.hpp>

namespace memtopo::analysis {

bool beyond_chance(double observed, double expected) {
  return observed >= std::max(2.0, expected + 4.0 * std::sqrt(expected) + 2.0);
}

Mode mode(const std::vector<double>& values) {
  if (values.empty()) return {};
  std::map<double, size_t> freq;
  for (double x : values) ++freq[x];
  Mode m;
  size_t best = 0;
  for (auto [v, c] : freq)
    if (c > best) best = c, m.value = v;
  m.share = double(best) / double(values.size());
  return m;
}

UniformityTest chi_square_uniform(const std::vector<double>& counts, size_t bins) {
  UniformityTest t;
  const size_t cells = counts.size();
  if (cells == 0 || bins < 2) return t;
  bins = std::min(bins, cells);
  t.binned.assign(bins, 0);
  double total = 0;
  for (size_t j = 0; j < cells; ++j) {
    t.binned[j * bins / cells] += counts[j];
    total += counts[j];
  }
  for (size_t k = 0; k < bins; ++k) {
    // Cells in group k: those j with j * bins / cells == k.
    const double share =
        double((uint64_t(k + 1) * cells + bins - 1) / bins - (uint64_t(k) * cells + bins - 1) / bins) / double(cells);
    const double expect = total * share;
    t.chi2 += (t.binned[k] - expect) * (t.binned[k] - expect) / expect;
  }
  const boost::math::chi_squared dist(static_cast<double>(bins - 1));
  t.p_value = boost::math::cdf(boost::math::complement(dist, t.chi2));
  return t;
}

double proportion_standard_error(double p, double n) {
  n = std::max(n, 1.0);
  return std::sqrt(std::max(p * (1 - p), 1.0 / n) / n);
}

}  // namespace memtopo::analysis
