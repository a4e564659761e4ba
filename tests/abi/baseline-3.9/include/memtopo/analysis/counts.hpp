// Counting statistics of the cache procedure: whether a count of events is beyond chance,
// the most frequent value of a sample, the chi-square test of uniform counts, and the
// standard error of a proportion.
#pragma once

#include <cstddef>
#include <vector>

namespace memtopo::analysis {

// Whether `observed` events are more than chance explains when `expected` happen by chance
// (a Poisson count): at least 2, and above expected + 4 sqrt(expected) + 2.
bool beyond_chance(double observed, double expected);

struct Mode {
  double value = 0;  // the most frequent value (the smallest of equally frequent ones)
  double share = 0;  // its share of the sample
};
Mode mode(const std::vector<double>& values);  // {0, 0} for an empty sample

// Chi-square test that `counts` (per cell) come from a uniform distribution, with the cells
// grouped into `bins` consecutive groups as equal as the cell count allows.
struct UniformityTest {
  std::vector<double> binned;  // counts per group
  double chi2 = 0;
  double p_value = 1;          // of counts at least this far from uniform
};
UniformityTest chi_square_uniform(const std::vector<double>& counts, size_t bins);

// Standard error of a proportion p measured in n independent trials (binomial), at least
// that of one event in n.
double proportion_standard_error(double p, double n);

}  // namespace memtopo::analysis
