// global-throughput/latency-spectrum: the levels of one chase's per-load latencies, each with
// its latency, its share of the loads and the name of the level the chase's design says it is.
// Plain C++, free of measurement: tests feed it modelled samples (docs/global-throughput.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace global_throughput {

// The part of the chase a load belongs to, in the order of the level it is built to meet.
enum class Segment : uint8_t { L1 = 0, L2 = 1, Tlb = 2, Dram = 3 };
constexpr size_t kSegments = 4;
// "l1", "l2", "tlb_miss", "dram": the name a level gets from the segment it is attributed to.
const char* kind_name(Segment s);

struct SpectrumLevel {
  double sample_cycles = 0;    // the level's raw samples, their interquartile mean (timing cost included)
  double latency_cycles = 0;   // load-to-use: sample_cycles less the timing cost
  double low_cycles = 0, high_cycles = 0;
  size_t loads = 0;
  double share = 0;            // of all timed loads
  std::array<size_t, kSegments> loads_of{};  // per segment
  bool attributed = false;
  Segment kind = Segment::L1;  // when attributed
  std::string name;            // kind_name, with _near/_far or _1, _2 ... where a kind has several; "other" when not attributed
};

struct Spectrum {
  bool found = false;
  std::string reason;
  std::vector<SpectrumLevel> levels;       // ascending latency
  double timing_cost_cycles = 0;           // what a timed sample adds to a load-to-use latency
  size_t loads = 0, outliers = 0;
  std::vector<int32_t> level_of;           // per sample: its level, -1 for an outlier

  // The fastest level attributed to `kind`, or nullptr.
  const SpectrumLevel* first(Segment kind) const;
  // The level with this name, or nullptr.
  const SpectrumLevel* named(const std::string& name) const;
};

struct SpectrumOptions {
  // A level holds at least this share of the loads; rarer groups (interrupted loads, the DRAM
  // tail past 900 cycles: docs/results/log/h100.md, "Validity") are outliers. The chase's smallest level
  // (a segment's lines homed near or far) holds over 8 %: the bound lies twice from either, so
  // a tail does not become a level in one run of three.
  double min_level_share = 0.04;
  // A segment names a level only where the level holds at least this share of the segment's loads.
  double min_segment_share = 0.05;
  // A level that holds nearly as large a share of the L2 segment's loads as of the segment that
  // holds the largest share (this factor) is an L2 level: a TLB set whose pages cost nothing, an
  // L1 set the L1 does not keep, are L2 hits.
  double l2_tie = 0.8;
  // Sorted neighbours further apart than this share of the lower one, and than abs_gap_cycles,
  // lie in different levels.
  double rel_gap = 0.04;
  double abs_gap_cycles = 4;
};

// `cycles`: raw per-load samples in chase order; `segment`: each one's segment (same length);
// `hot_chase_cycles`: the load-to-use latency of the L1 segment's lines by pointer chase. The
// timing cost is the sample of the level holding most L1-segment loads less that latency (0
// when it is not a number, or no L1-segment load was timed).
Spectrum analyse_spectrum(const std::vector<double>& cycles, const std::vector<Segment>& segment,
                          double hot_chase_cycles, const SpectrumOptions& options = {});

// Loads per bin of `bin_cycles` (bins start at multiples of it); only bins that hold a load.
struct HistogramBin {
  double cycles = 0;
  size_t loads = 0;
};
std::vector<HistogramBin> histogram(const std::vector<double>& cycles, double bin_cycles = 1);

}  // namespace global_throughput
