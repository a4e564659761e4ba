// Deterministic random numbers for the analysis library: std::mt19937_64 is specified bit for
// bit by the standard, the std distributions are not, so bounded draws are done here.
#pragma once

#include <cstdint>
#include <random>

namespace memtopo::analysis::detail {

// Uniform integer in [0, bound) by rejection (no modulo bias). bound > 0.
inline uint64_t uniform_below(std::mt19937_64& gen, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t r;
  do {
    r = gen();
  } while (r >= limit);
  return r % bound;
}

}  // namespace memtopo::analysis::detail
