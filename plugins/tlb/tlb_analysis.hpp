// tlb: the analysis of the TLB probes, free of measurement so that tests feed it recorded
// or modelled series. Method and reasons: docs/tlb.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlb {

// Page counts for the footprint sweep: 1, 2, 3, ... then four points per octave, up to max.
std::vector<uint64_t> page_grid(uint64_t max_pages);

// A chase's low cycles: the 10th percentile of the samples of its lowest latency level that
// holds a twentieth of them or more (of all samples where they form no levels). A chase whose
// near L2 hits are a tenth of its loads had the 10th percentile of all at their noise's top (a
// random device's 19 and 23 held pages read 258 and 268 cycles for 251, half way to the miss).
double low_level_cycles(const std::vector<uint32_t>& samples);

// How much a point must lie above a level to be a rise of the sweep.
constexpr double kRampRise = 0.03;

// The latency levels of a sweep of cycles per load over growing page counts: level 0 every
// translation hits, level k the k-th TLB level misses too. last_hit_pages[k] is the largest
// page count still on level k (before the ramp to level k + 1); `complete` is false when the
// sweep ends on a ramp (a further level starts past the last page count measured).
struct SweepLevels {
  std::vector<double> cycles;             // per level, the plateau's median
  // Per level, the plateau's mean without its fifth highest and lowest points (level_penalty).
  std::vector<double> mean_cycles;
  std::vector<uint64_t> last_hit_pages;   // per level but the last
  bool ends_on_ramp = false;  // the last point kRampRise above the last level, past its plateau
  std::string reason;                     // why nothing was found
};
SweepLevels sweep_levels(const std::vector<uint64_t>& pages, const std::vector<double>& cycles);

// What level k (1 or more) adds over level k - 1. Each sweep point is a low percentile of whole
// cycles, and a plateau's points step between neighbouring cycles: the medians' difference read
// random device 56's penalty 27 for 26, the means' read 17's 17.4 for 18. The value is the
// middle of the two; where they differ by more than a quarter cycle, `quantized` says the
// value is uncertain by about half a cycle.
struct Penalty {
  double cycles = 0;
  bool quantized = false;
};
Penalty level_penalty(const SweepLevels& levels, size_t k);

// Whether the step from plateau `lower` to plateau `upper` (cycles) stands above the sweep's
// own spread: at least 5 % of the lower plateau and `k` times the point-to-point noise of the
// sweep (analysis::difference_sigma). A fleet compares levels GPU by GPU, so a level must
// come back in every run; a step within a few noise widths does not.
bool step_stands_out(const std::vector<double>& sweep_cycles, double lower, double upper, double k = 6.0);

// Whether chases measured again on both sides of a step (`held`: page counts the lower level
// held in the sweep, `missed`: the upper level's) show it again: the fastest `missed` at least
// half the step above the slowest `held`. One sweep's plateau can be a passing disturbance;
// a level is one that every measurement of it shows.
bool step_confirmed(const std::vector<double>& held, const std::vector<double>& missed, double lower, double upper);

// Whether a level's entries (its first miss at `entries` + 1 pages of the page size found)
// agree with the sweep's first miss at `sweep_first_miss` pages of its larger stride: a TLB
// holds at least as many pages at a smaller stride (more, where its sets are indexed by page
// number). Misses from fewer than half of them are a miss test that took noise for misses.
bool entries_agree_with_sweep(uint64_t entries, uint64_t sweep_first_miss);

// The first page count past `held` whose cycles reached three quarters of the way from
// `lower` to `upper`: a count where (nearly) every load misses, past the ramp's foot where sets
// overflow one by one. The last page count when none did.
uint64_t first_missing_pages(const std::vector<uint64_t>& pages, const std::vector<double>& cycles, uint64_t held,
                             double lower, double upper);

// Chases of one level measured again: `held` (page counts the level below held) and `missed`
// (past the step); `unmeasurable` says why they could not be (empty when they were).
struct Remeasured {
  std::vector<double> held, missed;
  std::string unmeasurable;
};

// The levels of a sweep that stand out and come back: the count of leading levels past the
// first for which `remeasure(k)` (a Remeasured of level k) confirms the step; `why` says why
// the next one was not kept (empty when every one was).
struct ConfirmedLevels {
  size_t count = 0;
  std::string why;
};
template <class Remeasure>
ConfirmedLevels confirm_levels(const SweepLevels& lv, const std::vector<double>& sweep_cycles, Remeasure remeasure) {
  ConfirmedLevels c;
  for (size_t k = 1; k < lv.cycles.size(); ++k) {
    const double lower = lv.cycles[k - 1], upper = lv.cycles[k];
    const std::string step = "the step to " + std::to_string(upper) + " cycles after " +
                             std::to_string(lv.last_hit_pages[k - 1]) + " pages";
    if (!step_stands_out(sweep_cycles, lower, upper)) {
      c.why = step + " is within the sweep's own spread";
      return c;
    }
    const Remeasured r = remeasure(k);
    if (!r.unmeasurable.empty()) {
      c.why = step + " cannot be measured again: " + r.unmeasurable;
      return c;
    }
    if (!step_confirmed(r.held, r.missed, lower, upper)) {
      c.why = step + " did not come back when measured again";
      return c;
    }
    ++c.count;
  }
  return c;
}

// Mei and Chu's set structure of an LRU TLB from the misses per pass of chases over
// entries + 1, entries + 2, ... pages (misses[i] for entries + 1 + i pages): the first set to
// overflow adds its ways + 1 misses, each further page the next set's ways + 1, until every
// load misses. Ways per set in the order they overflowed; empty with `reason` when the curve
// is not of that shape (another replacement policy, or too few points).
struct SetStructure {
  std::vector<int64_t> ways;  // per set
  bool complete = false;      // every load misses at the last point
  std::string reason;
};
SetStructure set_structure(uint64_t entries, const std::vector<double>& misses_per_pass);

// The sets as the sim and the topology write them: equal ways give a count, unequal a list.
bool equal_ways(const std::vector<int64_t>& ways);

}  // namespace tlb
