// Hit/miss classification of fine-grained latencies: latency levels found from the data
// (no fixed thresholds), miss counts per window and periodicity of miss patterns (Mei and Chu,
// paper 001: LRU gives periodic misses, line size shows as one miss every line/stride loads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace memtopo::analysis {

struct Level {
  double centre = 0;   // median of the level's samples
  double low = 0;      // smallest and largest sample in the level
  double high = 0;
  double spread = 0;   // robust standard deviation (IQR / 1.349)
  size_t count = 0;
};

struct LevelOptions {
  // A gap between sorted neighbours separates two levels when it exceeds gap_factor times the
  // larger robust spread of the two sides and `resolution`.
  double gap_factor = 4.0;
  // Smallest meaningful difference. 0 = automatic: 1 when every sample is an integer (cycle
  // counts), otherwise 1e-6 of the largest magnitude.
  double resolution = 0;
  // Groups closer than gap_factor * relative_resolution * |centre| are one level: quantised
  // values (33, 34, 35 cycles) with no spread of their own must not become levels each.
  double relative_resolution = 0.01;
  // A group smaller than this is not a level but outliers (rare, scattered samples). Rare but
  // real levels (a few misses per pass) are kept when they reach min_count.
  size_t min_count = 3;
  double min_fraction = 0.0;
  size_t max_levels = 8;   // beyond this the closest neighbouring levels are merged
};

struct Levels {
  bool found = false;                 // at least one level
  std::vector<Level> levels;          // ascending centre
  std::vector<double> boundaries;     // levels.size() - 1 thresholds between neighbours
  std::vector<uint32_t> level_of;     // per sample: index of the nearest level (by boundaries)
  std::vector<uint8_t> outlier;       // per sample: 1 when it belongs to no level
  size_t outlier_count = 0;
  std::string reason;

  // Index of the level a value belongs to (by boundaries); 0 when there are no levels.
  uint32_t classify(double value) const;
  // Per sample: 1 when above the boundary that closes level `hit_level` (a miss of that level).
  std::vector<uint8_t> misses(uint32_t hit_level = 0) const;
};

Levels find_levels(const std::vector<double>& samples, const LevelOptions& options = {});

// Two levels with samples between them, which find_levels joins (it splits at empty gaps):
// thousands of reads of an L2 or DRAM whose lines have near and far homes fill the valley.
// Two-means in one dimension on medians, from the 10th and 90th percentiles. Not found (both
// 0) where the slower is within `min_ratio` of the faster (the spread of one level) or a side
// holds less than `min_fraction` of the samples.
struct TwoModes {
  double low = 0, high = 0;  // the medians of the two sides
  size_t low_count = 0, high_count = 0;
  bool found() const { return high > 0; }
  double split() const { return (low + high) / 2; }
};
TwoModes two_modes(std::vector<double> samples, double min_ratio = 1.15, double min_fraction = 0.0);
// two_modes, or where the slower lies within `min_ratio` of the faster, still two levels where
// each side holds `close_fraction` of the samples and their gap is `spreads` times the larger
// side's own spread (MAD, normal-consistent, at least one cycle): a far partition 47 cycles
// away from first reads from DRAM at 560 (8 %) with a few cycles of noise on each.
TwoModes two_modes_or_separated(const std::vector<double>& samples, double min_ratio = 1.15, double min_fraction = 0.0,
                                double close_fraction = 0.2, double spreads = 10);
Levels find_levels(const std::vector<uint32_t>& latencies, const LevelOptions& options = {});

// Plateaus of a series measured over growing footprints (average latency per footprint): each
// latency level of a memory hierarchy is a run of consecutive values, the ramps between them
// are not. A plateau is a maximal run of at least `min_points` values within `tolerance`
// (relative) of the run's median whose two halves have medians that close (no trend);
// neighbouring plateaus whose medians are that close are one (a spike inside a plateau does
// not split it).
struct Plateau {
  size_t first = 0;   // index of its first and last value
  size_t last = 0;
  double median = 0;
};
std::vector<Plateau> plateaus(const std::vector<double>& values, double tolerance = 0.04, size_t min_points = 3);

// Where each plateau's level begins in the series: 0 for the first; for the next ones the
// first value past the previous plateau that has moved `fraction` of the way from the
// previous level to this one. A plateau's edge lies where its values creep (a few loads of
// the next level already), so a footprint grid can cut it at either point; the steep part of
// the ramp is where neighbouring footprints differ most.
std::vector<size_t> level_starts(const std::vector<double>& values, const std::vector<Plateau>& levels,
                                 double fraction = 0.125);

// The same starts as positions (footprints) where the series crosses the mark, `fraction` of
// the way from the previous level: between the value at level_starts() and the one before it,
// interpolated in log position (a grid of footprints per octave). A grid point can sit on the
// mark itself and fall either side of it from run to run, a whole grid step; the crossing
// moves as little as the times do. `positions`: increasing, one per value. The first level
// starts at the first position.
std::vector<double> level_start_positions(const std::vector<double>& values, const std::vector<double>& positions,
                                          const std::vector<Plateau>& levels, double fraction = 0.125);

// Number of misses in consecutive windows of `window` steps (the last may be shorter).
std::vector<size_t> miss_counts(const std::vector<uint8_t>& miss, size_t window);

// Periodicity of a binary event sequence (e.g. misses per step).
struct PeriodicityOptions {
  size_t min_period = 1;
  size_t max_period = 0;        // 0 = n / 2 (at least two periods must be observed)
  size_t min_events = 3;
  double min_strength = 0.9;    // strength needed to call the pattern periodic
};

struct Periodicity {
  bool found = false;
  size_t period = 0;            // smallest lag at which the pattern repeats best (steps)
  // Of the events that have a position `period` later inside the sequence, the fraction that
  // find an event there (1 = perfectly periodic).
  double match_fraction = 0;
  // match_fraction corrected for chance: (match - rate) / (1 - rate), rate = events / n.
  // A random (non-LRU) miss pattern scores near 0, a periodic one near 1.
  double strength = 0;
  size_t first_event = 0;       // phase: position of the first event
  size_t events = 0;
  double event_rate = 0;        // events / n
  double median_spacing = 0;    // median distance between consecutive events
  std::string reason;
};

Periodicity periodicity(const std::vector<uint8_t>& events, const PeriodicityOptions& options = {});

}  // namespace memtopo::analysis
