// Measurement kernels of the CUDA backend: fine-grained P-chase, plain P-chase, sequence
// chase, timing overhead. docs/measurement.md explains the design; in short:
//  - one thread per job; blocks claim SMs through atomicCAS on a per-SM flag, so each job
//    runs on the SM it asked for (or any free one) and no two jobs share an SM;
//  - each timed load is bracketed by clock64 reads, with a store of the loaded value to
//    shared memory before the second read (thesis, Figure 4.3) so the read waits for the load;
//  - samples go to a small shared-memory buffer, never to global memory while timing;
//  - descriptors are read and results written with .cg accesses (L2 only), so the kernel's
//    own bookkeeping never occupies the L1 under test.
#include "kernels.cuh"

#include <type_traits>

namespace memtopo::cuda {
namespace {

__constant__ uint32_t c_chase[kConstantElems];

__device__ __forceinline__ uint32_t read_smid() {
  uint32_t s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

__device__ __forceinline__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// Stores j to shared memory and then reads the clock: the clock read waits for whatever
// load produced j.
__device__ __forceinline__ unsigned long long now_after(uint32_t j, unsigned long long slot) {
  unsigned long long t;
  asm volatile("st.shared.u32 [%1], %2;\n\tmov.u64 %0, %%clock64;" : "=l"(t) : "l"(slot), "r"(j) : "memory");
  return t;
}

// Copies a descriptor through L2 only (ld.global.cg), keeping it out of L1.
template <class T>
__device__ __forceinline__ T load_cg(const T* p) {
  static_assert(sizeof(T) % 8 == 0, "descriptors are read in 8-byte words");
  T v;
  const unsigned long long* src = reinterpret_cast<const unsigned long long*>(p);
  unsigned long long* dst = reinterpret_cast<unsigned long long*>(&v);
#pragma unroll
  for (unsigned i = 0; i < sizeof(T) / 8; ++i) dst[i] = __ldcg(src + i);
  return v;
}

// Addresses of one chase's array in each memory space, resolved once per block.
struct Resolved {
  const uint32_t* global;
  unsigned long long texture;
  unsigned long long const_base;   // const-space address of element 0
  unsigned long long shared_base;  // shared-space address of element 0
  unsigned long long param_base;   // kSpaceConstantWide: param-space address of element `split`
  uint32_t split;                  // kSpaceConstantWide: elements in the constant buffer
};

// The kernel parameter of the variants without a ParamBank (kept tiny: launches copy it).
struct NoBank {
  uint32_t unused;
};
template <bool Wide>
using BankOf = std::conditional_t<Wide, ParamBank, NoBank>;

template <bool Wide>
__device__ Resolved resolve(const ChaseSource& s, uint32_t* shared_arrays, const BankOf<Wide>& bank) {
  Resolved r;
  r.global = s.global;
  r.texture = s.texture;
  asm("cvta.to.const.u64 %0, %1;" : "=l"(r.const_base) : "l"(c_chase + s.constant_offset));
  r.shared_base = __cvta_generic_to_shared(shared_arrays + s.shared_offset);
  r.param_base = 0;
  r.split = s.constant_split;
  // &bank is generic (a __grid_constant__ parameter); ld.param needs its param-space address.
  if constexpr (Wide) asm("cvta.to.param.u64 %0, %1;" : "=l"(r.param_base) : "l"(&bank.next[0]));
  return r;
}

// One timed load: clock, load, dependent store of the loaded value to `slot` (shared),
// clock. Operands: %0 loaded value, %1 cycles, %2 address or texture, %3 slot, %4 index.
#define MT_TIMED_STEP(LOAD, ADDR)                                       \
  asm volatile(                                                         \
      "{\n\t.reg .u64 t0, t1;\n\t.reg .u32 d1, d2, d3;\n\t"             \
      "mov.u64 t0, %%clock64;\n\t" LOAD                                 \
      "\n\t"                                                            \
      "st.shared.u32 [%3], %0;\n\t"                                     \
      "mov.u64 t1, %%clock64;\n\t"                                      \
      "sub.u64 t1, t1, t0;\n\t"                                         \
      "cvt.u32.u64 %1, t1;\n\t}"                                        \
      : "=r"(next), "=r"(cycles)                                        \
      : "l"(ADDR), "l"(slot), "r"(j)                                    \
      : "memory")

template <uint32_t S>
__device__ __forceinline__ uint32_t timed_step(const Resolved& r, uint32_t j, unsigned long long slot,
                                               uint32_t& cycles) {
  uint32_t next;
  if constexpr (S == kSpaceGlobalCa) {
    MT_TIMED_STEP("ld.global.ca.u32 %0, [%2];", r.global + j);
  } else if constexpr (S == kSpaceGlobalCg) {
    MT_TIMED_STEP("ld.global.cg.u32 %0, [%2];", r.global + j);
  } else if constexpr (S == kSpaceReadonly) {
    MT_TIMED_STEP("ld.global.nc.u32 %0, [%2];", r.global + j);
  } else if constexpr (S == kSpaceTexture) {
    MT_TIMED_STEP("tex.1d.v4.u32.s32 {%0, d1, d2, d3}, [%2, {%4}];", r.texture);
  } else if constexpr (S == kSpaceConstant) {
    MT_TIMED_STEP("ld.const.u32 %0, [%2];", r.const_base + 4ull * j);
  } else if constexpr (S == kSpaceConstantWide) {  // the bank is chosen before the clock starts
    if (j < r.split) {
      MT_TIMED_STEP("ld.const.u32 %0, [%2];", r.const_base + 4ull * j);
    } else {
      MT_TIMED_STEP("ld.param.u32 %0, [%2];", r.param_base + 4ull * (j - r.split));
    }
  } else if constexpr (S == kSpaceShared) {
    MT_TIMED_STEP("ld.shared.u32 %0, [%2];", r.shared_base + 4ull * j);
  } else {
    MT_TIMED_STEP("mov.u32 %0, %4;", 0ull);  // timing overhead: no load at all
  }
  return next;
}
#undef MT_TIMED_STEP

// One untimed load. Operands: %0 loaded value, %1 address or texture, %2 index.
#define MT_LOAD(LOAD, ADDR) \
  asm volatile("{\n\t.reg .u32 d1, d2, d3;\n\t" LOAD "\n\t}" : "=r"(next) : "l"(ADDR), "r"(j) : "memory")

template <uint32_t S>
__device__ __forceinline__ uint32_t load(const Resolved& r, uint32_t j) {
  uint32_t next;
  if constexpr (S == kSpaceGlobalCa) {
    MT_LOAD("ld.global.ca.u32 %0, [%1];", r.global + j);
  } else if constexpr (S == kSpaceGlobalCg) {
    MT_LOAD("ld.global.cg.u32 %0, [%1];", r.global + j);
  } else if constexpr (S == kSpaceReadonly) {
    MT_LOAD("ld.global.nc.u32 %0, [%1];", r.global + j);
  } else if constexpr (S == kSpaceTexture) {
    MT_LOAD("tex.1d.v4.u32.s32 {%0, d1, d2, d3}, [%1, {%2}];", r.texture);
  } else if constexpr (S == kSpaceConstant) {
    MT_LOAD("ld.const.u32 %0, [%1];", r.const_base + 4ull * j);
  } else if constexpr (S == kSpaceConstantWide) {
    if (j < r.split) {
      MT_LOAD("ld.const.u32 %0, [%1];", r.const_base + 4ull * j);
    } else {
      MT_LOAD("ld.param.u32 %0, [%1];", r.param_base + 4ull * (j - r.split));
    }
  } else if constexpr (S == kSpaceShared) {
    MT_LOAD("ld.shared.u32 %0, [%1];", r.shared_base + 4ull * j);
  } else {
    MT_LOAD("mov.u32 %0, %2;", 0ull);
  }
  return next;
}
#undef MT_LOAD

// Calls F::run<S>(args...) for the run-time space s (constant arrays that may continue in the
// kernel-parameter bank in the Wide variants).
template <class F, bool Wide, class... A>
__device__ __forceinline__ void dispatch(uint32_t s, A&&... a) {
  switch (s) {
    case kSpaceGlobalCa: F::template run<kSpaceGlobalCa>(a...); break;
    case kSpaceGlobalCg: F::template run<kSpaceGlobalCg>(a...); break;
    case kSpaceReadonly: F::template run<kSpaceReadonly>(a...); break;
    case kSpaceTexture: F::template run<kSpaceTexture>(a...); break;
    case kSpaceConstant: F::template run<Wide ? kSpaceConstantWide : kSpaceConstant>(a...); break;
    case kSpaceShared: F::template run<kSpaceShared>(a...); break;
    default: F::template run<kSpaceOverhead>(a...); break;
  }
}

// ------------------------------------------------------------------ claiming SMs

// Returns the job (or logical block) this block runs, or -1; *sm gets the block's SM.
__device__ int claim(const ClaimTables& t, uint32_t* sm) {
  const uint32_t s = read_smid();
  *sm = s;
  if (s >= t.sm_slots) return -1;
  const int32_t pinned = __ldcg(t.sm_to_job + s);
  if (pinned >= 0) return atomicCAS(t.sm_owner + s, 0, 1) == 0 ? pinned : -1;
  if (t.unpinned_count == 0) return -1;
  if (atomicCAS(t.sm_owner + s, 0, 1) != 0) return -1;  // another block runs on this SM
  const uint32_t k = atomicAdd(t.counters + 0, 1u);
  return k < t.unpinned_count ? __ldcg(t.unpinned + k) : -1;
}

// Counts this block in and waits (bounded) until every job is claimed, so that jobs start
// together and late blocks have left before timing. False on time-out.
__device__ bool wait_for_claims(const ClaimTables& t) {
  atomicAdd(t.counters + 1, 1u);
  const unsigned long long t0 = now();
  while (*reinterpret_cast<volatile uint32_t*>(t.counters + 1) < t.job_count) {
    if (*reinterpret_cast<volatile uint32_t*>(t.counters + 3) != kAbortNone) return false;
    if (now() - t0 > t.wait_cycles) return false;
    __nanosleep(256);
  }
  return true;
}

// Claims this block's job and copies an array that lives in shared memory into `arrays`
// (every thread helps). The job's index in every thread of the block, or -1.
__device__ int claim_job(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t* arrays, DeviceChaseJob* job) {
  __shared__ int s_job;
  if (threadIdx.x == 0) {
    uint32_t sm;
    const int j = claim(t, &sm);
    if (j >= 0) __stcg(t.job_sm + j, int32_t(sm));
    s_job = j;
  }
  __syncthreads();
  const int ji = s_job;
  if (ji < 0) return -1;
  *job = load_cg(jobs + ji);
  if (job->space == kSpaceShared)
    for (uint64_t i = threadIdx.x; i < job->src.elems; i += blockDim.x)
      arrays[job->src.shared_offset + i] = __ldcg(job->src.global + i);
  __syncthreads();
  return ji;
}

// claim_job, then waits for the other jobs to be claimed. True in thread 0 of a block that
// got a job, which then runs it; every other thread returns.
__device__ bool start_job(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t* arrays, DeviceChaseJob* job) {
  if (claim_job(jobs, t, arrays, job) < 0 || threadIdx.x != 0) return false;
  wait_for_claims(t);  // on time-out the job still runs; the host retries unclaimed jobs
  return true;
}

// ------------------------------------------------------------------ fine-grained chase

struct FineRun {
  // Records job.record loads in passes of at most spp: each pass warms up again, skips the
  // loads earlier passes recorded (untimed), records the next chunk in shared memory and
  // copies it out (.cg stores, L2 only) before the next pass re-establishes the cache state.
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_index,
                             uint32_t* s_latency, uint32_t spp) {
    for (uint64_t done = 0; done < job.record; done += spp) {
      const uint32_t n = uint32_t(job.record - done < spp ? job.record - done : spp);
      pass<S>(job, r, s_index, s_latency, spp, done, n);
    }
  }

  // Warm-up, skip and record in ONE loop of identical timed steps (untimed steps write to a
  // scratch slot), so the recorded steps run exactly the code the warm-up ran.
  template <uint32_t S>
  __device__ static void pass(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_index, uint32_t* s_latency,
                              uint32_t spp, uint64_t skip, uint32_t n) {
    const unsigned long long index_base = __cvta_generic_to_shared(s_index);
    const uint64_t record_from = job.warmup + skip;
    const uint64_t total = record_from + n;
    uint32_t j = job.start;
    uint32_t first = j;
    for (uint64_t k = 0; k < total; ++k) {
      const bool recording = k >= record_from;
      const uint32_t slot = recording ? uint32_t(k - record_from) : spp;
      if (k == record_from) first = j;
      uint32_t cycles;
      j = timed_step<S>(r, j, index_base + 4ull * slot, cycles);
      s_latency[slot] = cycles;
    }
    // The store of step k holds the element loaded at step k+1.
    for (uint32_t i = 0; i < n; ++i) {
      if (job.out_index) __stcg(job.out_index + skip + i, i == 0 ? first : s_index[i - 1]);
      __stcg(job.out_latency + skip + i, s_latency[i]);
    }
  }
};

template <bool Wide>
__global__ void fine_kernel(const DeviceChaseJob* jobs, ClaimTables t, uint32_t spp,
                            const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // index [spp+1], latency [spp+1], then the array
  uint32_t* arrays = dyn + 2 * (spp + 1);
  DeviceChaseJob job;
  if (!start_job(jobs, t, arrays, &job)) return;
  const Resolved r = resolve<Wide>(job.src, arrays, bank);
  dispatch<FineRun, Wide>(job.space, job, r, dyn, dyn + spp + 1, spp);
}

// ------------------------------------------------------------------ counting chase

// Where a counting chase's next load goes. Along the array: the loaded value is the next
// index, exactly the fine chase's step.
struct FollowArray {
  uint32_t start;
  __device__ FollowArray(const DeviceChaseJob& job, uint32_t /*stream*/) : start(job.start) {}
  __device__ uint32_t first() { return start; }
  __device__ uint32_t after(uint32_t loaded) { return loaded; }
};

// To random places (mt_random_count_job): engine::RandomPlaces' draws, each address tied to
// the last loaded value through a mask that is 0 but unknown to the compiler. Stream k starts
// from engine::stream_state(state, k).
struct RandomDraws {
  unsigned long long x;
  uint32_t n, stride, mask;
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
    const unsigned long long t0 = now();
    while (now() - t0 < pump_cycles) {
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

template <class Places>
struct CountRun {
  // Warm-up and counted loads in one loop of identical timed steps, like the fine chase; a
  // slow counted load only bumps a register and, while there is room, keeps its step number
  // in shared memory. Nothing goes to global memory until the chase is over.
  // `before(k)` runs before step k (a pump window; nothing for a plain count).
  template <uint32_t S, class Before = NoWindow>
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
      if (k == warmup) y.first = now();
      uint32_t cycles;
      j = places.after(timed_step<S>(r, j, scratch, cycles));
      if (k >= warmup) {
        y.cycles += cycles;
        if (cycles > ceiling) {
          ++y.outliers;
        } else if (cycles > threshold) {
          if (y.slow < cap) s_steps[y.slow] = uint32_t(k - warmup);
          ++y.slow;
        }
      }
      if (gap) {  // a slower stream (mt_random_count_job.gap_cycles); not timed
        const unsigned long long t0 = now();
        while (now() - t0 < gap) {
        }
      }
    }
    y.last = now();
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

// Stream k's share of n loads split over `streams`.
__device__ uint64_t share(uint64_t n, uint32_t streams, uint32_t k) { return n / streams + (k < n % streams ? 1 : 0); }

template <class Places>
struct CountOne {
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, uint32_t* s_steps, unsigned long long scratch) {
    Tally y;
    CountRun<Places>::template run<S>(job, r, s_steps, scratch, Places(job, 0), job.warmup, job.record,
                                      job.count_capacity, &y);
    write_tally(job, y, s_steps);
  }
};

// A pumped count (mt_pumped_count_job): thread 0 times, warps 1 .. pump_warps pump.
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

template <bool Wide>
__global__ void __launch_bounds__(1024) count_kernel(const DeviceChaseJob* jobs, ClaimTables t, const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // scratch word, steps [kCountSteps], spare, then the array
  uint32_t* arrays = dyn + kCountSteps + 2;
  DeviceChaseJob job;
  if (claim_job(jobs, t, arrays, &job) < 0) return;
  const Resolved r = resolve<Wide>(job.src, arrays, bank);
  const unsigned long long scratch = static_cast<unsigned long long>(__cvta_generic_to_shared(dyn));
  if (job.pump_warps > 0) {
    run_pumped(job, r, t, dyn + 1, scratch);
    return;
  }
  if (job.random_stride == 0 || job.streams <= 1) {
    if (threadIdx.x != 0) return;
    wait_for_claims(t);
    if (job.random_stride == 0) {
      dispatch<CountOne<FollowArray>, Wide>(job.space, job, r, dyn + 1, scratch);
      return;
    }
    using One = CountOne<RandomDraws>;
    switch (job.space) {  // global paths only (checked on the host)
      case kSpaceGlobalCa: One::run<kSpaceGlobalCa>(job, r, dyn + 1, scratch); break;
      case kSpaceGlobalCg: One::run<kSpaceGlobalCg>(job, r, dyn + 1, scratch); break;
      default: One::run<kSpaceReadonly>(job, r, dyn + 1, scratch); break;
    }
    return;
  }
  // Several streams: lane 0 of warps 0 .. streams-1, each with its own generator, share of
  // the loads and scratch word; stream 0 keeps its slow steps. Sums go out from thread 0.
  __shared__ Tally s_tally[32];
  __shared__ uint32_t s_scratch[32];
  if (threadIdx.x == 0) wait_for_claims(t);
  __syncthreads();
  const uint32_t w = threadIdx.x / 32;
  if (threadIdx.x % 32 == 0 && w < job.streams) {
    const unsigned long long slot = static_cast<unsigned long long>(__cvta_generic_to_shared(s_scratch + w));
    const uint64_t warm = share(job.warmup, job.streams, w), rec = share(job.record, job.streams, w);
    const uint32_t cap = w == 0 ? job.count_capacity : 0;
    using Run = CountRun<RandomDraws>;
    const RandomDraws places(job, w);
    switch (job.space) {
      case kSpaceGlobalCa: Run::run<kSpaceGlobalCa>(job, r, dyn + 1, slot, places, warm, rec, cap, s_tally + w); break;
      case kSpaceGlobalCg: Run::run<kSpaceGlobalCg>(job, r, dyn + 1, slot, places, warm, rec, cap, s_tally + w); break;
      default: Run::run<kSpaceReadonly>(job, r, dyn + 1, slot, places, warm, rec, cap, s_tally + w); break;
    }
  }
  __syncthreads();
  if (threadIdx.x != 0) return;
  Tally sum = s_tally[0];
  for (uint32_t k = 1; k < job.streams; ++k) {
    const Tally& y = s_tally[k];
    sum.slow += y.slow;
    sum.cycles += y.cycles;
    sum.outliers += y.outliers;
    sum.first = y.first < sum.first ? y.first : sum.first;
    sum.last = y.last > sum.last ? y.last : sum.last;
  }
  write_tally(job, sum, dyn + 1);
}

// ------------------------------------------------------------------ plain P-chase

struct AverageRun {
  template <uint32_t S>
  __device__ static void run(const DeviceChaseJob& job, const Resolved& r, unsigned long long scratch) {
    uint32_t j = job.start;
    for (uint64_t k = 0; k < job.warmup; ++k) j = load<S>(r, j);
    const unsigned long long t0 = now_after(j, scratch);
#pragma unroll 4
    for (uint64_t k = 0; k < job.record; ++k) j = load<S>(r, j);
    const unsigned long long t1 = now_after(j, scratch);
    __stcg(job.out_cycles, t1 - t0);
    __stcg(job.out_last, j);
  }
};

template <bool Wide>
__global__ void average_kernel(const DeviceChaseJob* jobs, ClaimTables t, const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // scratch word [2], then the array
  uint32_t* arrays = dyn + 2;
  DeviceChaseJob job;
  if (!start_job(jobs, t, arrays, &job)) return;
  const Resolved r = resolve<Wide>(job.src, arrays, bank);
  dispatch<AverageRun, Wide>(job.space, job, r, static_cast<unsigned long long>(__cvta_generic_to_shared(dyn)));
}

// ------------------------------------------------------------------ sequence chase

struct PhaseRun {
  // Timed phases record into the shared buffer and flush it (with .cg stores) whenever it
  // is full and at the end; a phase of more than `rec` timed loads therefore has a few
  // untimed stores between its chunks.
  template <uint32_t S>
  __device__ static void run(const DevicePhase& ph, const Resolved& r, uint32_t* s_index, uint32_t* s_latency,
                             uint32_t rec) {
    uint32_t j = ph.start;
    if (!ph.out_latency) {
      for (uint64_t k = 0; k < ph.steps; ++k) j = load<S>(r, j);
      return;
    }
    const unsigned long long index_base = __cvta_generic_to_shared(s_index);
    uint64_t done = 0;
    uint32_t filled = 0;
    uint32_t first = j;
    auto flush = [&]() {
      for (uint32_t i = 0; i < filled; ++i) {
        if (ph.out_index) __stcg(ph.out_index + done + i, i == 0 ? first : s_index[i - 1]);
        __stcg(ph.out_latency + done + i, s_latency[i]);
      }
      done += filled;
      filled = 0;
      first = j;
    };
    for (uint64_t k = 0; k < ph.steps; ++k) {
      if (filled == rec) flush();
      uint32_t cycles;
      j = timed_step<S>(r, j, index_base + 4ull * filled, cycles);
      s_latency[filled] = cycles;
      ++filled;
    }
    flush();
  }
};

__device__ bool wait_phase(const ClaimTables& t, uint32_t p, unsigned long long limit) {
  const unsigned long long t0 = now();
  while (*reinterpret_cast<volatile uint32_t*>(t.counters + 2) != p) {
    if (*reinterpret_cast<volatile uint32_t*>(t.counters + 3) != kAbortNone) return false;
    if (now() - t0 > limit) {
      atomicCAS(t.counters + 3, kAbortNone, kAbortPhaseTimeout);
      return false;
    }
    __nanosleep(1000);  // keep the polling traffic on L2 low
  }
  return true;
}

template <bool Wide>
__global__ void sequence_kernel(const DevicePhase* phases, uint32_t phase_count, ClaimTables t, uint32_t space,
                                uint32_t rec, unsigned long long phase_wait, const __grid_constant__ BankOf<Wide> bank) {
  extern __shared__ uint32_t dyn[];  // index [rec+1], latency [rec+1], then the arrays
  __shared__ int s_block;
  __shared__ int s_ok;
  if (threadIdx.x == 0) {
    uint32_t sm;
    const int b = claim(t, &sm);
    if (b >= 0) __stcg(t.job_sm + b, int32_t(sm));
    s_block = b;
  }
  __syncthreads();
  const int b = s_block;
  if (b < 0) return;
  uint32_t* s_index = dyn;
  uint32_t* s_latency = dyn + rec + 1;
  uint32_t* arrays = dyn + 2 * (rec + 1);
  if (space == kSpaceShared) {
    for (uint32_t p = 0; p < phase_count; ++p) {  // arrays used twice are copied twice: harmless
      const DevicePhase ph = load_cg(phases + p);
      for (uint64_t i = threadIdx.x; i < ph.src.elems; i += blockDim.x)
        arrays[ph.src.shared_offset + i] = __ldcg(ph.src.global + i);
    }
  }
  if (threadIdx.x == 0) {
    s_ok = wait_for_claims(t);
    if (!s_ok) atomicCAS(t.counters + 3, kAbortNone, kAbortClaimTimeout);
  }
  __syncthreads();
  if (!s_ok) return;
  for (uint32_t p = 0; p < phase_count; ++p) {
    const DevicePhase ph = load_cg(phases + p);
    if (ph.block != uint32_t(b)) continue;  // uniform across the block
    if (threadIdx.x == 0) s_ok = wait_phase(t, p, phase_wait);
    __syncthreads();
    if (!s_ok) return;
    if (threadIdx.x == ph.lane) {
      const Resolved r = resolve<Wide>(ph.src, arrays, bank);
      dispatch<PhaseRun, Wide>(space, ph, r, s_index, s_latency, rec);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
      __threadfence();
      atomicExch(t.counters + 2, p + 1);
    }
  }
}

// ------------------------------------------------------------------ helpers

__global__ void overhead_kernel(uint32_t* out, uint32_t samples) {
  extern __shared__ uint32_t dyn[];  // index [kStepsPerPass+1], latency [kStepsPerPass+1]
  uint32_t* s_latency = dyn + kStepsPerPass + 1;
  const unsigned long long index_base = __cvta_generic_to_shared(dyn);
  const Resolved r{};  // the timed step of kSpaceOverhead reads nothing from it
  uint32_t j = threadIdx.x;
  // Chunk -1 is a warm-up (instruction cache); chunks 0.. are copied out.
  for (int chunk = -1; uint64_t(chunk + 1) * kStepsPerPass <= samples; ++chunk) {
    for (uint32_t k = 0; k < kStepsPerPass; ++k) {
      uint32_t cycles;
      j = timed_step<kSpaceOverhead>(r, j, index_base + 4ull * k, cycles);
      s_latency[k] = cycles;
    }
    if (chunk >= 0)
      for (uint32_t k = 0; k < kStepsPerPass; ++k) out[uint64_t(chunk) * kStepsPerPass + k] = s_latency[k];
  }
}

__global__ void stride_fill_kernel(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start, uint64_t count) {
  // stride < elems <= 2^32 and k < elems, so k * stride fits in 64 bits.
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < count; k += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t pos = (start + (k * stride) % elems) % elems;
    buffer[pos] = uint32_t((pos + stride) % elems);
  }
}

__global__ void smid_count_kernel(uint32_t* out) {
  uint32_t n;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(n));
  *out = n;
}

template <bool Wide>
const void* kernel_symbol(Kernel k) {
  switch (k) {
    case Kernel::Fine: return reinterpret_cast<const void*>(&fine_kernel<Wide>);
    case Kernel::Average: return reinterpret_cast<const void*>(&average_kernel<Wide>);
    case Kernel::Sequence: return reinterpret_cast<const void*>(&sequence_kernel<Wide>);
    case Kernel::Count: return reinterpret_cast<const void*>(&count_kernel<Wide>);
  }
  return nullptr;
}

constexpr uint32_t kChaseThreads = 32;  // one warp: thread 0 chases, the warp copies shared arrays

}  // namespace

