// Robust statistics on plain vectors. Every function accepts an empty or degenerate input
// and answers NaN ("no answer") instead of throwing.
#pragma once

#include <cstdint>
#include <vector>

namespace memtopo::analysis {

// Latency samples come as uint32_t cycles; the analysis works on doubles.
std::vector<double> to_doubles(const std::vector<uint32_t>& values);

double mean(const std::vector<double>& x);                 // NaN when empty
double median(const std::vector<double>& x);               // NaN when empty
// q in [0, 100], linear interpolation between order statistics (Hyndman-Fan type 7, the
// default of R and NumPy). NaN when empty or q outside [0, 100].
double percentile(const std::vector<double>& x, double q);
// Median absolute deviation from the median. With normal_consistent the value is scaled by
// 1.4826 so that it estimates the standard deviation of normal data.
double mad(const std::vector<double>& x, bool normal_consistent = false);
// Mean of what remains after dropping floor(trim_fraction * n) values at each end;
// trim_fraction in [0, 0.5). NaN when empty or nothing remains.
double trimmed_mean(const std::vector<double>& x, double trim_fraction = 0.1);
// exp(mean(log x)); NaN when empty or any value is <= 0.
double geometric_mean(const std::vector<double>& x);
// Noise level of a series that may contain steps: MAD of the first differences / sqrt(2),
// normal-consistent. A step moves one difference only, so it barely touches the estimate.
double difference_sigma(const std::vector<double>& series);

}  // namespace memtopo::analysis
