// Where the loads of a job go, computed the same way by every backend: the element after an
// index in a chase array, and the random-load generator (so a job draws the same places on
// the GPU and on the simulator).
#pragma once

#include <cstdint>

#include "memtopo/measure.h"

namespace memtopo::engine {

// The element after `i` in an array (EXPLICIT or STRIDE).
inline uint64_t next_index(const mt_chase_array& a, uint64_t i) {
  if (a.kind == MT_ARRAY_STRIDE) {
    const uint64_t s = a.stride_elems % a.elems;
    return i >= a.elems - s ? i - (a.elems - s) : i + s;  // (i + s) % elems without overflow
  }
  return a.next[i];
}

// Pump generator k (0 .. warps x lanes - 1) draws from stream_state(x, kPumpStreamBase + k):
// never a timed stream's.
constexpr uint32_t kPumpStreamBase = 64;

// Stream k's generator state from stream 0's (RandomPlaces::x); the GPU kernel derives it
// the same way. Stream 0 keeps it, so a one-stream job draws what it drew before.
inline uint64_t stream_state(uint64_t x, uint32_t k) {
  const uint64_t y = x ^ (0xD1B54A32D192ED03ull * uint64_t(k));
  return y ? y : 1;
}

// xorshift64, seeded through splitmix64; a draw is a multiple of `stride` below elems.
struct RandomPlaces {
  uint64_t x;
  uint32_t candidates;
  uint32_t stride;
  RandomPlaces(uint64_t seed, uint64_t elems, uint64_t stride_elems)
      : x(mix(seed)), candidates(uint32_t(elems / stride_elems)), stride(uint32_t(stride_elems)) {}
  static uint64_t mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return z ? z : 1;
  }
  uint32_t next() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return uint32_t(((x >> 32) * uint64_t(candidates)) >> 32) * stride;
  }
};

}  // namespace memtopo::engine
