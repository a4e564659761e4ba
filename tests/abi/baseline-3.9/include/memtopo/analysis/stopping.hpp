// When a repeated measurement has enough samples (docs/measurement.md, "Start state and
// conditions"): the framework's stopping criterion, as nvbench's "stdrel". A probe declares
// what it needs (at least, at most, the noise it accepts, a time budget) instead of a fixed
// repeat count, and reads why it stopped.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace memtopo::analysis {

struct StopRule {
  size_t min_samples = 5;            // never fewer
  size_t max_samples = 100;          // never more
  double max_relative_noise = 0.01;  // stop once the median's noise, relative, is this small
  double max_seconds = 1.0;          // stop once the samples took this long (at least min_samples)
};

struct StopResult {
  std::vector<double> samples;
  double median = 0;
  // The median's relative noise: the normal-consistent MAD over sqrt(n) over the median (NaN
  // with fewer than two samples or a zero median).
  double relative_noise = 0;
  bool converged = false;  // stopped because the noise was small enough
  std::string why;         // "noise 0.4 % after 7 samples", "100 samples (the most), noise 2.1 %"
};

// The median's relative noise of `samples` (see StopResult::relative_noise).
double relative_noise(const std::vector<double>& samples);

// Calls `sample` (one measurement, any unit) until `rule` says stop. `elapsed_s` tells the time
// spent so far (the caller's clock; tests pass a counter), so the criterion stays testable.
StopResult repeat_until_stable(const std::function<double()>& sample, const StopRule& rule,
                               const std::function<double()>& elapsed_s);

}  // namespace memtopo::analysis
