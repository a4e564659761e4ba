// tlb: the analysis of the TLB probes, free of measurement so that tests feed it recorded
// or modelled series. Method and reasons: docs/tlb.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tlb {

// Page counts for the footprint sweep: 1, 2, 3, ... then four points per octave, up to max.
std::vector<uint64_t> page_grid(uint64_t max_pages);

// The latency levels of a sweep of cycles per load over growing page counts: level 0 every
// translation hits, level k the k-th TLB level misses too. last_hit_pages[k] is the largest
// page count still on level k (before the ramp to level k + 1); `complete` is false when the
// sweep ends on a ramp (a further level starts past the last page count measured).
struct SweepLevels {
  std::vector<double> cycles;             // per level, the plateau's median
  std::vector<uint64_t> last_hit_pages;   // per level but the last
  bool ends_on_ramp = false;
  std::string reason;                     // why nothing was found
};
SweepLevels sweep_levels(const std::vector<uint64_t>& pages, const std::vector<double>& cycles);

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
