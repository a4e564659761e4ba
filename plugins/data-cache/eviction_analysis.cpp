#include "eviction_analysis.hpp"

#include <algorithm>
#include <bit>
#include <map>
#include <set>

#include <memtopo/analysis/counts.hpp>
#include <memtopo/analysis/gf2.hpp>

namespace data_cache {

WaysFinding ways_of(const std::vector<EvictionSet>& sets) {
  WaysFinding w;
  std::map<uint64_t, size_t> sizes;
  size_t complete = 0, no_pool = 0, blind = 0;
  for (const auto& s : sets) {
    if (!s.separated) {
      ++blind;
      continue;
    }
    if (!s.pool_evicts) ++no_pool;
    if (!s.complete) continue;
    ++complete;
    ++sizes[s.lines.size()];
  }
  std::string census;
  for (const auto& [size, count] : sizes) {
    census += (census.empty() ? "" : ", ") + std::to_string(count) + " x " + std::to_string(size);
    if (count > w.agreeing) w.agreeing = count, w.ways = uint32_t(size);
  }
  w.note = "minimal eviction sets of " + std::to_string(sets.size()) + " targets: " +
           (census.empty() ? "none complete" : census + " lines") +
           (no_pool ? "; " + std::to_string(no_pool) + " pools did not evict their target" : "") +
           (blind ? "; " + std::to_string(blind) + " targets without a hit/miss threshold (an L1 hit as slow as an L2 hit)"
                  : "") +
           (complete + no_pool + blind < sets.size()
                ? "; " + std::to_string(sets.size() - complete - no_pool - blind) + " reductions stopped at the test limit"
                : "");
  w.found = complete >= 2 && 2 * w.agreeing >= complete && w.ways > 0;
  return w;
}

IndexFinding index_of(const std::vector<EvictionSet>& sets, uint32_t ways, const LineSpace& space, uint64_t cache_sets) {
  IndexFinding f;
  std::vector<uint64_t> diffs;
  for (const auto& s : sets) {
    if (!s.complete || s.lines.size() != ways) continue;
    for (uint64_t m : s.lines) diffs.push_back(space.address(s.target) ^ space.address(m));
  }
  // The bits in which the buffer's line addresses differ: below the highest bit that changes
  // from its first line to its last, above the line offset.
  const uint64_t first = space.address(0), last = space.address(space.lines ? space.lines - 1 : 0);
  const int top = std::bit_width(first ^ last);
  const uint64_t below_top = top >= 64 ? ~uint64_t(0) : (uint64_t(1) << top) - 1;
  f.domain = below_top & ~(uint64_t(space.line_bytes) - 1);
  f.differences = diffs.size();
  f.rank = memtopo::analysis::difference_rank(diffs, f.domain);
  f.parities = memtopo::analysis::constant_parities(diffs, f.domain);
  f.complete = !diffs.empty() && cache_sets > 1 && f.parities.size() < 63 &&
               (uint64_t(1) << f.parities.size()) == cache_sets;
  return f;
}

uint32_t set_of(uint64_t address, const std::vector<uint64_t>& parities) {
  uint32_t s = 0;
  for (size_t i = 0; i < parities.size(); ++i) s |= uint32_t(std::popcount(address & parities[i]) & 1) << i;
  return s;
}

namespace {

// `count` distinct lines of [0, lines) other than `avoid` whose set (of line * line_bytes) is `set`.
std::vector<uint64_t> lines_in_set(uint32_t set, size_t count, const std::vector<uint64_t>& parities,
                                   const LineSpace& space, const std::set<uint64_t>& avoid, std::mt19937_64& rng) {
  std::vector<uint64_t> out;
  std::set<uint64_t> taken = avoid;
  for (uint64_t tries = 0; out.size() < count && tries < 1000000 && space.lines; ++tries) {
    const uint64_t l = rng() % space.lines;
    if (set_of(space.address(l), parities) != set || !taken.insert(l).second) continue;
    out.push_back(l);
  }
  return out;
}

}  // namespace

std::vector<Prediction> predictions(const std::vector<uint64_t>& targets, const std::vector<uint64_t>& parities,
                                    uint32_t ways, const LineSpace& space, std::mt19937_64& rng) {
  std::vector<Prediction> out;
  if (parities.empty()) return out;
  for (size_t i = 0; i < targets.size(); ++i) {
    const uint64_t x = targets[i];
    const uint32_t home = set_of(space.address(x), parities);
    const uint32_t other = home ^ (uint32_t(1) << (i % parities.size()));
    const std::set<uint64_t> avoid{x};
    out.push_back({x, lines_in_set(home, ways, parities, space, avoid, rng), true});
    out.push_back({x, lines_in_set(other, ways, parities, space, avoid, rng), false});
    auto short_set = lines_in_set(home, ways - 1, parities, space, avoid, rng);
    for (uint64_t l : lines_in_set(other, 1, parities, space, avoid, rng)) short_set.push_back(l);
    out.push_back({x, short_set, false});
  }
  // Every pool the same size (the kernel's), or none.
  for (const auto& p : out)
    if (p.pool.size() != ways) return {};
  return out;
}

PolicyFinding policy_of(const std::vector<std::vector<uint64_t>>& misses, const std::vector<uint64_t>& scan_misses,
                        uint32_t trials) {
  PolicyFinding f;
  if (misses.empty() || misses[0].size() < 2 || trials == 0) {
    f.note = "no set of two or more ways to test";
    return f;
  }
  const size_t ways = misses[0].size();
  std::vector<double> counts(ways, 0.0);
  for (const auto& m : misses)
    for (size_t p = 0; p < ways && p < m.size(); ++p) counts[p] += double(m[p]);
  const double per_position = double(trials) * double(misses.size());
  for (double c : counts) f.victim_fractions.push_back(c / per_position);
  // One position evicted in at least 90 % of the trials and every other kept in 90 %.
  auto only = [&](size_t victim) {
    for (size_t p = 0; p < ways; ++p)
      if (p == victim ? f.victim_fractions[p] < 0.9 : f.victim_fractions[p] > 0.1) return false;
    return true;
  };
  std::string fractions;
  for (size_t p = 0; p < ways; ++p)
    fractions += (p ? ", " : "") + std::to_string(int(f.victim_fractions[p] * 100 + 0.5)) + " %";
  f.note = "after W + 1 lines of one set three times, E0 again and a new line: E0 .. E" + std::to_string(ways - 1) +
           " missed in " + fractions + " of " + std::to_string(int(per_position)) + " trials each (" +
           std::to_string(misses.size()) + " sets)";
  // The scan trial: LRU, FIFO and random replacement evict a re-used x after W new lines.
  double scan_missed = 0;
  for (uint64_t m : scan_misses) scan_missed += double(m);
  const double scan_trials = double(trials) * double(scan_misses.size());
  const bool keeps_reused = scan_trials > 0 && scan_missed <= 0.1 * scan_trials;
  if (scan_trials > 0)
    f.note += "; x used twice, then E0 .. E" + std::to_string(ways - 1) + " once: x missed in " +
              std::to_string(int(scan_missed)) + " of " + std::to_string(int(scan_trials)) + " trials";
  double evicted = 0;
  for (double v : f.victim_fractions) evicted += v;
  if (keeps_reused) {
    f.found = true;
    f.policy = "keeps_reused";
    f.note += ": the set keeps re-used lines, which LRU, FIFO and random replacement evict";
    return f;
  }
  if (evicted < 0.5) {  // a new line must have evicted one of them in most trials
    f.note += ": fewer misses than one a trial, no victim to name";
    return f;
  }
  f.found = true;
  if (only(1)) f.policy = "lru";
  else if (only(0)) f.policy = "fifo";
  else if (memtopo::analysis::chi_square_uniform(counts, ways).p_value > 0.01) f.policy = "random";
  else f.policy = "non_uniform";
  return f;
}

}  // namespace data_cache
