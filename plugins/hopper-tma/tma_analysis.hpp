// Summaries of the TMA measurements, kept apart from the kernels so that they run on recorded
// series without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace hopper_tma {

enum class Method : int { Bulk = 0, Ldgsts = 1, LoadStore = 2, Tensor = 3 };
enum class Scope : int { Sm = 0, Gpu = 1 };

// One throughput measurement: `bytes_per_transfer` moved per transfer with `stages`
// transfers in flight, by one SM (Scope::Sm) or every SM at once (Scope::Gpu).
struct ThroughputPoint {
  Method method = Method::Bulk;
  Scope scope = Scope::Sm;
  int64_t bytes_per_transfer = 0;
  int64_t stages = 1;
  double gbps = 0;
};

// The best over the stages at each of `sizes` (0 where none was measured).
std::vector<double> best_over_stages(const std::vector<ThroughputPoint>& points, Method method, Scope scope,
                                     const std::vector<int64_t>& sizes);

// The highest rate any method reached in `scope`: the ceiling both methods meet where the L2,
// not the copy, limits them.
double scope_ceiling(const std::vector<ThroughputPoint>& points, Scope scope);

// The transfer size from which `tma` beats `other` by more than `margin` (relative) at
// that size and at every larger size of `sizes` (ascending). A size where both reach
// `tie_share` of `ceiling_gbps` is a tie, no win: there the L2 limits both, and which is a few
// per cent ahead moved from run to run (docs/results/log/h100.md, "Figures behind comments"). Empty when it does not win at the largest size: TMA never beats the other method
// in the range, and no size is invented.
struct Crossover {
  int64_t from_bytes = 0;
  bool at_smallest = false;  // it wins at every size: the crossover is at most the smallest
};
constexpr double kCrossoverMargin = 0.05;
constexpr double kCeilingTieShare = 0.9;
std::optional<Crossover> crossover(const std::vector<int64_t>& sizes, const std::vector<double>& tma,
                                   const std::vector<double>& other, double margin = kCrossoverMargin,
                                   double ceiling_gbps = 0, double tie_share = kCeilingTieShare);

// One timed copy: its size and cycles from issue to barrier completion.
struct LatencySample {
  int64_t bytes = 0;
  double cycles = 0;
};

// The cycles at each size, ascending by size: the interquartile mean (the mean of the middle
// half: copies from DRAM fall in two levels, lines homed near and far, whose shares move a
// median between them from run to run, docs/results/log/h100.md, "Validity").
struct SizeLatency {
  int64_t bytes = 0;
  double centre_cycles = 0;
  double low_cycles = 0;   // 10th percentile
  double high_cycles = 0;  // 90th percentile
};
std::vector<SizeLatency> latency_by_size(const std::vector<LatencySample>& samples);

}  // namespace hopper_tma
