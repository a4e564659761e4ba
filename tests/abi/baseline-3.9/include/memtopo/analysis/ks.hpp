// Two-sample Kolmogorov-Smirnov test (thesis, paper 003, section 3.3.4) with the p-value from
// Boost.Math's Kolmogorov distribution instead of the thesis' critical-value approximation.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace memtopo::analysis {

struct KsResult {
  bool valid = false;          // false: a sample was empty (reason says which)
  double statistic = 0;        // D = sup |F1(x) - F2(x)|, ties handled exactly
  double effective_n = 0;      // n1 * n2 / (n1 + n2)
  double p_value = 1;          // asymptotic: P(K > sqrt(effective_n) * D)
  double confidence = 0;       // 1 - p_value, in [0, 1]
  size_t n1 = 0, n2 = 0;
  std::string reason;
};

KsResult ks_two_sample(const std::vector<double>& a, const std::vector<double>& b);

// Survival function of the Kolmogorov distribution, P(K > lambda) (via Boost.Math).
double kolmogorov_survival(double lambda);

// Is there a change at `index` (first element of the new segment)? KS test of
// series[0, index) against series[index, n).
struct ChangeConfirmation {
  bool confirmed = false;      // p_value < alpha and both sides hold >= min_side values
  KsResult ks;
  double alpha = 0;
  std::string reason;          // why not confirmed (or a one-line summary when confirmed)
};
ChangeConfirmation confirm_change(const std::vector<double>& series, size_t index, double alpha = 0.01,
                                  size_t min_side = 2);

}  // namespace memtopo::analysis
