// Extrapolating a count to an infinite rate (docs/analysis.md, "Counts that depend on the
// rate"). Used for the L2's lines held: other clients take lines away over time, so a slower
// load stream keeps fewer of its own lines.
#pragma once

#include <string>
#include <vector>

namespace memtopo::analysis {

// Counts y[i] +- se[i] taken at t[i] units of time per event (the inverse of the rate). When
// they differ by more than their errors allow, the loss model y = c - a t^beta (a > 0, beta in
// [0.1, 1.5], fitted) gives c, the count at an infinite rate; its standard error covers the
// fit's, the spread of c over every beta the data allow (chi-square within 1 of the best,
// after scaling by chi-square per degree of freedom when that exceeds 1), and what the model
// adds beyond the fastest rate measured (a t_min^beta): its form there is an assumption, so
// that step is counted as uncertain by its own size.
struct RateFit {
  bool ok = false;              // false: `why` says what did not fit
  bool rate_dependent = false;  // false: limit is the weighted mean of the counts
  double limit = 0, standard_error = 0;
  double a = 0, beta = 0, chi2 = 0;
  std::string why;
};
RateFit extrapolate_to_infinite_rate(const std::vector<double>& t, const std::vector<double>& y,
                                     const std::vector<double>& se);

}  // namespace memtopo::analysis
