#include "sim/sim_runner.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "engine/random_places.hpp"
#include "memtopo/errors.hpp"

namespace memtopo::sim {
namespace {

using engine::RandomPlaces;

constexpr uint64_t kBufferAlign = uint64_t(2) << 20;  // every array in its own 2 MiB-aligned buffer

// Virtual base address of every distinct array of one call, in order of first use.
class Buffers {
 public:
  uint64_t base(const mt_chase_array* a) {
    auto [it, fresh] = bases_.try_emplace(a, next_);
    if (fresh) {
      next_ = (next_ + a->elems * 4 + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
      if (next_ > Cache::kMaxAddress) throw Error("the arrays of one call exceed the simulated 256 TiB address space");
    }
    return it->second;
  }

 private:
  std::map<const mt_chase_array*, uint64_t> bases_;
  uint64_t next_ = 0;
};

uint32_t clamp_cycles(int64_t c) { return c < 0 ? 0u : c > int64_t(UINT32_MAX) ? UINT32_MAX : uint32_t(c); }

// One stream of loads of a job: a job's streams split its loads and share its outputs;
// stream 0 alone keeps slow steps. Each stream keeps its own clock.
struct Stream {
  mt_job* job;
  uint64_t base, cur, done, warmup, total;
  uint32_t sm, index;  // index: the stream
  size_t job_index = 0;
  std::optional<RandomPlaces> places;
  double clock = 0, first = -1;
  std::vector<RandomPlaces> pump;  // a pumped job's untimed generators, one per lane
  uint64_t pump_loads = 0;
};

std::vector<Stream> make_streams(Gpu& gpu, engine::JobCall& call, Buffers& buffers) {
  const mt_device_info& dev = gpu.model().info;
  // SMs: pinned jobs first, then the lowest free SM for each unpinned job.
  std::vector<bool> taken(size_t(dev.sm_count), false);
  for (const mt_job& j : call.jobs)
    if (j.sm >= 0) taken[size_t(j.sm)] = true;
  std::vector<Stream> streams;
  for (mt_job& j : call.jobs) {
    int32_t sm = j.sm;
    if (sm < 0) {
      sm = 0;
      while (taken[size_t(sm)]) ++sm;
      taken[size_t(sm)] = true;
    }
    j.out.sm = sm;
    gpu.set_carveout(uint32_t(sm), j.shared_carveout_percent);
    const uint32_t n = engine::streams_of(j);
    for (uint32_t k = 0; k < n; ++k) {
      Stream s{&j, buffers.base(j.array), engine::stream_start(j, k), 0, engine::stream_share(j.warmup_steps, n, k), 0, uint32_t(sm), k};
      s.total = s.warmup + engine::stream_share(j.steps, n, k);
      s.job_index = size_t(&j - call.jobs.data());
      if (j.pattern == MT_PATTERN_RANDOM) {
        s.places.emplace(j.random_seed, j.array->elems, j.random_stride_elems);
        s.places->x = engine::stream_state(s.places->x, k);
        s.cur = s.places->next();
        for (uint32_t p = 0; p < j.rate.pump_warps * j.rate.pump_lanes; ++p) {
          s.pump.emplace_back(j.random_seed, j.array->elems, j.random_stride_elems);
          s.pump.back().x = engine::stream_state(s.pump.back().x, engine::kPumpStreamBase + p);
        }
      }
      streams.push_back(std::move(s));
    }
  }
  return streams;
}

// One pump window: the lanes load in turn, all at once (each load takes 1/lanes of its
// time), until pump_cycles have passed. Untimed; the loads still change what the caches hold.
void pump_window(Gpu& gpu, Stream& s, double active, bool counted) {
  const mt_job& j = *s.job;
  const double lanes = double(s.pump.size());
  double t = 0;
  for (size_t k = 0; t < double(j.rate.pump_cycles); k = (k + 1) % s.pump.size()) {
    const double step = double(gpu.load(s.sm, 0, j.space, s.base + 4 * uint64_t(s.pump[k].next()))) / lanes;
    t += step;
    gpu.advance(step / active);
    if (counted) ++s.pump_loads;
  }
  s.clock += t;
}

// A load that left the SM, with more of its job's chains in flight than the L2 or DRAM answer
// for one SM ([sim.memory] requests in flight), waits its turn: latency x chains / limit (Little's law at the limit).
int64_t queued(const Gpu& gpu, int64_t cycles, size_t chains) {
  const Model& m = gpu.model();
  const uint32_t limit = gpu.served() == Gpu::Served::L2     ? m.l2_loads_in_flight
                         : gpu.served() == Gpu::Served::Dram ? m.dram_loads_in_flight
                                                             : 0;
  if (limit == 0 || chains <= limit) return cycles;
  return int64_t(std::llround(double(cycles) * double(chains) / double(limit)));
}

// What one timed load adds to its job's outputs.
void record_load(Stream& s, int64_t measured, int64_t overhead) {
  mt_job& j = *s.job;
  const uint64_t t = s.done - s.warmup;
  const uint32_t raw = clamp_cycles(measured + overhead);
  // Counted loads leave an interruption's cycles out (measure.h).
  if (!(j.record == MT_RECORD_COUNTS && j.slow_max_cycles && raw > j.slow_max_cycles))
    j.out.cycles += j.record == MT_RECORD_TOTAL ? uint64_t(std::max<int64_t>(measured, 0)) : raw;
  if (j.record == MT_RECORD_SAMPLES) {
    if (j.out_index) j.out_index[t] = uint32_t(s.cur);
    j.out_latency[t] = raw;
  } else if (j.record == MT_RECORD_COUNTS) {
    if (j.slow_max_cycles && raw > j.slow_max_cycles) {
      ++j.out.outliers;
    } else if (raw > j.slow_cycles) {
      if (s.index == 0 && j.out.slow_recorded < j.slow_capacity) j.out_slow_step[j.out.slow_recorded++] = uint32_t(t);
      ++j.out.slow;
    }
  }
}

void finish_outputs(engine::JobCall& call, const std::vector<Stream>& streams) {
  for (mt_job& j : call.jobs) {
    j.out.average_cycles = double(j.out.cycles) / double(j.steps);
    double first = -1, last = 0;
    for (const Stream& s : streams) {
      if (s.job != &j) continue;
      j.out.pump_loads += s.pump_loads;
      if (s.first < 0) continue;
      first = first < 0 ? s.first : std::min(first, s.first);
      last = std::max(last, s.clock);
    }
    j.out.span_cycles = uint64_t(std::llround(std::max(0.0, last - first)));
  }
}

}  // namespace

void run_concurrent(Gpu& gpu, engine::JobCall& call) {
  gpu.begin_call();
  Buffers buffers;
  std::vector<Stream> streams = make_streams(gpu, call, buffers);
  const int64_t sample_overhead = gpu.model().timing_overhead_cycles;
  std::vector<size_t> on_job(call.jobs.size());
  for (size_t active = streams.size(); active;) {
    active = 0;
    std::fill(on_job.begin(), on_job.end(), 0);
    for (const Stream& s : streams)
      if (s.done < s.total) {
        ++active;
        ++on_job[s.job_index];
      }
    for (Stream& s : streams) {
      if (s.done == s.total) continue;
      const mt_job& j = *s.job;
      if (!s.pump.empty() && s.done % engine::probe_loads_of(j) == 0) pump_window(gpu, s, double(active), s.done > s.warmup);
      // Timed loads draw noise; its jitter queues with the load (Gpu::Noise).
      const Gpu::Noise noise = s.done >= s.warmup ? gpu.noise_parts() : Gpu::Noise{};
      int64_t cycles = queued(gpu, gpu.load(s.sm, 0, j.space, s.base + 4 * s.cur) + noise.jitter, on_job[s.job_index]);
      // A whole-chase timing has no per-load clock reads.
      const int64_t overhead = j.record == MT_RECORD_TOTAL ? 0 : sample_overhead;
      if (s.done == s.warmup) s.first = s.clock;
      if (s.done >= s.warmup) record_load(s, cycles + noise.interruption, overhead);
      // The streams of this round load at the same time: the round takes one load's time.
      const double step = double(cycles + overhead + j.rate.gap_cycles);
      s.clock += step;
      gpu.advance(step / double(active));
      s.cur = s.places ? s.places->next() : engine::next_index(*j.array, s.cur);
      ++s.done;
    }
  }
  finish_outputs(call, streams);
}

void run_sequence(Gpu& gpu, engine::JobCall& call) {
  const mt_device_info& dev = gpu.model().info;
  // Blocks to SMs: pinned blocks first, then the lowest free SM, in order of block id.
  std::map<int32_t, int32_t> block_sm;
  for (const mt_job& j : call.jobs) {
    auto [it, fresh] = block_sm.try_emplace(j.block, j.sm);
    if (it->second < 0) it->second = j.sm;
  }
  std::vector<bool> taken(size_t(dev.sm_count), false);
  for (auto& [b, sm] : block_sm)
    if (sm >= 0) taken[size_t(sm)] = true;
  for (auto& [b, sm] : block_sm) {
    if (sm >= 0) continue;
    sm = 0;
    while (taken[size_t(sm)]) ++sm;
    taken[size_t(sm)] = true;
  }
  gpu.begin_call();
  for (auto& [b, sm] : block_sm) gpu.set_carveout(uint32_t(sm), call.jobs[0].shared_carveout_percent);
  std::vector<mt_job*> in_order;
  for (mt_job& j : call.jobs) in_order.push_back(&j);
  std::sort(in_order.begin(), in_order.end(), [](const mt_job* a, const mt_job* b) { return a->order < b->order; });
  Buffers buffers;
  const int64_t overhead = gpu.model().timing_overhead_cycles;
  for (mt_job* jp : in_order) {
    mt_job& j = *jp;
    const uint32_t sm = uint32_t(block_sm[j.block]);
    j.out.sm = int32_t(sm);
    const uint64_t base = buffers.base(j.array);
    uint64_t cur = j.start;
    for (uint64_t t = 0; t < j.warmup_steps + j.steps; ++t) {
      const int64_t cycles = gpu.load(sm, j.lane, j.space, base + 4 * cur);
      if (t >= j.warmup_steps) {
        const uint64_t k = t - j.warmup_steps;
        if (j.out_latency) {  // an untimed job draws no noise
          const uint32_t raw = clamp_cycles(cycles + gpu.noise() + overhead);
          j.out.cycles += raw;
          j.out_latency[k] = raw;
        }
        if (j.out_index) j.out_index[k] = uint32_t(cur);
      }
      cur = engine::next_index(*j.array, cur);
    }
    j.out.average_cycles = double(j.out.cycles) / double(j.steps);
  }
}

}  // namespace memtopo::sim
