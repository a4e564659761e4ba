// One set-associative cache (or TLB level) of the simulated GPU: tags, sectors and
// replacement state, sized once; a reset is O(1) (an epoch counter marks lines valid), so
// that starting each run_jobs call with empty caches costs nothing even for a 50 MiB L2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "sim/sim_model.hpp"

namespace memtopo::sim {

// xoshiro256** (public-domain algorithm): fast and identical on every platform, so a
// description and a seed give the same samples everywhere.
class Rng {
 public:
  explicit Rng(uint64_t seed = 1) { reseed(seed); }
  void reseed(uint64_t seed) {
    for (auto& v : s_) {  // splitmix64 expands the seed
      seed += 0x9e3779b97f4a7c15ull;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      v = z ^ (z >> 31);
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

class Cache {
 public:
  Cache(const CacheGeometry& g, Rng* replacement_rng);
  // The memory one instance of `g` takes (what the constructor allocates), so that a
  // description can be refused before a huge cache is built.
  static uint64_t state_bytes(const CacheGeometry& g);

  // Empties the cache (every line invalid).
  void reset();
  // As the constructor left it: empty, every way usable, no eviction pending.
  void restart() {
    reset();
    limit_lines(0);
    lose_way_of(UINT32_MAX);
    evicted_ = UINT64_MAX;
  }
  // Holds at most `lines` lines (the carveout shrinks the L1), spread over the sets: the
  // first lines % sets sets keep one way more than the others; with fewer lines than sets, the
  // sets fold onto that many sets of one way (an H100's L1 keeps 168 lines of 128 B beside the
  // most shared memory, against 482 sets, and holds 168 of any footprint); 0: all.
  void limit_lines(uint64_t lines) {
    way_limit_ = lines ? uint32_t(std::max<uint64_t>(1, lines) / sets_) : UINT32_MAX;
    extra_way_sets_ = lines ? uint32_t(std::max<uint64_t>(1, lines) % sets_) : 0;
    mru_line_ = UINT64_MAX;
  }
  // One way of `set` (of sets()) holds another user's line for now: the set has one way
  // less. UINT32_MAX: none.
  void lose_way_of(uint32_t set) {
    lost_way_set_ = set;
    mru_line_ = UINT64_MAX;
  }
  uint32_t sets() const { return sets_; }

  // Addresses must stay below 2^48 (checked by the backend's buffer placement).
  static constexpr uint64_t kMaxAddress = uint64_t(1) << 48;

  // Looks `addr` up; true on a hit. On a miss the missing sector is fetched (the line is
  // allocated first when absent, evicting a victim of the set). `index_addr` chooses the
  // set, by modulo or by the XOR hash when one is configured (the L2 passes the address
  // within its partition, so that a hash spreads each partition's lines over its own sets).
  bool access(uint64_t addr, uint64_t index_addr) {
    return access_line(addr >> line_shift_, index_addr, uint64_t(1) << ((addr >> sector_shift_) & sector_index_mask_));
  }
  bool access(uint64_t addr) { return access(addr, addr); }
  // Allocates the line of `addr` without fetching a sector (a path whose allocation unit
  // spans several of this cache's lines takes them together); a resident line is only used.
  void reserve(uint64_t addr) { access_line(addr >> line_shift_, addr, 0); }
  uint32_t line_bytes() const { return uint32_t(1) << line_shift_; }

  // The line (address >> line bits) the last access evicted, or UINT64_MAX; cleared by reading.
  uint64_t take_evicted() {
    const uint64_t e = evicted_;
    evicted_ = UINT64_MAX;
    return e;
  }

 private:
  // A lookup of `line` that fetches `sector_bit` (0: none); true when it was already valid.
  bool access_line(uint64_t line, uint64_t index_addr, uint64_t sector_bit) {
    if (line == mru_line_) {  // the line used last is resident and already the most recent
      if (policy_ == Policy::Srrip) state_[mru_stamp_] = 0;
      if (state_[mru_sectors_] & sector_bit) return true;
      state_[mru_sectors_] |= sector_bit;
      return false;
    }
    uint32_t set = set_of(index_addr);
    if (way_limit_ == 0) set %= extra_way_sets_;  // fewer lines than sets: folded
    const uint32_t base = equal_sets_ ? set * ways_ : set_base_[set];
    const uint32_t all_ways = equal_sets_ ? ways_ : set_ways_[set];
    uint32_t ways = all_ways;
    if (ways > way_limit_) ways = way_limit_ + (set < extra_way_sets_ ? 1 : 0);
    if (set == lost_way_set_ && ways > 1) --ways;
    // A set's tags, stamps and sectors side by side (one page of the host's, not three); the
    // tags alone first: the hit, else the first invalid way; the stamps only when every way is
    // valid and one must go.
    const size_t at = size_t(3) * base;
    uint64_t* const tags = &state_[at];
    uint64_t* const stamps = tags + all_ways;
    uint64_t* const sectors = stamps + all_ways;
    const uint64_t key = line | (uint64_t(epoch_now_) << kEpochShift);
    uint32_t invalid = UINT32_MAX;
    for (uint32_t i = 0; i < ways; ++i) {
      const uint64_t t = tags[i];
      if (t == key) {
        if (policy_ == Policy::Lru) stamps[i] = ++clock_;
        if (policy_ == Policy::Srrip) stamps[i] = 0;  // predicted near re-use
        remember(line, at, all_ways, i);
        if (sectors[i] & sector_bit) return true;
        sectors[i] |= sector_bit;  // sector miss: the line stays, its missing sector is fetched
        return false;
      }
      if (invalid == UINT32_MAX && (t >> kEpochShift) != epoch_now_) invalid = i;
    }
    uint32_t oldest = 0;
    if (invalid == UINT32_MAX && (policy_ == Policy::Lru || policy_ == Policy::Fifo)) {
      uint64_t oldest_stamp = stamps[0];
      for (uint32_t i = 1; i < ways; ++i)
        if (stamps[i] < oldest_stamp) {
          oldest_stamp = stamps[i];
          oldest = i;
        }
    }
    uint32_t victim = invalid;
    if (victim == UINT32_MAX) {
      if (policy_ == Policy::Lru || policy_ == Policy::Fifo) victim = oldest;
      else victim = policy_ == Policy::Srrip ? srrip_victim(stamps, ways) : choose_victim(ways);
    }
    if ((tags[victim] >> kEpochShift) == epoch_now_) evicted_ = tags[victim] & ((uint64_t(1) << kEpochShift) - 1);
    tags[victim] = key;
    sectors[victim] = sector_bit;
    stamps[victim] = policy_ == Policy::Srrip ? kSrripFill : ++clock_;
    remember(line, at, all_ways, victim);
    return false;
  }
  // The line just used, and where its stamp and sectors are (the set's block from `at`).
  void remember(uint64_t line, size_t at, uint32_t all_ways, uint32_t way) {
    mru_line_ = line;
    mru_stamp_ = at + all_ways + way;
    mru_sectors_ = at + 2 * size_t(all_ways) + way;
  }

  uint32_t set_of(uint64_t index_addr) const {
    if (!hash_.empty()) {
      uint32_t s = 0;
      for (size_t b = 0; b < hash_.size(); ++b) s |= uint32_t(__builtin_parityll(index_addr & hash_[b])) << b;
      return s;
    }
    const uint64_t index_line = index_addr >> line_shift_;
    // Each run of `sets` consecutive lines of a 2 MiB page fills every set once, rotated by a
    // Fibonacci hash of the run's number: carries keep any XOR of address bits and any stride
    // from naming the sets (a hash like the H100 L1's, sets no power of two), and a footprint
    // from the start of a buffer (2 MiB-aligned) begins at a run's start, so sizes stay exact.
    if (mixed_) {
      const uint64_t in_page = index_line & page_lines_mask_, run = in_page / sets_;
      const uint64_t key = ((index_line >> page_lines_shift_) << 32) + run + 1;
      return uint32_t((in_page % sets_ + ((key * 0x9E3779B97F4A7C15ull) >> 32)) % sets_);
    }
    if (!equal_sets_) return residue_set_[index_line % residue_set_.size()];
    if (sets_pow2_) return uint32_t(index_line & (sets_ - 1));
    return uint32_t(index_line % sets_);
  }
  uint32_t choose_victim(uint32_t ways);  // random and non_uniform
  uint32_t srrip_victim(uint64_t* stamps, uint32_t ways);
  // Srrip's stamps are re-reference predictions: 0 near, kSrripFill a fill's, kSrripDistant the victim's.
  static constexpr uint64_t kSrripFill = 2, kSrripDistant = 3;

  Policy policy_;
  uint32_t line_shift_, sector_shift_;
  uint64_t sector_index_mask_;
  uint32_t sets_;
  bool sets_pow2_;
  bool mixed_;
  static constexpr uint32_t kPageShift = 21;  // 2 MiB: the alignment of every buffer
  uint32_t page_lines_shift_ = 0;
  uint64_t page_lines_mask_ = 0;
  bool equal_sets_;
  uint32_t ways_;  // equal sets only
  uint32_t way_limit_ = UINT32_MAX;
  uint32_t extra_way_sets_ = 0;
  uint32_t lost_way_set_ = UINT32_MAX;
  std::vector<uint32_t> set_ways_, set_base_;
  // Unequal sets: set of each residue (line mod total lines), dealt round-robin to the
  // sets that still have a free way, so that exactly `total lines` consecutive lines fit.
  std::vector<uint32_t> residue_set_;
  std::vector<uint64_t> hash_;
  std::vector<double> cumulative_;  // NonUniform
  Rng* rng_;

  // A tag holds the line address and, in its top bits, the epoch (reset count) it was
  // filled in: a line of an older epoch is invalid, so a reset is one increment.
  static constexpr int kEpochShift = 48;
  static constexpr uint32_t kEpochMax = 0xffff;
  // Set by set (the set of ways from base at 3 x base): its ways' tags, then their stamps, then
  // their sectors.
  std::vector<uint64_t> state_;
  uint32_t epoch_now_ = 1;
  uint64_t mru_line_ = UINT64_MAX;        // line of the last access (UINT64_MAX: none since reset)
  size_t mru_stamp_ = 0, mru_sectors_ = 0;  // where its stamp and sectors are in state_
  uint64_t evicted_ = UINT64_MAX;   // line the last miss evicted
  uint64_t clock_ = 0;
};

}  // namespace memtopo::sim
