// The levels of the latency spectrum (spectrum_analysis.hpp).
#include "spectrum_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numeric>
#include <utility>

#include <memtopo/analysis.hpp>

namespace global_throughput {
namespace {

namespace an = memtopo::analysis;

size_t index_of(Segment s) { return static_cast<size_t>(s); }

// The segment a level belongs to: of the segments that hold a quarter of the level's loads and
// a meaningful share of their own loads there, the one with the largest share of its own loads;
// the L2 segment where it comes close (loads that cost what L2 hits cost are L2 hits).
bool kind_of(const SpectrumLevel& level, const std::array<size_t, kSegments>& totals, const SpectrumOptions& o,
             Segment& kind) {
  std::array<double, kSegments> share{};
  bool any = false;
  size_t best = 0;
  for (size_t k = 0; k < kSegments; ++k) {
    if (!totals[k]) continue;
    share[k] = double(level.loads_of[k]) / double(totals[k]);
    const bool candidate = share[k] >= o.min_segment_share && 4 * level.loads_of[k] >= level.loads;
    if (!candidate) {
      share[k] = 0;
      continue;
    }
    if (!any || share[k] > share[best]) best = k;
    any = true;
  }
  if (!any) return false;
  const size_t l2 = index_of(Segment::L2);
  kind = share[l2] > 0 && share[l2] >= o.l2_tie * share[best] ? Segment::L2 : static_cast<Segment>(best);
  return true;
}

// Names from the kinds: one level of a kind is the kind; two levels of a kind past the SM are
// near and far where the L2 set itself shows two levels a partition apart (the far one at
// least kFarPartition x the near: a hop between partitions, not a few cycles of the
// crossbar: docs/results/log/h100.md, "Latency spectrum");
// otherwise numbered.
constexpr double kFarPartition = 1.3;

void name_levels(Spectrum& s) {
  std::array<std::vector<size_t>, kSegments> of_kind;
  for (size_t i = 0; i < s.levels.size(); ++i)
    if (s.levels[i].attributed) of_kind[index_of(s.levels[i].kind)].push_back(i);
  const std::vector<size_t>& l2 = of_kind[index_of(Segment::L2)];
  const bool far_partition =
      l2.size() == 2 && s.levels[l2[1]].sample_cycles >= kFarPartition * s.levels[l2[0]].sample_cycles;
  for (size_t k = 0; k < kSegments; ++k) {
    const std::vector<size_t>& idx = of_kind[k];
    const std::string base = kind_name(static_cast<Segment>(k));
    for (size_t j = 0; j < idx.size(); ++j) {
      std::string& name = s.levels[idx[j]].name;
      if (idx.size() == 1) {
        name = base;
      } else if (idx.size() == 2 && far_partition && k != index_of(Segment::L1)) {
        name = base + (j == 0 ? "_near" : "_far");
      } else {
        name = base + "_" + std::to_string(j + 1);
      }
    }
  }
}

// What a timed sample adds: the level holding most L1-segment loads against the pointer chase
// over the same lines (docs/measurement.md, "One timed load").
double timing_cost(const Spectrum& s, double hot_chase_cycles) {
  if (!std::isfinite(hot_chase_cycles)) return 0;
  const size_t l1 = index_of(Segment::L1);
  const SpectrumLevel* hot = nullptr;
  for (const SpectrumLevel& l : s.levels)
    if (l.loads_of[l1] && (!hot || l.loads_of[l1] > hot->loads_of[l1])) hot = &l;
  return hot ? std::max(0.0, hot->sample_cycles - hot_chase_cycles) : 0;
}

// Levels of sorted samples split where neighbours lie further apart than rel_gap of the lower
// one (and abs_gap), then at valleys (split_at_valleys). Not an::find_levels: it bridges gaps of up to four spreads of either side,
// and DRAM loads (an H100's: docs/results/log/h100.md, "Latency spectrum") spread so wide that
// every level joins them. A gap relative to the latency keeps a wide level wide without
// letting it swallow its neighbours.
struct Groups {
  std::vector<SpectrumLevel> levels;  // ascending; the centre (mean), low and high of each
  std::vector<int32_t> level_of;      // per sample, -1 for an outlier
  std::string reason;
};

using Range = std::pair<size_t, size_t>;  // [first, end) of the sorted samples

// A level's sample: the mean of its middle half of loads (the interquartile mean). A level
// gathers loads of one distance class whose spread (the L2's slices) forms sub-modes in some
// runs, and DRAM's far home has a tail: the run's pages move a median between sub-modes and a
// mean with the tail.
double level_centre(const std::vector<double>& v) { return v.empty() ? 0 : an::trimmed_mean(v, 0.25); }

// Splits a range of sorted samples `s` at its deepest valley: a window of rel_gap of the
// latency holding under a fifth of the fullest window on either side of it, with at least
// `side` samples on each side. Two modes joined by a thin bridge of samples (DRAM loads homed
// near and far: docs/results/log/h100.md, "Latency spectrum") have no gap
// between neighbours, and whether one appeared would change from run to run; a valley measured
// against its own peaks does not depend on how many samples the run took.
void split_at_valleys(const std::vector<double>& s, Range r, double rel_gap, double side, std::vector<Range>& out) {
  const size_t n = r.second - r.first;
  std::vector<size_t> window(n), end(n);  // samples within rel_gap above each one, and where that ends
  for (size_t i = 0, j = 0; i < n; ++i) {
    j = std::max(j, i);
    while (j < n && s[r.first + j] < s[r.first + i] * (1 + rel_gap)) ++j;
    window[i] = j - i;
    end[i] = j;
  }
  std::vector<size_t> left(n + 1, 0), right(n + 1, 0);  // fullest window before i, from i on
  for (size_t i = 0; i < n; ++i) left[i + 1] = std::max(left[i], window[i]);
  for (size_t i = n; i-- > 0;) right[i] = std::max(right[i + 1], window[i]);
  double deepest = 0.2;  // a valley holds under a fifth of the lower peak
  size_t cut = 0;
  for (size_t i = 0; i < n; ++i) {
    if (double(i) < side || double(n - end[i]) < side) continue;
    const double depth = double(window[i]) / double(std::max<size_t>(1, std::min(left[i], right[end[i]])));
    if (depth < deepest) {
      deepest = depth;
      cut = r.first + i + window[i] / 2;
    }
  }
  if (cut == 0) {
    out.push_back(r);
    return;
  }
  split_at_valleys(s, {r.first, cut}, rel_gap, side, out);
  split_at_valleys(s, {cut, r.second}, rel_gap, side, out);
}

Groups split_at_gaps(const std::vector<double>& x, const SpectrumOptions& o) {
  Groups g;
  g.level_of.assign(x.size(), -1);
  if (x.empty()) {
    g.reason = "no samples";
    return g;
  }
  if (!std::all_of(x.begin(), x.end(), [](double v) { return std::isfinite(v); })) {
    g.reason = "a sample is not a number";
    return g;
  }
  std::vector<size_t> order(x.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> sorted(x.size());
  for (size_t k = 0; k < x.size(); ++k) sorted[k] = x[order[k]];
  const double min_loads = std::max(3.0, o.min_level_share * double(x.size()));
  std::vector<Range> ranges;
  for (size_t b = 0; b < order.size();) {
    size_t e = b + 1;
    while (e < order.size() && sorted[e] - sorted[e - 1] <= std::max(o.abs_gap_cycles, o.rel_gap * sorted[e - 1])) ++e;
    split_at_valleys(sorted, {b, e}, o.rel_gap, o.min_segment_share * double(x.size()), ranges);
    b = e;
  }
  size_t outliers = 0;
  for (const Range& r : ranges) {
    if (double(r.second - r.first) < min_loads) {
      outliers += r.second - r.first;
      continue;
    }
    const std::vector<double> v(sorted.begin() + long(r.first), sorted.begin() + long(r.second));
    for (size_t k = r.first; k < r.second; ++k) g.level_of[order[k]] = int32_t(g.levels.size());
    SpectrumLevel l;
    l.sample_cycles = level_centre(v);
    l.low_cycles = v.front();
    l.high_cycles = v.back();
    g.levels.push_back(l);
  }
  g.reason = std::to_string(g.levels.size()) + " level(s), " + std::to_string(outliers) + " outlier(s)";
  if (g.levels.empty()) g.reason = "no group of at least " + std::to_string(size_t(min_loads)) + " loads: " + g.reason;
  return g;
}

// Levels from each sample's level number (any numbering, -1 none): ascending, with their
// loads per segment, shares and kinds.
void rebuild_levels(Spectrum& s, const std::vector<double>& cycles, const std::vector<Segment>& segment,
                    const std::array<size_t, kSegments>& totals, const SpectrumOptions& o) {
  std::map<int32_t, std::vector<size_t>> members;
  for (size_t i = 0; i < cycles.size(); ++i)
    if (s.level_of[i] >= 0) members[s.level_of[i]].push_back(i);
  std::vector<std::pair<double, std::vector<size_t>>> by_centre;
  for (auto& [id, idx] : members) {
    std::vector<double> v;
    for (size_t i : idx) v.push_back(cycles[i]);
    by_centre.emplace_back(level_centre(v), std::move(idx));
  }
  std::sort(by_centre.begin(), by_centre.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  s.levels.clear();
  for (const auto& [centre, idx] : by_centre) {
    SpectrumLevel l;
    l.sample_cycles = centre;
    l.low_cycles = l.high_cycles = cycles[idx.front()];
    for (size_t i : idx) {
      s.level_of[i] = int32_t(s.levels.size());
      l.low_cycles = std::min(l.low_cycles, cycles[i]);
      l.high_cycles = std::max(l.high_cycles, cycles[i]);
      ++l.loads;
      ++l.loads_of[index_of(segment[i])];
    }
    l.share = double(l.loads) / double(cycles.size());
    l.attributed = kind_of(l, totals, o, l.kind);
    l.name = "other";
    s.levels.push_back(l);
  }
}

// One level per physical distance: neighbouring levels of one kind closer than kOneLevel are one
// level whose loads spread (L2 hits over the slices, which formed one mode or two by the run's
// pages on an H100: docs/results/log/h100.md, "Latency spectrum"); a level of one kind wider than that whose loads form two modes
// at least kOneLevel apart, each a fifth of its loads and a level's share of all, is two (DRAM lines homed near and far,
// 565 and 750 cycles, where loads between them filled the valley). So the levels, and their
// names, are the same from run to run.
constexpr double kOneLevel = 1.25;

void one_level_per_distance(Spectrum& s, const std::vector<double>& cycles, const std::vector<Segment>& segment,
                            const std::array<size_t, kSegments>& totals, const SpectrumOptions& o) {
  for (size_t j = 1; j < s.levels.size(); ++j) {
    const SpectrumLevel &a = s.levels[j - 1], &b = s.levels[j];
    if (!a.attributed || !b.attributed || a.kind != b.kind || b.sample_cycles >= kOneLevel * a.sample_cycles) continue;
    for (int32_t& l : s.level_of)
      if (l == int32_t(j)) l = int32_t(j - 1);
    rebuild_levels(s, cycles, segment, totals, o);
    j = 0;
  }
  const size_t n = s.levels.size();
  for (size_t j = 0; j < n; ++j) {
    const SpectrumLevel& l = s.levels[j];
    if (!l.attributed || l.high_cycles < kOneLevel * l.low_cycles) continue;
    std::vector<double> v;
    for (size_t i = 0; i < cycles.size(); ++i)
      if (s.level_of[i] == int32_t(j)) v.push_back(cycles[i]);
    const an::TwoModes m = an::two_modes(v, kOneLevel, 0.2);
    // Each mode a level of its own share (min_level_share of all loads): an H200's DRAM tail
    // past 900 cycles, 2.9 % of the loads in one run of three, made a fifth level.
    const double least = o.min_level_share * double(cycles.size());
    if (!m.found() || double(m.low_count) < least || double(m.high_count) < least) continue;
    for (size_t i = 0; i < cycles.size(); ++i)
      if (s.level_of[i] == int32_t(j) && cycles[i] >= m.split()) s.level_of[i] = int32_t(n + j);
  }
  if (n != 0) rebuild_levels(s, cycles, segment, totals, o);
}

}  // namespace

const char* kind_name(Segment s) {
  switch (s) {
    case Segment::L1: return "l1";
    case Segment::L2: return "l2";
    case Segment::Tlb: return "tlb_miss";
    case Segment::Dram: return "dram";
  }
  return "other";
}

const SpectrumLevel* Spectrum::first(Segment kind) const {
  for (const SpectrumLevel& l : levels)
    if (l.attributed && l.kind == kind) return &l;
  return nullptr;
}

const SpectrumLevel* Spectrum::named(const std::string& name) const {
  for (const SpectrumLevel& l : levels)
    if (l.name == name) return &l;
  return nullptr;
}

Spectrum analyse_spectrum(const std::vector<double>& cycles, const std::vector<Segment>& segment,
                          double hot_chase_cycles, const SpectrumOptions& o) {
  Spectrum s;
  s.loads = cycles.size();
  if (cycles.size() != segment.size()) {
    s.reason = std::to_string(cycles.size()) + " samples but " + std::to_string(segment.size()) + " segments";
    return s;
  }
  const Groups g = split_at_gaps(cycles, o);
  s.level_of = g.level_of;  // every sample's, -1 where no level holds it
  if (g.levels.empty()) {
    s.reason = g.reason;
    return s;
  }
  s.levels = g.levels;
  std::array<size_t, kSegments> totals{};
  for (size_t i = 0; i < cycles.size(); ++i) {
    ++totals[index_of(segment[i])];
    if (g.level_of[i] < 0) {
      ++s.outliers;
      continue;
    }
    SpectrumLevel& l = s.levels[size_t(g.level_of[i])];
    ++l.loads;
    ++l.loads_of[index_of(segment[i])];
  }
  for (SpectrumLevel& l : s.levels) {
    l.share = double(l.loads) / double(cycles.size());
    l.attributed = kind_of(l, totals, o, l.kind);
    l.name = "other";
  }
  one_level_per_distance(s, cycles, segment, totals, o);
  name_levels(s);
  s.timing_cost_cycles = timing_cost(s, hot_chase_cycles);
  for (SpectrumLevel& l : s.levels) l.latency_cycles = std::max(0.0, l.sample_cycles - s.timing_cost_cycles);
  s.found = true;
  s.reason = g.reason;
  return s;
}

std::vector<HistogramBin> histogram(const std::vector<double>& cycles, double bin_cycles) {
  const double w = bin_cycles > 0 ? bin_cycles : 1;
  std::map<int64_t, size_t> bins;
  for (double c : cycles)
    if (std::isfinite(c)) ++bins[int64_t(std::floor(c / w))];
  std::vector<HistogramBin> out;
  for (const auto& [bin, loads] : bins) out.push_back({double(bin) * w, loads});
  return out;
}

}  // namespace global_throughput
