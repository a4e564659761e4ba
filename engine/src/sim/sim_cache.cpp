#include "sim/sim_cache.hpp"

#include <algorithm>
#include <bit>

namespace memtopo::sim {

Cache::Cache(const CacheGeometry& g, Rng* replacement_rng)
    : policy_(g.policy),
      line_shift_(uint32_t(std::countr_zero(g.line_bytes))),
      sector_shift_(uint32_t(std::countr_zero(g.sector_bytes))),
      sector_index_mask_(uint64_t(g.line_bytes / g.sector_bytes) - 1),
      sets_(g.sets()),
      sets_pow2_(std::has_single_bit(g.sets())),
      mixed_(g.mixed_index && g.set_hash_masks.empty() && g.sets() > 1),
      set_ways_(g.set_ways),
      hash_(g.set_hash_masks),
      rng_(replacement_rng) {
  equal_sets_ = std::all_of(set_ways_.begin(), set_ways_.end(), [&](uint32_t w) { return w == set_ways_[0]; });
  page_lines_shift_ = kPageShift > line_shift_ ? kPageShift - line_shift_ : 0;
  page_lines_mask_ = (uint64_t(1) << page_lines_shift_) - 1;
  ways_ = set_ways_[0];
  uint32_t total = 0;
  for (uint32_t w : set_ways_) {
    set_base_.push_back(total);
    total += w;
  }
  if (!equal_sets_) {
    for (uint32_t round = 0; residue_set_.size() < total; ++round)
      for (uint32_t set = 0; set < set_ways_.size(); ++set)
        if (set_ways_[set] > round) residue_set_.push_back(set);
  }
  double sum = 0;
  for (double p : g.victim_probabilities) cumulative_.push_back(sum += p);
  state_.assign(size_t(3) * total, 0);
}

uint64_t Cache::state_bytes(const CacheGeometry& g) {
  uint64_t lines = 0;
  bool equal = true;
  for (uint32_t w : g.set_ways) {
    lines += w;
    equal = equal && w == g.set_ways[0];
  }
  const uint64_t per_line = 3 * sizeof(uint64_t) + (equal ? 0 : sizeof(uint32_t));  // tag, stamp, sectors; residue
  const uint64_t per_set = 2 * sizeof(uint32_t);                                     // ways, base
  return lines * per_line + g.set_ways.size() * per_set + g.victim_probabilities.size() * sizeof(double) +
         g.set_hash_masks.size() * sizeof(uint64_t);
}

void Cache::reset() {
  mru_line_ = UINT64_MAX;
  if (++epoch_now_ > kEpochMax) {  // every 65535 resets: clear for real once
    std::fill(state_.begin(), state_.end(), 0);
    epoch_now_ = 1;
  }
}

uint32_t Cache::choose_victim(uint32_t ways) {
  switch (policy_) {
    case Policy::Random:
      return uint32_t(rng_->below(ways));
    case Policy::NonUniform: {
      // Victim drawn with the per-way probabilities (over the usable ways).
      const double u = rng_->uniform() * cumulative_[ways - 1];
      for (uint32_t w = 0; w + 1 < ways; ++w)
        if (u < cumulative_[w]) return w;
      return ways - 1;
    }
    default:
      return 0;  // LRU, FIFO and SRRIP choose in access()
  }
}

uint32_t Cache::srrip_victim(uint64_t* stamps, uint32_t ways) {
  uint64_t most = 0;
  for (uint32_t w = 0; w < ways; ++w) most = std::max(most, stamps[w]);
  // Ageing every way until one predicts a distant re-use, in one step.
  for (uint32_t w = 0; w < ways; ++w) stamps[w] += kSrripDistant - most;
  for (uint32_t w = 0; w < ways; ++w)
    if (stamps[w] == kSrripDistant) return w;
  return 0;
}

}  // namespace memtopo::sim
