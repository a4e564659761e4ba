// What data-cache/l1d-eviction-sets concludes from its minimal eviction sets (pure functions,
// no kernel): the ways, the XOR parities of the set index and the lines to test them with.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace data_cache {

// One target's reduction, as the kernel left it.
struct EvictionSet {
  uint64_t target = 0;              // line number of x
  bool pool_evicts = false;
  bool complete = false;            // reduced to a set from which no line can go
  std::vector<uint64_t> lines;      // the minimal set's line numbers
  uint64_t tests = 0;
  uint64_t lines_loaded = 0;          // lines of S the reduction loaded
  uint32_t sm = 0;
  bool separated = true;              // the calibration told a hit from a miss
  std::vector<uint32_t> calibration;  // raw cycles: four misses, then four hits
  uint32_t threshold = 0;             // the kernel's: slower than this is a miss
};

struct WaysFinding {
  bool found = false;
  uint32_t ways = 0;
  size_t agreeing = 0;  // complete sets of that size
  // Three or more agree: the ways stand alone. Two may agree by chance under random replacement
  // (the Pascal-like device: 2 x 6 lines for its 4 ways), so two stand only with a set-index
  // function built on them whose every prediction came true.
  bool counted() const { return found && agreeing >= 3; }
  std::string note;
};
// The ways: the size of most complete minimal sets, when at least half of them agree and
// there are two or more.
WaysFinding ways_of(const std::vector<EvictionSet>& sets);

struct IndexFinding {
  std::vector<uint64_t> parities;  // masks of address bits, constant on every congruent pair
  uint64_t domain = 0;             // address bits the lines varied in
  int rank = 0;                    // of the differences within the domain
  size_t differences = 0;
  bool complete = false;           // 2^parities == sets: a whole linear index
};
// The lines' buffer: line k is at address base + k * line_bytes.
struct LineSpace {
  uint64_t base = 0;
  uint32_t line_bytes = 128;
  uint64_t lines = 0;
  uint64_t address(uint64_t line) const { return base + line * line_bytes; }
};
// From the sets of `ways` lines: the address differences x ^ member and the parities that
// stay constant on all of them, within the address bits the buffer's lines vary in;
// `cache_sets` = the cache's lines / ways.
IndexFinding index_of(const std::vector<EvictionSet>& sets, uint32_t ways, const LineSpace& space, uint64_t cache_sets);

uint32_t set_of(uint64_t address, const std::vector<uint64_t>& parities);

// Verification pools (docs/cache-probes.md): per target, `ways` lines the function puts in
// its set (must evict it), `ways` lines of a set one parity away (must not), and `ways` - 1
// of its set with one of another (must not). Lines are drawn from the whole buffer.
struct Prediction {
  uint64_t target = 0;
  std::vector<uint64_t> pool;
  bool evicts = false;
};
std::vector<Prediction> predictions(const std::vector<uint64_t>& targets, const std::vector<uint64_t>& parities,
                                    uint32_t ways, const LineSpace& space, std::mt19937_64& rng);

// The replacement within one set (eviction_policy.cuh): per set found, per fill position
// E0 .. E(W-1), how many of `trials` probes of it missed after E0 was used again and x came in;
// per set, how many of `trials` scan trials (x re-used, then W new lines) x missed in.
struct PolicyFinding {
  bool found = false;
  std::string policy;                   // "lru", "fifo", "random", "non_uniform" or "keeps_reused"
  std::vector<double> victim_fractions;  // per position, of all trials
  std::string note;
};
PolicyFinding policy_of(const std::vector<std::vector<uint64_t>>& misses, const std::vector<uint64_t>& scan_misses,
                        uint32_t trials);

}  // namespace data_cache
