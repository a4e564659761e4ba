// memtopo device toolkit: the random-place generator every backend draws with (xorshift64
// seeded through splitmix64), so that random loads go to the same places on the GPU, on the
// simulated GPU and in the engine's jobs.
#pragma once

#include <cstdint>

#include "memtopo/device/portable.hpp"

namespace memtopo::device {

struct RandomPlaces {
  uint64_t x;
  uint32_t candidates;  // places to draw from
  uint32_t stride;      // units between two places

  // The state of a seed (splitmix64), never 0.
  static MEMTOPO_HD uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
  }
  // Stream k's state from stream 0's: stream 0 keeps it, so one stream draws what it drew before.
  static MEMTOPO_HD uint64_t stream_state(uint64_t x, uint32_t k) {
    const uint64_t y = x ^ (0xD1B54A32D192ED03ull * uint64_t(k));
    return y ? y : 1;
  }
  // The next place: a multiple of `stride` below candidates x stride.
  MEMTOPO_HD uint32_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return uint32_t(((x >> 32) * uint64_t(candidates)) >> 32) * stride;
  }
};

}  // namespace memtopo::device
