// memtopo device toolkit: a sample recorder that keeps samples in shared memory while
// timing and copies them out afterwards with L2-only stores, so that recording never puts
// lines into the L1 under test.
#pragma once

#include <cstdint>

namespace memtopo::device {

// `buffer` is a shared-memory array of `capacity` words owned by one thread.
struct SampleRecorder {
  uint32_t* buffer;
  uint32_t capacity;
  uint32_t count = 0;

  __device__ SampleRecorder(uint32_t* shared_buffer, uint32_t words) : buffer(shared_buffer), capacity(words) {}
  __device__ bool full() const { return count == capacity; }
  __device__ void add(uint32_t sample) {
    if (count < capacity) buffer[count++] = sample;
  }
  // Copies the samples to `out` (global memory, L2 only) and empties the buffer.
  __device__ void flush(uint32_t* out) {
    for (uint32_t i = 0; i < count; ++i) __stcg(out + i, buffer[i]);
    count = 0;
  }
};

}  // namespace memtopo::device
