// The pump of a counted random-load job: untimed lanes that load between windows of the timed stream.
// Included by kernels.cu only (docs/measurement.md explains the kernels).
#pragma once

#include "count_common.cuh"

namespace memtopo::cuda::detail {

// The pumped count's shared state: thread 0 (the timed stream) steers, the pump lanes follow.
struct PumpControl {
  volatile uint32_t phase;   // kPumpHold, kPumpRun or kPumpDone
  volatile uint32_t window;  // windows begun; a lane acknowledges each hold once
  uint32_t parked;           // lanes whose last load has come back since the hold began
  uint32_t lanes;
  unsigned long long loads;  // pump loads within the span (each lane adds its count at the end)
};
constexpr uint32_t kPumpHold = 0, kPumpRun = 1, kPumpDone = 2;

// Before every probe_loads timed steps: let the pump load for pump_cycles, then hold it and
// wait until every lane has acknowledged the hold, which a lane does only once its last
// load is back. The timed loads then have the SM's memory path to themselves.
struct PumpWindow {
  PumpControl* c;
  uint32_t probe_loads, pump_cycles;
  __device__ void operator()(uint64_t k) const {
    if (k % probe_loads != 0) return;
    c->phase = kPumpRun;
    const unsigned long long t0 = device::clock_now();
    while (device::clock_now() - t0 < pump_cycles) {
    }
    c->window = c->window + 1;
    __threadfence_block();
    c->phase = kPumpHold;
    while (*reinterpret_cast<volatile uint32_t*>(&c->parked) < c->lanes) {
    }
    atomicExch(&c->parked, 0u);
  }
};

// One pump lane: untimed random loads (its own generator) while the phase says run. Loads of
// windows that begin after the first timed load (window number `counted_from` on) count.
template <uint32_t S>
__device__ void pump_lane(const DeviceChaseJob& job, const Resolved& r, PumpControl* c, uint32_t index,
                          uint32_t counted_from) {
  RandomDraws places(job, kPumpStreamBase + index);
  uint32_t j = places.first(), acked = 0;
  unsigned long long n = 0;
  for (;;) {
    const uint32_t phase = c->phase;
    if (phase == kPumpDone) break;
    const uint32_t w = c->window;
    if (phase == kPumpRun) {
      j = places.after(load<S>(r, j));
      n += w >= counted_from ? 1 : 0;
    } else if (w != acked) {
      acked = w;
      atomicAdd(&c->parked, 1u + (j & job.dep_mask));  // j waits for the last load's value
    }
  }
  atomicAdd(&c->loads, n);
}

// A pumped count (mt_rate pump): thread 0 times, warps 1 .. pump_warps pump.
__device__ void run_pumped(const DeviceChaseJob& job, const Resolved& r, const ClaimTables& t, uint32_t* s_steps,
                           unsigned long long scratch) {
  __shared__ PumpControl s_pump;
  __shared__ Tally s_timed;
  if (threadIdx.x == 0) {
    wait_for_claims(t);
    s_pump.phase = kPumpHold;
    s_pump.window = 0;
    s_pump.parked = 0;
    s_pump.lanes = job.pump_warps * job.pump_lanes;
    s_pump.loads = 0;
  }
  __syncthreads();
  const uint32_t w = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    Tally y;
    const PumpWindow win{&s_pump, job.probe_loads, job.pump_cycles};
    using Run = CountRun<RandomDraws>;
    const RandomDraws places(job, 0);
    switch (job.space) {  // global paths only (checked on the host)
      case kSpaceGlobalCa: Run::run<kSpaceGlobalCa>(job, r, s_steps, scratch, places, job.warmup, job.record, job.count_capacity, &y, win); break;
      case kSpaceGlobalCg: Run::run<kSpaceGlobalCg>(job, r, s_steps, scratch, places, job.warmup, job.record, job.count_capacity, &y, win); break;
      default: Run::run<kSpaceReadonly>(job, r, s_steps, scratch, places, job.warmup, job.record, job.count_capacity, &y, win); break;
    }
    s_pump.phase = kPumpDone;
    s_timed = y;
  } else if (w >= 1 && w <= job.pump_warps && lane < job.pump_lanes) {
    // Windows begun at steps 0 .. warmup come before the first timed load.
    const uint32_t from = uint32_t(job.warmup / job.probe_loads + 1);
    const uint32_t index = (w - 1) * job.pump_lanes + lane;
    switch (job.space) {
      case kSpaceGlobalCa: pump_lane<kSpaceGlobalCa>(job, r, &s_pump, index, from); break;
      case kSpaceGlobalCg: pump_lane<kSpaceGlobalCg>(job, r, &s_pump, index, from); break;
      default: pump_lane<kSpaceReadonly>(job, r, &s_pump, index, from); break;
    }
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  Tally y = s_timed;
  y.pumped = s_pump.loads;
  write_tally(job, y, s_steps);
}

}  // namespace memtopo::cuda::detail
