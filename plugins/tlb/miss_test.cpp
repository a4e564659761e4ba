#include "miss_test.hpp"

#include <algorithm>

#include <memtopo/analysis.hpp>

namespace tlb {

bool MissTest::misses(uint64_t loads, uint64_t stride) const {
  const double half_way = hit_cycles + 0.5 * (miss_cycles - hit_cycles);
  if (loads * stride > kIndexedFootprint) return chase->cycles(loads, stride) - average_offset > half_way;
  // Without windows the low percentile, as in the sweep: an average mixes in far L2 hits (two
  // loads 4 KiB apart, one near and one far, read as a miss: random device 33).
  if (!counted) return chase->low_cycles(loads, stride) > half_way;
  const uint64_t passes = 4;
  double expected = 0;
  auto slow = [&] {
    const WindowCounts c = chase->window_counts(loads, stride, windows, passes);
    double total = 0;
    expected = 0;
    for (size_t w = 0; w < windows.size(); ++w) {
      total += c.slow[w];
      expected += level_rates[w] * c.level[w];
    }
    expected *= double(passes);
    return total * double(passes);
  };
  // A count barely past chance must come back when counted again: under noise with a tail a
  // chase of 32 held pages counted 12 slow loads where 3 were expected once in a few runs, and
  // its level read 31 entries for 32. A count of twice that or more stands alone.
  const double first = slow(), first_expected = expected;
  if (memtopo::analysis::beyond_chance(first, first_expected) &&
      (memtopo::analysis::beyond_chance(first / 2, first_expected) ||
       memtopo::analysis::beyond_chance(slow(), expected)))
    return true;
  // Where noise blends a near L2 hit that misses with one that hits, the windows hold the
  // misses of other kinds of hit only (far lines), and a chase of near lines shows none. When
  // every load misses, its low percentile has moved half way to the level past the step.
  return miss_cycles > hit_cycles && chase->low_cycles(loads, stride) > half_way;
}

double MissTest::misses_per_pass(uint64_t loads, uint64_t stride, uint64_t passes) const {
  // slow = misses + rate x (level loads - misses) per window: hits are slow at their level's
  // rate, misses are slow whatever else happens to them.
  // From the first line alone: the misses of one chase, whole (an average over chases whose
  // windows see other shares of the misses is no whole count: random device 33's sets).
  const WindowCounts c = chase->window_counts(loads, stride, windows, passes, false);
  double misses = 0;
  for (size_t w = 0; w < windows.size(); ++w)
    misses += (c.slow[w] - level_rates[w] * c.level[w]) / (1.0 - std::min(level_rates[w], 0.5));
  return std::max(0.0, misses);
}

uint64_t MissTest::first_miss(uint64_t lo, uint64_t hi, uint64_t stride) const {
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (misses(mid, stride) ? hi : lo) = mid;
  }
  return hi;
}

MissTest miss_test(const Chaser& chase, uint64_t stride, uint64_t held, uint64_t missed, double hit, double miss,
                   uint64_t limit, uint64_t below_next) {
  MissTest t;
  t.chase = &chase;
  t.hit_cycles = hit;
  t.miss_cycles = miss;
  uint64_t beyond = std::min(2 * missed, limit / stride);
  if (below_next > 0) beyond = std::max(missed, std::min(beyond, below_next));
  if (beyond * stride > kIndexedFootprint) return t;
  const uint64_t quiet = std::max<uint64_t>(held / 2, 1);
  t.windows = miss_windows(chase, stride, quiet, beyond);
  t.counted = !t.windows.empty();
  // Slow loads of a chase the level holds (interruptions, noise's tail), per load; one more
  // than counted over two more loads, so that a reference with none seen does not make a
  // single interrupted load beyond chance. Over 32 passes: a rate from 8 once came out a third
  // of the true one (5 interruptions counted for 16 expected), and every chase near the
  // level's entries then missed (random device 28: 894 entries for 1024).
  if (t.counted) {
    const double passes = 32;
    const WindowCounts c = chase.window_counts(quiet, stride, t.windows, 32);
    double slow = 0;
    for (size_t w = 0; w < t.windows.size(); ++w) {
      t.level_rates.push_back((c.slow[w] * passes + 1) / (c.level[w] * passes + 2));
      slow += c.slow[w];
    }
    t.base_rate = (slow * passes + 1) / (double(quiet) * passes + 2);
  }
  return t;
}

}  // namespace tlb
