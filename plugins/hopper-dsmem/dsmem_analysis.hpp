// Summaries of the distributed shared memory measurements, kept apart from the kernels so
// that they run on recorded series without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hopper_dsmem {

// One dependent chase: cycles per load from the block of rank 0 into the block at `distance`
// ranks from it (0: its own shared memory through its cluster address).
struct ChaseSample {
  int64_t cluster = 0;
  int64_t distance = 0;
  double cycles_per_load = 0;
};

struct DistanceLatency {
  int64_t distance = 0;
  double median_cycles = 0;
  double low_cycles = 0;   // 10th percentile over the clusters
  double high_cycles = 0;  // 90th percentile
  int64_t samples = 0;
};

// The latency at every distance seen, ascending by distance.
std::vector<DistanceLatency> latency_by_distance(const std::vector<ChaseSample>& samples);

// What the peer latencies say beside the local one: the median over every peer distance,
// and whether the distance changes it (the largest difference of two distances' medians
// beyond `tolerance` of their mean). Empty when no peer distance was measured.
struct PeerLatency {
  double median_cycles = 0;
  double spread_cycles = 0;  // largest minus smallest median over the distances
  bool depends_on_distance = false;
};
std::optional<PeerLatency> peer_latency(const std::vector<DistanceLatency>& by_distance, double tolerance = 0.03);

}  // namespace hopper_dsmem
