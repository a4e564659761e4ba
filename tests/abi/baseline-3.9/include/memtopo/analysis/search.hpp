// Search helpers (thesis, paper 003, section 3.2): doubling then bisection to bracket the size
// where a predicate changes (e.g. "this footprint has misses"), then a fine sweep over the
// bracket whose per-step values feed change-point detection. Units are the caller's (bytes);
// every point is a multiple of `granularity`. Batched forms evaluate several points per round,
// so a probe can run one measurement launch per round (one point per SM).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace memtopo::analysis {

using Predicate = std::function<bool(uint64_t size)>;
// Evaluates every size of the list (ascending) and returns one answer per size.
using BatchPredicate = std::function<std::vector<bool>(const std::vector<uint64_t>& sizes)>;
using Measure = std::function<double(uint64_t size)>;
using BatchMeasure = std::function<std::vector<double>(const std::vector<uint64_t>& sizes)>;

struct Bracket {
  bool found = false;     // low has predicate false, high has it true
  uint64_t low = 0;
  uint64_t high = 0;
  size_t evaluations = 0; // predicate calls (points, not rounds)
  size_t rounds = 0;
  std::string reason;     // why not found (e.g. "predicate already true at start 1024")
};

struct SearchOptions {
  uint64_t start = 1024;         // first size tried (rounded up to granularity)
  uint64_t limit = 1ULL << 32;   // largest size tried
  uint64_t granularity = 4;      // every size is a multiple of this (e.g. a line)
  uint64_t target_width = 0;     // bisection stops at high - low <= this (0: granularity)
  size_t max_rounds = 64;        // cap on rounds (doubling and bisection each)
  size_t points_per_round = 1;   // batched: sizes evaluated per round (1 = plain bisection)
};

// Doubling from options.start until the predicate is true; then bisection (or k-section with
// points_per_round > 1) of [last false, first true] down to target_width. The predicate is
// assumed monotone (false below a threshold, true above it).
Bracket find_transition(const Predicate& predicate, const SearchOptions& options = {});
Bracket find_transition(const BatchPredicate& predicate, const SearchOptions& options);
// Only the second stage, on a given bracket (low false, high true; not re-checked).
Bracket bisect(const BatchPredicate& predicate, uint64_t low, uint64_t high, const SearchOptions& options);

struct Sweep {
  std::vector<uint64_t> sizes;
  std::vector<double> values;
  bool complete = false;        // every step measured (false: stopped early or capped)
  std::string reason;           // why it stopped
};

// "Is the answer clear yet?" — called after every round with what was measured so far.
using StopHook = std::function<bool(const Sweep& so_far)>;

struct SweepOptions {
  uint64_t step = 4;            // sizes low, low + step, ..., <= high (aligned to step)
  size_t max_points = 4096;
  size_t points_per_round = 1;  // batched: sizes measured per call
  StopHook stop;                // optional
};

Sweep fine_sweep(const Measure& measure, uint64_t low, uint64_t high, const SweepOptions& options = {});
Sweep fine_sweep(const BatchMeasure& measure, uint64_t low, uint64_t high, const SweepOptions& options);

// A ready-made stop hook: stop once a single change point is found and confirmed (permutation
// and KS, alpha) with at least `after` values measured beyond it.
StopHook stop_when_change_confirmed(double alpha = 0.01, size_t after = 4);

// Where misses that come and go begin for good (a shared cache near its capacity, where one
// footprint misses or not from one measurement to the next): the index of the first value
// from which the rolling median of `window` neighbours stays at or above `fraction` of the
// largest value. values.size() when there is no such index or every value is 0.
size_t lasting_onset(const std::vector<double>& values, double fraction = 0.125, size_t window = 5);

}  // namespace memtopo::analysis
