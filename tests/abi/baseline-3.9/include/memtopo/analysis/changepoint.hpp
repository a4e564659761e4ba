// Change-point detection (thesis, paper 003, section 3.3): reduction of per-size sample
// vectors to one value per size, a single change point by exhaustive cost minimisation, and
// several change points by PELT with a BIC-like penalty. Every detector returns the location
// and a significance; a series without a change is rejected ("found = false" with a reason).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace memtopo::analysis {

// ------------------------------------------------------------------ reduction

// Geometric mapping (Grundy, Killick and Mihaylov, cited by the thesis as [40]): each vector x
// becomes its Euclidean distance to a reference vector r and the angle between x and r.
// Default reference: all ones, as in the thesis. Vectors of unequal length are compared over
// their first min(len) elements against the same prefix of r; with per_element the distance is
// divided by sqrt(len) (an RMS distance) so that sizes with more samples do not weigh more.
struct GeometricReduction {
  std::vector<double> distance;
  std::vector<double> angle_rad;
};
GeometricReduction geometric_reduction(const std::vector<std::vector<double>>& vectors,
                                       const std::vector<double>& reference = {},
                                       bool per_element = false);

enum class Reduction {
  GeometricDistance,  // the thesis' choice
  GeometricAngle,
  Mean,
  Median,
  TrimmedMean,        // options.trim_fraction at each end
  MissFraction,       // fraction of samples above options.miss_threshold
};

struct ReduceOptions {
  std::vector<double> reference;   // geometric reductions; empty = all ones
  bool per_element = false;        // geometric distance as RMS
  double trim_fraction = 0.1;      // TrimmedMean
  // MissFraction: a sample is a miss when > miss_threshold. NaN: the threshold is the boundary
  // above the lowest latency level found by find_levels on all samples pooled.
  double miss_threshold = std::numeric_limits<double>::quiet_NaN();
};

// One value per vector (e.g. per footprint). Empty vectors give NaN.
std::vector<double> reduce(const std::vector<std::vector<double>>& per_size, Reduction how,
                           const ReduceOptions& options = {});

// ------------------------------------------------------------------ costs

enum class Cost {
  SquaredError,       // sum (x - mean)^2: a shift in mean (the thesis' empirical-mean cost)
  AbsoluteDeviation,  // sum |x - median|: a shift in median, robust to outliers
  NormalMeanVar,      // n log(variance): a change in mean and/or variance
  // Squared error about the least-squares line of the segment: a change in level or slope.
  // The right model for "flat, then misses rising with the footprint": a constant-mean model
  // puts the change in the middle of such a ramp, this one at its start. min_segment >= 3.
  Linear,
};

// Cost of series[begin, end) under `cost` (raw units; exposed for tests and custom searches).
double segment_cost(const std::vector<double>& series, size_t begin, size_t end, Cost cost);

// ------------------------------------------------------------------ single change point

struct SingleChangeOptions {
  Cost cost = Cost::SquaredError;
  size_t min_segment = 2;          // fewest values on each side
  double alpha = 0.01;             // significance level of both tests below
  // Selection-aware significance: the exhaustive search always finds *some* split, so the cost
  // reduction is compared against the best reductions found in this many random shuffles of
  // the series (fixed seed: deterministic). 0 disables the permutation test.
  size_t permutations = 199;
  uint64_t seed = 0x6368616e6765ULL;
  // The thesis' test: KS on the values left vs right of the split.
  bool ks_test = true;
  // Smallest |right_level - left_level| that counts, in the series' units (0: any).
  double min_shift = 0;
};

struct SingleChange {
  bool found = false;
  size_t index = 0;           // first element of the right segment: left = [0, index)
  double left_level = 0;      // mean (SquaredError/NormalMeanVar) or median (AbsoluteDeviation)
  double right_level = 0;
  double total_cost = 0;      // cost(left) + cost(right) at the optimum
  double cost_reduction = 0;  // cost(all) - total_cost
  double permutation_p = 1;   // fraction of shuffles reaching the same reduction (1 if disabled)
  double ks_p = 1;            // KS p-value left vs right (1 if disabled)
  double p_value = 1;         // the larger of the two: both must be significant
  double confidence = 0;      // 1 - p_value
  std::string reason;         // why not found, or a one-line summary
};

// argmin_t cost(0, t) + cost(t, n) over all t with both sides >= min_segment (O(n log n)).
SingleChange single_change_point(const std::vector<double>& series, const SingleChangeOptions& options = {});

// ------------------------------------------------------------------ several change points

struct MultiChangeOptions {
  Cost cost = Cost::SquaredError;
  size_t min_segment = 2;
  // Penalty per change, in units of -2 log-likelihood: penalty_factor * log(n). The series is
  // scaled by its noise level (difference_sigma, or sigma when > 0) first, so the penalty means
  // the same for every series. 4 log n (twice BIC's 2 log n for a location and a mean):
  // measured on pure normal noise it splits under 2 % of 50-value series (SSE cost) and
  // under 5 % (L1), before the KS confirmation below.
  double penalty_factor = 4.0;
  double sigma = 0;                // known noise level; 0 = estimate
  // Noise floor as a fraction of the series' range, for noise-free series (sigma = 0).
  double min_sigma_fraction = 1e-3;
  // KS confirmation (the thesis' test) of each change: the segment before against the segment
  // after. 0.05 because segments can be short (4 values a side reach p = 0.037 at best).
  double alpha = 0.05;
  // Merge away changes the KS test does not confirm (least confirmed first, then re-test).
  bool drop_unconfirmed = true;
};

struct Change {
  size_t index = 0;            // first element of the new segment
  double left_level = 0;
  double right_level = 0;
  double ks_p = 1;             // KS: the segment before vs the segment after
  double confidence = 0;       // 1 - ks_p
  bool confirmed = false;      // ks_p < alpha
};

struct MultiChange {
  bool found = false;          // at least one change
  std::vector<Change> changes; // ascending index
  std::vector<size_t> segment_begin;  // 0 followed by every change index
  double sigma = 0;            // noise level used for scaling
  double penalty = 0;          // per change, in scaled units
  std::string reason;
};

// PELT (Killick, Fearnhead and Eckley 2012): exact minimum of sum of segment costs + penalty
// per change, with pruning; then the KS confirmation above.
MultiChange multiple_change_points(const std::vector<double>& series, const MultiChangeOptions& options = {});

}  // namespace memtopo::analysis
