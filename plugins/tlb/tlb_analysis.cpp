#include "tlb_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <memtopo/analysis.hpp>

namespace tlb {
namespace an = memtopo::analysis;

std::vector<uint64_t> page_grid(uint64_t max_pages) {
  std::vector<uint64_t> g;
  for (uint64_t p = 1; p <= std::min<uint64_t>(max_pages, 8); ++p) g.push_back(p);
  for (double x = 8 * std::pow(2.0, 0.25); x <= double(max_pages) * 1.0001; x *= std::pow(2.0, 0.25)) {
    const uint64_t p = uint64_t(std::llround(x));
    if (p > g.back()) g.push_back(p);
  }
  if (!g.empty() && g.back() < max_pages) g.push_back(max_pages);
  return g;
}

// How far below a level one chase's few L2 lines may read (see sweep_levels).
constexpr double kSliceSpread = 0.12;
// The points of the page grid (1 to 32 pages) that may scatter before the first level.
constexpr size_t kScatterPoints = 16;

SweepLevels sweep_levels(const std::vector<uint64_t>& pages, const std::vector<double>& cycles) {
  SweepLevels out;
  // A TLB miss adds tens of cycles to a few hundred: 3 % tells the levels apart, and two points
  // make a plateau (a level whose reach is the last octave still shows).
  const auto levels = an::plateaus(cycles, 0.03, 2);
  if (levels.empty()) {
    out.reason = "no two neighbouring page counts cost the same: no latency level";
    return out;
  }
  // A chase of a few loads touches a few L2 lines, whose slices decide its cycles: the points
  // up to 32 pages may lie above the first level (on an H100 one did, docs/results/log/h100.md,
  // "Figures behind comments") or below it by up to the gap between the L2's slice classes
  // (l2.slice_class_gap_cycles, about 11 % of a near hit on an H100 and an H200; on an H200 the
  // first points of a default run alternated between the classes) and still belong to it.
  // Fewer pages never miss more, so a point above cannot be an earlier TLB level; points below
  // are a level only where two or more form one (a plateau of its own, found first).
  std::vector<an::Plateau> levels_fixed = levels;
  const auto& f = levels_fixed.front();
  bool scatter = f.first > 0 && f.first < kScatterPoints;
  for (size_t i = 0; scatter && i < f.first; ++i) scatter = cycles[i] >= (1 - kSliceSpread) * f.median;
  if (scatter) levels_fixed.front().first = 0;
  if (levels_fixed.front().first != 0) {
    out.reason = "the smallest page counts do not form a level (" + std::to_string(cycles.front()) + " cycles at " +
                 std::to_string(pages.front()) + " pages)";
    return out;
  }
  // Keep rising levels only: a plateau no slower than the one before is the same level.
  std::vector<an::Plateau> rising{levels_fixed.front()};
  for (size_t i = 1; i < levels_fixed.size(); ++i) {
    if (levels_fixed[i].median > rising.back().median * 1.03) rising.push_back(levels_fixed[i]);
    else rising.back().last = levels_fixed[i].last;
  }
  const auto starts = an::level_starts(cycles, rising);
  for (size_t k = 0; k < rising.size(); ++k) {
    out.cycles.push_back(rising[k].median);
    const std::vector<double> points(cycles.begin() + long(rising[k].first), cycles.begin() + long(rising[k].last) + 1);
    const double mean = an::trimmed_mean(points, 0.2);
    out.mean_cycles.push_back(std::isfinite(mean) ? mean : rising[k].median);
    if (k + 1 < rising.size()) out.last_hit_pages.push_back(pages[std::max<size_t>(starts[k + 1], 1) - 1]);
  }
  // Past the last plateau the series rises again: a level starts beyond the sweep.
  const size_t tail = rising.back().last + 1;
  out.ends_on_ramp = tail < cycles.size() && cycles.back() > rising.back().median * (1 + kRampRise);
  return out;
}

Penalty level_penalty(const SweepLevels& lv, size_t k) {
  if (k == 0 || k >= lv.cycles.size() || k >= lv.mean_cycles.size()) return {};
  const double by_medians = lv.cycles[k] - lv.cycles[k - 1], by_means = lv.mean_cycles[k] - lv.mean_cycles[k - 1];
  return {0.5 * (by_medians + by_means), std::fabs(by_medians - by_means) > 0.25};
}

// A TLB miss adds tens of cycles to an L2 hit or more (7 % and up on the simulated devices); a
// smaller step that came back when measured again in one H100 run was the L2 slices a few more
// pages' lines land in, not a TLB level (docs/results/log/h100.md, "Validity": tlb.level_count).
constexpr double kLeastStep = 0.05;

bool step_stands_out(const std::vector<double>& sweep_cycles, double lower, double upper, double k) {
  const double sigma = an::difference_sigma(sweep_cycles);
  const double step = upper - lower;
  return step >= kLeastStep * lower && (!std::isfinite(sigma) || step >= k * sigma);
}

uint64_t first_missing_pages(const std::vector<uint64_t>& pages, const std::vector<double>& cycles, uint64_t held,
                             double lower, double upper) {
  for (size_t i = 0; i < pages.size() && i < cycles.size(); ++i)
    if (pages[i] > held && cycles[i] >= lower + 0.75 * (upper - lower)) return pages[i];
  return pages.empty() ? held + 1 : pages.back();
}

bool step_confirmed(const std::vector<double>& held, const std::vector<double>& missed, double lower, double upper) {
  if (held.empty() || missed.empty()) return false;
  const double slowest_held = *std::max_element(held.begin(), held.end());
  const double fastest_missed = *std::min_element(missed.begin(), missed.end());
  return fastest_missed - slowest_held >= 0.5 * (upper - lower);
}

bool entries_agree_with_sweep(uint64_t entries, uint64_t sweep_first_miss) {
  return 2 * (entries + 1) >= sweep_first_miss;
}

SetStructure set_structure(uint64_t entries, const std::vector<double>& misses_per_pass) {
  SetStructure s;
  double before = 0;
  for (size_t i = 0; i < misses_per_pass.size(); ++i) {
    const double pages = double(entries + 1 + i);
    const double m = misses_per_pass[i];
    const double step = m - before;
    if (m >= pages - 0.5) {  // every load misses: the last set overflowed at this page
      s.ways.push_back(int64_t(std::llround(step)) - 1);
      s.complete = true;
      break;
    }
    if (step < 1.5) {
      s.reason = "the misses per pass grow by " + std::to_string(step) + " from " + std::to_string(entries + i) +
                 " to " + std::to_string(entries + 1 + i) + " pages; an LRU set that overflows adds its ways + 1";
      s.ways.clear();
      return s;
    }
    s.ways.push_back(int64_t(std::llround(step)) - 1);
    before = m;
  }
  if (!s.complete) s.reason = "not every load misses after " + std::to_string(misses_per_pass.size()) + " more pages";
  // Only the first step is counted from zero: a base rate of slow loads (noise's tail) set a
  // little high or low moves it alone, while the later steps are differences in which it
  // cancels. The sets hold the level's entries, so the first set is what the others leave,
  // where that is within one way of its count.
  if (s.complete && s.ways.size() > 1) {
    int64_t rest = 0;
    for (size_t i = 1; i < s.ways.size(); ++i) rest += s.ways[i];
    const int64_t first = int64_t(entries) - rest;
    if (first >= 1 && std::llabs(first - s.ways[0]) == 1) s.ways[0] = first;
  }
  for (int64_t w : s.ways)
    if (w < 1) {
      s.reason = "a set of " + std::to_string(w) + " ways";
      s.ways.clear();
      s.complete = false;
    }
  return s;
}

bool equal_ways(const std::vector<int64_t>& ways) {
  return std::all_of(ways.begin(), ways.end(), [&](int64_t w) { return w == ways.front(); });
}

double low_level_cycles(const std::vector<uint32_t>& samples) {
  if (samples.empty()) return 0.0;
  const std::vector<double> all = an::to_doubles(samples);
  const an::Levels lv = an::find_levels(samples);
  for (size_t i = 0; lv.found && i < lv.levels.size(); ++i) {
    if (lv.levels[i].count * 20 < samples.size()) continue;
    std::vector<double> in;
    for (double v : all)
      if (lv.classify(v) == i) in.push_back(v);
    return an::percentile(in, 10);
  }
  return an::percentile(all, 10);
}

}  // namespace tlb
