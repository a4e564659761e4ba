// The levels of the latency spectrum (spectrum_analysis.hpp).
#include "spectrum_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

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
// near and far where the L2 set itself shows two levels (a far partition); otherwise numbered.
void name_levels(Spectrum& s) {
  std::array<std::vector<size_t>, kSegments> of_kind;
  for (size_t i = 0; i < s.levels.size(); ++i)
    if (s.levels[i].attributed) of_kind[index_of(s.levels[i].kind)].push_back(i);
  const bool far_partition = of_kind[index_of(Segment::L2)].size() == 2;
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
// one (and abs_gap). Not an::find_levels: it bridges gaps of up to four spreads of either side,
// and the H100's DRAM loads (530 to 800 cycles and a tail) spread so wide that every level
// joins them (one level of 2560 loads). A gap relative to the latency keeps a wide level wide
// without letting it swallow its neighbours.
struct Groups {
  std::vector<SpectrumLevel> levels;  // ascending; the median, low and high of each
  std::vector<int32_t> level_of;      // per sample, -1 for an outlier
  std::string reason;
};

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
  const double min_loads = std::max(3.0, o.min_level_share * double(x.size()));
  size_t outliers = 0;
  for (size_t b = 0; b < order.size();) {
    size_t e = b + 1;
    while (e < order.size() && x[order[e]] - x[order[e - 1]] <= std::max(o.abs_gap_cycles, o.rel_gap * x[order[e - 1]])) ++e;
    if (double(e - b) < min_loads) {
      outliers += e - b;
    } else {
      std::vector<double> v;
      for (size_t k = b; k < e; ++k) {
        v.push_back(x[order[k]]);
        g.level_of[order[k]] = int32_t(g.levels.size());
      }
      SpectrumLevel l;
      l.sample_cycles = an::median(v);
      l.low_cycles = v.front();
      l.high_cycles = v.back();
      g.levels.push_back(l);
    }
    b = e;
  }
  g.reason = std::to_string(g.levels.size()) + " level(s), " + std::to_string(outliers) + " outlier(s)";
  if (g.levels.empty()) g.reason = "no group of at least " + std::to_string(size_t(min_loads)) + " loads: " + g.reason;
  return g;
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
  if (g.levels.empty()) {
    s.reason = g.reason;
    return s;
  }
  s.levels = g.levels;
  s.level_of = g.level_of;
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
