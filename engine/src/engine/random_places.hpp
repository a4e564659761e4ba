// Where the loads of a job go, computed the same way by every backend: the element after an
// index in a chase array, and the random-load generator (so a job draws the same places on
// the GPU and on the simulator).
#pragma once

#include <cstdint>

#include "memtopo/device/random.hpp"
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
inline uint64_t stream_state(uint64_t x, uint32_t k) { return device::RandomPlaces::stream_state(x, k); }

// The toolkit's generator (memtopo/device/random.hpp), seeded from a job: a draw is a multiple of
// `stride` elements below elems.
struct RandomPlaces : device::RandomPlaces {
  RandomPlaces(uint64_t seed, uint64_t elems, uint64_t stride_elems)
      : device::RandomPlaces{mix(seed), uint32_t(elems / stride_elems), uint32_t(stride_elems)} {}
};

}  // namespace memtopo::engine