uint32_t fine_sample_bytes(uint32_t steps_per_pass) { return 2 * (steps_per_pass + 1) * 4; }
uint32_t count_sample_bytes() { return (kCountSteps + 2) * 4; }

cudaError_t launch_count(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                         uint32_t shared_array_bytes, const ParamBank* bank, uint32_t warps) {
  const uint32_t dyn = count_sample_bytes() + shared_array_bytes;
  const uint32_t threads = kChaseThreads * (warps > 1 ? (warps < 32 ? warps : 32) : 1);
  if (bank)
    count_kernel<true><<<blocks, threads, dyn>>>(jobs, t, *bank);
  else
    count_kernel<false><<<blocks, threads, dyn>>>(jobs, t, NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_fine(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks, uint32_t steps_per_pass,
                        uint32_t shared_array_bytes, const ParamBank* bank) {
  const uint32_t dyn = fine_sample_bytes(steps_per_pass) + shared_array_bytes;
  if (bank)
    fine_kernel<true><<<blocks, kChaseThreads, dyn>>>(jobs, t, steps_per_pass, *bank);
  else
    fine_kernel<false><<<blocks, kChaseThreads, dyn>>>(jobs, t, steps_per_pass, NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_average(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                           uint32_t shared_array_bytes, const ParamBank* bank) {
  if (bank)
    average_kernel<true><<<blocks, kChaseThreads, 8 + shared_array_bytes>>>(jobs, t, *bank);
  else
    average_kernel<false><<<blocks, kChaseThreads, 8 + shared_array_bytes>>>(jobs, t, NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_sequence(const DevicePhase* phases, uint32_t phase_count, const ClaimTables& t, uint32_t blocks,
                            uint32_t threads, uint32_t space, uint32_t record_steps, uint32_t shared_array_bytes,
                            unsigned long long phase_wait_cycles, const ParamBank* bank) {
  const uint32_t dyn = fine_sample_bytes(record_steps) + shared_array_bytes;
  if (bank)
    sequence_kernel<true><<<blocks, threads, dyn>>>(phases, phase_count, t, space, record_steps, phase_wait_cycles,
                                                    *bank);
  else
    sequence_kernel<false><<<blocks, threads, dyn>>>(phases, phase_count, t, space, record_steps, phase_wait_cycles,
                                                     NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_overhead(uint32_t* out_latency, uint32_t samples) {
  overhead_kernel<<<1, 1, fine_sample_bytes(kStepsPerPass)>>>(out_latency, samples);
  return cudaGetLastError();
}

cudaError_t launch_stride_fill(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start, uint64_t count) {
  const uint64_t want = (count + 255) / 256;
  const uint32_t blocks = uint32_t(want < 4096 ? (want ? want : 1) : 4096);
  stride_fill_kernel<<<blocks, 256>>>(buffer, elems, stride, start, count);
  return cudaGetLastError();
}

cudaError_t launch_smid_count(uint32_t* out_nsmid) {
  smid_count_kernel<<<1, 1>>>(out_nsmid);
  return cudaGetLastError();
}

cudaError_t configure_kernel(Kernel k, bool wide, int carveout_percent, uint32_t dynamic_shared_bytes) {
  const void* f = wide ? kernel_symbol<true>(k) : kernel_symbol<false>(k);
  cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       carveout_percent < 0 ? int(cudaSharedmemCarveoutDefault) : carveout_percent);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_shared_bytes));
}

cudaError_t upload_constant(const uint32_t* host, uint64_t elems, uint32_t offset_elems) {
  return cudaMemcpyToSymbol(c_chase, host, elems * 4, size_t(offset_elems) * 4, cudaMemcpyHostToDevice);
}

cudaError_t load_kernels() {
  const void* all[] = {kernel_symbol<false>(Kernel::Fine),
                       kernel_symbol<false>(Kernel::Average),
                       kernel_symbol<false>(Kernel::Count),
                       kernel_symbol<false>(Kernel::Sequence),
                       kernel_symbol<true>(Kernel::Fine),
                       kernel_symbol<true>(Kernel::Average),
                       kernel_symbol<true>(Kernel::Count),
                       kernel_symbol<true>(Kernel::Sequence),
                       reinterpret_cast<const void*>(&overhead_kernel),
                       reinterpret_cast<const void*>(&stride_fill_kernel),
                       reinterpret_cast<const void*>(&smid_count_kernel)};
  for (const void* f : all) {
    cudaFuncAttributes a{};
    if (cudaError_t e = cudaFuncGetAttributes(&a, f); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace memtopo::cuda
