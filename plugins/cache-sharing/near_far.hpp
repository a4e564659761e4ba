// cache-sharing: near and far L2 hits told apart in a set of read latencies (the L2 probes).
#pragma once

#include <vector>

namespace cache_sharing {

// Near and far: the medians of two clusters of the latencies (two-means in one dimension,
// from the 10th and 90th percentiles; thousands of reads leave no empty gap between the levels
// to split at). One level (far 0) when the two lie within 15 % of the near one (the spread of
// one level's hits, not two levels), unless each holds a fifth of the reads and they lie ten
// of their own spreads apart (analysis::two_modes_or_separated: first reads from DRAM, where a
// far partition's few tens of cycles are under 15 %).
struct NearFar {
  double near = 0, far = 0;
  double boundary() const { return far > 0 ? (near + far) / 2 : 0; }
};
NearFar near_far(std::vector<double> lat);

}  // namespace cache_sharing
