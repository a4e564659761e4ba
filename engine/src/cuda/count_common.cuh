// Counting chases: where each load goes (along the array or to random places) and the loop that classifies timed loads as slow on the device.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "chase_common.cuh"

namespace memtopo::cuda::detail {

// Where a counting chase's next load goes. Along the array: the loaded value is the next
// index, exactly the fine chase's step.
struct FollowArray {
  uint32_t start;
  __device__ FollowArray(const DeviceChaseJob& job, uint32_t stream)
      : start(job.stagger_modulus ? uint32_t((job.start + uint64_t(stream) * job.stagger) % job.stagger_modulus)
                                  : job.start) {}
  __device__ uint32_t first() { return start; }
  __device__ uint32_t after(uint32_t loaded) { return loaded; }
};

// To random places (MT_PATTERN_RANDOM): engine::RandomPlaces' draws, each address tied to
// the last loaded value through a mask that is 0 but unknown to the compiler. Stream k starts
// from engine::stream_state(state, k).
struct RandomDraws {
  unsigned long long x;
  uint32_t n, stride, mask;
  RandomDraws() = default;
  __device__ RandomDraws(const DeviceChaseJob& job, uint32_t stream)
      : x(job.random_state ^ (0xD1B54A32D192ED03ull * stream)), n(job.random_candidates), stride(job.random_stride),
        mask(job.dep_mask) {
    if (x == 0) x = 1;
  }
  __device__ uint32_t draw() {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return uint32_t(((x >> 32) * (unsigned long long)n) >> 32) * stride;
  }
  __device__ uint32_t first() { return draw(); }
  __device__ uint32_t after(uint32_t loaded) { return draw() ^ (loaded & mask); }
};

// What one stream of a counting chase saw.
struct Tally {
  unsigned long long slow = 0, kept = 0, cycles = 0, outliers = 0, first = 0, last = 0, pumped = 0;
};

struct NoWindow {
  __device__ void operator()(uint64_t) const {}
};

template <class Places>
struct CountRun {
  // Warm-up and counted loads in one loop of identical timed steps, like the fine chase; a
  // slow counted load only bumps a register and, while there is room, keeps its step number
  // in shared memory. Nothing goes to global memory until the chase is over.
  // `before(k)` runs before step k (a pump window; nothing for a plain count).
  template <uint32_t S, uint32_t W = 4, class Before = NoWindow>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_steps,
                             unsigned long long scratch, Places places, uint64_t warmup, uint64_t record,
                             uint32_t cap, Tally* out, Before before = Before{}) {
    const uint64_t total = warmup + record;
    const uint32_t threshold = job.slow_cycles;
    const uint32_t ceiling = job.slow_max_cycles ? job.slow_max_cycles : 0xffffffffu;
    const uint32_t gap = job.gap_cycles;
    Tally y;
    uint32_t j = places.first();
    for (uint64_t k = 0; k < total; ++k) {
      before(k);
      if (k == warmup) y.first = device::clock_now();
      uint32_t cycles;
      j = places.after(timed_step<S, W>(r, j, scratch, cycles));
      if (k >= warmup) {
        if (cycles > ceiling) {  // an interruption: counted, its cycles left out
          ++y.outliers;
        } else {
          y.cycles += cycles;
          if (cycles > threshold) {
            if (y.slow < cap) s_steps[y.slow] = uint32_t(k - warmup);
            ++y.slow;
          }
        }
      }
      if (gap) {  // a slower stream (mt_rate::gap_cycles); not timed
        const unsigned long long t0 = device::clock_now();
        while (device::clock_now() - t0 < gap) {
        }
      }
    }
    y.last = device::clock_now();
    y.kept = y.slow < cap ? y.slow : cap;
    *out = y;
  }
};

__device__ void write_tally(const DeviceChaseJob& job, const Tally& y, const uint32_t* s_steps) {
  for (uint32_t i = 0; i < uint32_t(y.kept); ++i) __stcg(job.out_last + i, s_steps[i]);
  __stcg(job.out_cycles + 0, y.slow);
  __stcg(job.out_cycles + 1, y.kept);
  __stcg(job.out_cycles + 2, y.cycles);
  __stcg(job.out_cycles + 3, y.outliers);
  __stcg(job.out_cycles + 4, y.last - y.first);
  __stcg(job.out_cycles + 5, y.pumped);
}

}  // namespace memtopo::cuda::detail
