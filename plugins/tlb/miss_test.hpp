// tlb: whether a chase misses one TLB level. Within 16 GiB the loads in the level's miss
// window are counted (a few misses of one overflowing set show), and where none count beyond
// chance or there is no window, the chase's low percentile must have moved half way to the
// level's plateau (every load missing); beyond 16 GiB, a pointer chase's average must have.
#pragma once

#include <cstdint>
#include <vector>

#include "tlb_chase.hpp"

namespace tlb {

struct MissTest {
  const Chaser* chase = nullptr;
  std::vector<Window> windows;
  bool counted = false;   // windows were found
  double base_rate = 0;   // window loads per load when the level holds every page
  // Per window: its loads per load of its level (Window::floor_raw) when the level holds
  // every page. The lines of another chase differ in their near and far L2 hits, and with them
  // in the hits that noise's tail moves into each window.
  std::vector<double> level_rates;
  double hit_cycles = 0, miss_cycles = 0;  // plateaus of the sweep
  double average_offset = 0;  // a chase's average minus the sweep's percentile

  bool misses(uint64_t loads, uint64_t stride) const;
  // Misses per pass beyond the base rate (counted windows only).
  double misses_per_pass(uint64_t loads, uint64_t stride, uint64_t passes) const;
  // The fewest loads at `stride` that miss, between `lo` (holds) and `hi` (misses).
  uint64_t first_miss(uint64_t lo, uint64_t hi, uint64_t stride) const;
};

// The test for the level between the sweep plateaus `hit` and `miss`: `held` loads at `stride`
// stay on the first, `missed` reach the second, and `below_next` loads (0: no further level)
// still stay on the second: the chase that shows the level's misses must not reach the next
// level's, whose loads would then miss both and leave no load missing this level alone.
MissTest miss_test(const Chaser& chase, uint64_t stride, uint64_t held, uint64_t missed, double hit, double miss,
                   uint64_t limit, uint64_t below_next = 0);

}  // namespace tlb
