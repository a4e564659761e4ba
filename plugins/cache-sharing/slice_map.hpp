// cache-sharing: the L2 slice map from an SM x line matrix of near-hit latencies (the
// l2-slice-map probe; docs/cache-probes.md, "The L2 slice map"). A pure function of the matrix,
// so that it is tested on synthetic and recorded matrices without a GPU.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cache_sharing {

struct SliceMap {
  std::string why_not;  // non-empty: no slice division shows (the other fields are partial)
  // Per SM: its class (0: SM 0's); per line: its class (0: the lines class-0 SMs read faster).
  std::vector<int64_t> class_of_sm, class_of_line;
  std::vector<int64_t> sm_counts{0, 0}, line_counts{0, 0};  // by class
  // Per SM, the median cycles of its reads of the lines of its own class and of the other.
  std::vector<double> same_class_cycles, other_class_cycles;
  double gap_cycles = 0;          // median over SMs of other - same
  double variance_fraction = 0;   // the first factor's share of the additive model's residual
  double additive_residual_sd = 0, factor_residual_sd = 0;  // cycles, without and with the factor
  double sms_agreeing_fraction = 0;  // SMs whose own gap has the sign of their class
  uint64_t granule_bytes = 0;     // the largest aligned run of offsets of one line class
  bool granule_exact = false;     // false: no run of two lines shares a class (at most the stride)
  std::string fingerprint;        // the class vector, 4 SMs a hex digit, SM 0 in the first's top bit
};

// `cycles[s][l]`: SM s's near-hit latency of line l (the least of repeat reads), the lines
// `stride_bytes` apart from an aligned start. The factor counts when it takes at least
// `min_fraction` of the residual's variance and its classes both hold SMs and lines.
SliceMap slice_map(const std::vector<std::vector<double>>& cycles, uint64_t stride_bytes, double min_fraction = 0.5);

// The hex text of a 0/1 vector, 4 entries a digit, the first entry in the first digit's top bit.
std::string class_fingerprint(const std::vector<int64_t>& classes);

}  // namespace cache_sharing
