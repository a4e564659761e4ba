// The search of global-throughput/streams over one bandwidth surface (blocks per SM, threads
// per block, ILP, width), free of measurement so that tests feed it modelled responses.
// docs/global-throughput.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace global_throughput {

struct StreamConfig {
  uint32_t blocks_per_sm = 1, threads = 256, ilp = 1, width_bytes = 16;
  uint64_t footprint_bytes = 0;  // 0: the level's own footprint
  // 0 (StreamShape::Rounds): resident blocks, each its own rounds; 1 (Grid): a block per round,
  // blocks_per_sm then being what the SM holds; 2 (SHARED): every block reads the footprint.
  uint32_t shape = 0;
  uint32_t warps_per_sm() const { return blocks_per_sm * threads / 32; }
  // Bytes one SM's threads keep in flight: what Little's law turns into a rate.
  uint64_t bytes_in_flight_per_sm() const { return uint64_t(blocks_per_sm) * threads * ilp * width_bytes; }
  std::string text() const;
};

struct StreamPoint {
  StreamConfig config;
  double rate = 0;  // what the search maximizes (bytes per second, or per cycle)
};

struct SearchSpace {
  uint32_t max_warps_per_sm = 64;
  uint32_t max_blocks_per_sm = 32;
  uint32_t max_threads_per_block = 1024;
  // Configurations the footprint cannot take (an L1 slice too small for a round), skipped.
  std::function<bool(const StreamConfig&)> allowed = [](const StreamConfig&) { return true; };
  // Whether other block sizes and widths follow the best warps and ILP.
  bool refine = true;
};

// Measures configurations until the answer is clear: at 16-byte accesses, warps per SM double
// at each ILP until the rate levels off (under 2 % more), ILP doubles until its best levels
// off; then (SearchSpace::refine), at the best warps and ILP, other block sizes and the 8- and
// 4-byte widths. Points in the order measured.
std::vector<StreamPoint> search_surface(const SearchSpace& space,
                                        const std::function<double(const StreamConfig&)>& measure);

// Measures the `top` highest points `extra` more times each and gives each of them the window of
// its median rate: `remeasure(i)` measures point i once more and returns its rate;
// `keep(i, window)` is told which window (0: the search's, 1..extra: the repeats) each point
// keeps. A search's best is the highest of single windows, and one window's noise moved an
// L2 write rate between runs (docs/results/log/h100.md, "Validity"); the median of three is no one
// window's luck.
void confirm_best(std::vector<StreamPoint>& points, size_t top, size_t extra,
                  const std::function<double(size_t)>& remeasure, const std::function<void(size_t, size_t)>& keep);

// The point of the highest rate, and the one of the fewest bytes in flight per SM (then the
// fewest warps) within `share` of it: the smallest configuration a kernel needs.
size_t best_point(const std::vector<StreamPoint>& points);
size_t smallest_within(const std::vector<StreamPoint>& points, double share);

}  // namespace global_throughput
