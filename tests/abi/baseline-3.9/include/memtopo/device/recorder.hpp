// memtopo device toolkit: a sample recorder that keeps samples in shared memory while
// timing and copies them out afterwards with L2-only stores, so that recording never puts
// lines into the L1 under test.
#pragma once

#include "memtopo/device/atomic.hpp"

namespace memtopo::device {

// `buffer` is a shared-memory array of `capacity` words owned by one thread.
struct SampleRecorder {
  uint32_t* buffer;
  uint32_t capacity;
  uint32_t count = 0;

  MEMTOPO_HD SampleRecorder(uint32_t* shared_buffer, uint32_t words) : buffer(shared_buffer), capacity(words) {}
  MEMTOPO_HD bool full() const { return count == capacity; }
  MEMTOPO_HD void add(uint32_t sample) {
    if (count < capacity) buffer[count++] = sample;
  }
  // Copies the samples to `out` (global memory, L2 only) and empties the buffer.
  MEMTOPO_HD void flush(uint32_t* out) {
    for (uint32_t i = 0; i < count; ++i) store_cg(out + i, buffer[i]);
    count = 0;
  }
};

}  // namespace memtopo::device
