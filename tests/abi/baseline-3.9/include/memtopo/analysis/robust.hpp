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
// What a positive noise term adds to a chase's time per load, read off per-load samples of
// the same hits: their mean less their 10th percentile, samples above `ceiling` or more than
// ten times the bulk's spread (p90 - p10) above the median (interruptions, which a chase's low
// windows leave out too) left out. NaN when no sample is at or below the ceiling.
double noise_excess(const std::vector<double>& samples, double ceiling);
// The same, where the chase carries that noise: a noise term in each load adds its variance
// per load to a chase's window, so windows of more loads spread more. `short_windows` and
// `long_windows` are the cycles of repeated chases whose lengths differ by `loads_between`;
// their robust variances (MAD, normal-consistent) give the variance per load. Where it is at
// least an eighth of the excess squared, the samples' spread is the loads' and the excess is
// returned; else 0: the single loads spread by the timing's own cost (a GPU's clock reads),
// which no chase carries. Noise of mean m whose lowest values are near 0 has a variance of
// m x m or more (uniform 0 .. 2m: m x m / 3 over an excess near m x 0.8, geometric: m + m x m);
// the variance from 128 chases of each length is uncertain by about half of itself, so a
// quarter failed uniform noise now and then.
double chase_noise_excess(const std::vector<double>& samples, double ceiling, const std::vector<double>& short_windows,
                          const std::vector<double>& long_windows, double loads_between);
// exp(mean(log x)); NaN when empty or any value is <= 0.
double geometric_mean(const std::vector<double>& x);
// Noise level of a series that may contain steps: MAD of the first differences / sqrt(2),
// normal-consistent. A step moves one difference only, so it barely touches the estimate.
double difference_sigma(const std::vector<double>& series);

}  // namespace memtopo::analysis
