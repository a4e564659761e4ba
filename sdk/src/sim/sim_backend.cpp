// The simulated GPU behind mt_backend: the primitives of measure.h executed on the
// access-level model of sim_gpu.hpp. Semantics: docs/simulator.md.
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "engine/job_checks.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/probe.hpp"
#include "sim/builtin_device.hpp"
#include "sim/sim_gpu.hpp"
#include "sim/sim_model.hpp"

namespace memtopo::engine {
namespace {

using sim::Gpu;

// Pump warps the simulator runs: each pump load is simulated one by one, so a pump of many
// warps costs many times the timed loads in CPU time.
constexpr uint32_t kSimPumpWarpsMax = 1;
constexpr uint64_t kBufferAlign = uint64_t(2) << 20;  // every array in its own 2 MiB-aligned buffer

// Virtual base address of every distinct array of one call, in order of first use.
class Buffers {
 public:
  uint64_t base(const mt_chase_array* a) {
    auto [it, fresh] = bases_.try_emplace(a, next_);
    if (fresh) {
      next_ = (next_ + a->elems * 4 + kBufferAlign - 1) / kBufferAlign * kBufferAlign;
      if (next_ > sim::Cache::kMaxAddress) throw Error("the arrays of one call exceed the simulated 256 TiB address space");
    }
    return it->second;
  }

 private:
  std::map<const mt_chase_array*, uint64_t> bases_;
  uint64_t next_ = 0;
};

uint32_t clamp_cycles(int64_t c) { return c < 0 ? 0u : c > int64_t(UINT32_MAX) ? UINT32_MAX : uint32_t(c); }

class SimDevice final : public Device {
 public:
  explicit SimDevice(sim::Model model) : gpu_(model) {
    backend_.struct_size = sizeof(backend_);
    backend_.self = this;
    backend_.name = "sim";
    backend_.fine_chase = &fine_chase;
    backend_.average_chase = &average_chase;
    backend_.sequence_chase = &sequence_chase;
    backend_.timing_overhead = &timing_overhead;
    backend_.count_chase = &count_chase;
    backend_.random_count = &random_count;
    backend_.paced_count = &paced_count;
    backend_.paced_streams_max = kRandomStreamsMax;
    backend_.pumped_count = &pumped_count;
    backend_.pump_warps_max = kSimPumpWarpsMax;
  }
  const mt_backend* backend() const override { return &backend_; }
  const mt_device_info& info() const override { return gpu_.model().info; }
  std::string description() const override { return gpu_.model().origin; }

 private:
  enum class Mode { Fine, Average, Count };
  static int fine_chase(void* self, mt_chase_job* jobs, size_t n, char* err, size_t err_size) {
    return static_cast<SimDevice*>(self)->chase(jobs, n, Mode::Fine, nullptr, err, err_size);
  }
  static int average_chase(void* self, mt_chase_job* jobs, size_t n, char* err, size_t err_size) {
    return static_cast<SimDevice*>(self)->chase(jobs, n, Mode::Average, nullptr, err, err_size);
  }
  static int count_chase(void* self, mt_count_job* jobs, size_t n, char* err, size_t err_size) {
    auto* dev = static_cast<SimDevice*>(self);
    std::vector<mt_chase_job> chases;
    if (auto e = check_count_jobs(jobs, n, dev->info(), chases); !e.empty()) return fail(err, err_size, e);
    const int rc = dev->chase(chases.data(), n, Mode::Count, jobs, err, err_size);
    for (size_t i = 0; i < n && rc == 0; ++i) jobs[i].chase.out_sm = chases[i].out_sm;
    return rc;
  }
  static int random_count(void* self, mt_random_count_job* jobs, size_t n, char* err, size_t err_size) {
    // One stream, no gap: the paced count with its defaults.
    std::vector<mt_paced_count_job> paced(jobs ? n : 0);
    for (size_t i = 0; i < paced.size(); ++i) {
      paced[i].struct_size = sizeof(mt_paced_count_job);
      paced[i].random = jobs[i];
    }
    const int rc = paced_count(self, paced.empty() ? nullptr : paced.data(), n, err, err_size);
    for (size_t i = 0; i < paced.size() && rc == 0; ++i) jobs[i].count = paced[i].random.count;
    return rc;
  }
  static int paced_count(void* self, mt_paced_count_job* jobs, size_t n, char* err, size_t err_size) {
    auto* dev = static_cast<SimDevice*>(self);
    RatedJobs r;
    if (auto e = check_paced_jobs(jobs, n, dev->info(), r); !e.empty()) return fail(err, err_size, e);
    return dev->run_rated(jobs, n, r, err, err_size);
  }
  static int pumped_count(void* self, mt_pumped_count_job* jobs, size_t n, char* err, size_t err_size) {
    auto* dev = static_cast<SimDevice*>(self);
    RatedJobs r;
    if (auto e = check_pumped_jobs(jobs, n, dev->info(), kSimPumpWarpsMax, r); !e.empty()) return fail(err, err_size, e);
    return dev->run_rated(jobs, n, r, err, err_size);
  }
  template <class Job>
  int run_rated(Job* jobs, size_t n, RatedJobs& r, char* err, size_t err_size) {
    std::vector<uint64_t> spans(n, 0), pumped(n, 0);
    const int rc = chase(r.chases.data(), n, Mode::Count, r.counts.data(), err, err_size, r.randoms.data(),
                         r.rates.data(), spans.data(), pumped.data());
    if (rc == 0) return_rated(jobs, r, spans, pumped);
    return rc;
  }
  static int sequence_chase(void* self, mt_sequence_job* job, char* err, size_t err_size) {
    return static_cast<SimDevice*>(self)->sequence(job, err, err_size);
  }
  static int timing_overhead(void* self, double* out, char* err, size_t err_size) {
    if (!out) return fail(err, err_size, "timing_overhead: no output");
    *out = double(static_cast<SimDevice*>(self)->gpu_.model().timing_overhead_cycles);
    return 0;
  }

  // Jobs run interleaved, one load per job in turn (as concurrent SMs would share the L2).
  // Count mode: `counts[i]` is the count job whose chase is jobs[i].
  // `random` (random-load counts): random[i] says where jobs[i]'s loads go.
  int chase(mt_chase_job* jobs, size_t n, Mode mode, mt_count_job* counts, char* err, size_t err_size,
            const mt_random_count_job* random = nullptr, const RandomRate* rates = nullptr,
            uint64_t* spans = nullptr, uint64_t* pumped = nullptr) noexcept {
    try {
      const mt_device_info& dev = info();
      const bool fine = mode == Mode::Fine;
      if (auto e = check_chase_jobs(jobs, n, dev, fine); !e.empty()) return fail(err, err_size, e);
      if (counts)
        for (size_t i = 0; i < n; ++i) counts[i].out_slow = counts[i].out_slow_recorded = counts[i].out_cycles = counts[i].out_outliers = 0;
      // SMs: pinned jobs first, then the lowest free SM for each unpinned job.
      std::vector<bool> taken(size_t(dev.sm_count), false);
      for (size_t i = 0; i < n; ++i)
        if (jobs[i].sm >= 0) taken[size_t(jobs[i].sm)] = true;
      gpu_.begin_call();
      Buffers buffers;
      // One run per stream: a random-load job's streams (ABI 1.4) split its loads and share
      // its outputs; stream 0 alone keeps slow steps. Each run keeps its own clock.
      struct Run {
        mt_chase_job* job;
        uint64_t base, cur, done, warmup, total;
        uint32_t sm, stream, gap;
        int64_t sum;
        std::optional<RandomPlaces> places;
        double clock = 0, first = -1;
        RandomRate rate;
        std::vector<RandomPlaces> pump;  // a pumped job's untimed generators, one per lane
        uint64_t pump_loads = 0;
      };
      std::vector<Run> runs;
      std::vector<int64_t> sums(n, 0);
      for (size_t i = 0; i < n; ++i) {
        mt_chase_job& j = jobs[i];
        int32_t sm = j.sm;
        if (sm < 0) {
          sm = 0;
          while (taken[size_t(sm)]) ++sm;
          taken[size_t(sm)] = true;
        }
        j.out_sm = sm;
        gpu_.set_carveout(uint32_t(sm), j.shared_carveout_percent);
        const RandomRate rate = rates ? rates[i] : RandomRate{};
        const uint32_t streams = rate.streams;
        for (uint32_t k = 0; k < streams; ++k) {
          auto share = [&](uint64_t x) { return x / streams + (k < x % streams ? 1 : 0); };
          Run r{&j, buffers.base(j.array), j.start, 0, share(j.warmup_steps), 0, uint32_t(sm), k, rate.gap_cycles, 0, {}};
          r.total = r.warmup + share(j.steps);
          if (random) {
            r.places.emplace(random[i].seed, j.array->elems, random[i].stride_elems);
            r.places->x = stream_state(r.places->x, k);
            r.cur = r.places->next();
            r.rate = rate;
            for (uint32_t p = 0; p < rate.pump_warps * rate.pump_lanes; ++p) {
              r.pump.emplace_back(random[i].seed, j.array->elems, random[i].stride_elems);
              r.pump.back().x = stream_state(r.pump.back().x, kPumpStreamBase + p);
            }
          }
          runs.push_back(std::move(r));
        }
      }
      const int64_t overhead = mode == Mode::Average ? 0 : gpu_.model().timing_overhead_cycles;
      for (size_t active = runs.size(); active;) {
        active = 0;
        for (const Run& r : runs) active += r.done < r.total ? 1 : 0;
        for (Run& r : runs) {
          if (r.done == r.total) continue;
          const mt_chase_job& j = *r.job;
          const size_t ji = size_t(&j - jobs);
          if (!r.pump.empty() && r.done % r.rate.probe_loads == 0) pump_window(r.pump, r.rate, r.sm, j.space, r.base,
                                                                             double(active), r.clock,
                                                                             r.done > r.warmup ? &r.pump_loads : nullptr);
          const int64_t cycles = gpu_.load(r.sm, 0, j.space, r.base + 4 * r.cur);
          if (r.done == r.warmup) r.first = r.clock;
          if (r.done >= r.warmup) {
            const uint64_t t = r.done - r.warmup;
            const int64_t measured = cycles + gpu_.noise();
            sums[ji] += measured;
            if (fine) {
              if (j.out_index) j.out_index[t] = uint32_t(r.cur);
              j.out_latency[t] = clamp_cycles(measured + overhead);
            } else if (mode == Mode::Count) {
              mt_count_job& c = counts[ji];
              const uint32_t raw = clamp_cycles(measured + overhead);
              c.out_cycles += raw;
              if (c.slow_max_cycles && raw > c.slow_max_cycles) {
                ++c.out_outliers;
              } else if (raw > c.slow_cycles) {
                if (r.stream == 0 && c.out_slow_recorded < c.slow_capacity) c.out_slow_step[c.out_slow_recorded++] = uint32_t(t);
                ++c.out_slow;
              }
            }
          }
          // The runs of this round load at the same time: the round takes one load's time.
          const double step = double(cycles + overhead + r.gap);
          r.clock += step;
          gpu_.advance(step / double(active));
          r.cur = r.places ? r.places->next() : next_index(*j.array, r.cur);
          ++r.done;
        }
      }
      for (size_t i = 0; i < n; ++i) jobs[i].out_average_cycles = double(sums[i]) / double(jobs[i].steps);
      if (spans)
        for (size_t i = 0; i < n; ++i) {
          double first = -1, last = 0;
          for (const Run& r : runs)
            if (r.job == &jobs[i] && r.first >= 0) {
              first = first < 0 ? r.first : std::min(first, r.first);
              last = std::max(last, r.clock);
            }
          spans[i] = uint64_t(std::llround(std::max(0.0, last - first)));
        }
      if (pumped)
        for (const Run& r : runs) pumped[size_t(r.job - jobs)] += r.pump_loads;
      return 0;
    } catch (const std::exception& e) {
      return fail(err, err_size, std::string("simulated GPU: ") + e.what());
    }
  }

  // One pump window: the lanes load in turn, all at once (each load takes 1/lanes of its
  // time), until pump_cycles have passed. Untimed; the loads still change what the caches hold.
  void pump_window(std::vector<RandomPlaces>& pump, const RandomRate& rate, uint32_t sm, mt_space space, uint64_t base,
                   double active, double& clock, uint64_t* counted) {
    const double lanes = double(pump.size());
    double t = 0;
    for (size_t k = 0; t < double(rate.pump_cycles); k = (k + 1) % pump.size()) {
      const double step = double(gpu_.load(sm, 0, space, base + 4 * uint64_t(pump[k].next()))) / lanes;
      t += step;
      gpu_.advance(step / active);
      if (counted) ++*counted;
    }
    clock += t;
  }

  int sequence(mt_sequence_job* job, char* err, size_t err_size) noexcept {
    try {
      if (!job) return fail(err, err_size, "sequence: no job");
      const mt_device_info& dev = info();
      if (auto e = check_sequence_job(*job, dev); !e.empty()) return fail(err, err_size, e);
      // Blocks to SMs: a block's pins must agree; pinned blocks first, then the lowest free SM.
      std::map<uint32_t, int32_t> block_sm;
      for (size_t a = 0; a < job->actor_count; ++a) {
        const mt_actor& act = job->actors[a];
        auto [it, fresh] = block_sm.try_emplace(act.block, act.sm);
        if (!fresh && act.sm >= 0 && it->second >= 0 && it->second != act.sm)
          return fail(err, err_size, "actor " + std::to_string(a) + ": block " + std::to_string(act.block) +
                                         " is pinned to SM " + std::to_string(it->second) + " by another actor, not " +
                                         std::to_string(act.sm));
        if (it->second < 0) it->second = act.sm;
      }
      if (block_sm.size() > size_t(dev.sm_count))
        return fail(err, err_size, std::to_string(block_sm.size()) + " blocks but only " + std::to_string(dev.sm_count) +
                                       " SMs; blocks of one sequence run on distinct SMs");
      std::vector<bool> taken(size_t(dev.sm_count), false);
      for (auto& [b, sm] : block_sm) {
        if (sm < 0) continue;
        if (taken[size_t(sm)]) return fail(err, err_size, "two blocks are pinned to SM " + std::to_string(sm));
        taken[size_t(sm)] = true;
      }
      for (auto& [b, sm] : block_sm) {
        if (sm >= 0) continue;
        sm = 0;
        while (taken[size_t(sm)]) ++sm;
        taken[size_t(sm)] = true;
      }
      if (job->out_actor_sm)
        for (size_t a = 0; a < job->actor_count; ++a) job->out_actor_sm[a] = block_sm[job->actors[a].block];
      gpu_.begin_call();
      for (auto& [b, sm] : block_sm) gpu_.set_carveout(uint32_t(sm), job->shared_carveout_percent);
      Buffers buffers;
      const int64_t overhead = gpu_.model().timing_overhead_cycles;
      for (size_t p = 0; p < job->phase_count; ++p) {  // phases strictly in order
        mt_phase& ph = job->phases[p];
        const mt_actor& act = job->actors[ph.actor];
        const uint32_t sm = uint32_t(block_sm[act.block]);
        const uint64_t base = buffers.base(ph.array);
        uint64_t cur = ph.start;
        for (uint64_t t = 0; t < ph.steps; ++t) {
          const int64_t cycles = gpu_.load(sm, act.lane, job->space, base + 4 * cur);
          if (ph.out_latency) {
            ph.out_latency[t] = clamp_cycles(cycles + gpu_.noise() + overhead);
            if (ph.out_index) ph.out_index[t] = uint32_t(cur);
          } else if (ph.out_index) {
            ph.out_index[t] = uint32_t(cur);
          }
          cur = next_index(*ph.array, cur);
        }
      }
      return 0;
    } catch (const std::exception& e) {
      return fail(err, err_size, std::string("simulated GPU: ") + e.what());
    }
  }

  Gpu gpu_;
  mt_backend backend_{};
};

}  // namespace

std::unique_ptr<Device> open_sim(const std::string& path) {
  if (path.empty())
    return std::make_unique<SimDevice>(sim::load_model(sim::kBuiltinDeviceToml, "built-in device (hopper-like.toml)", "sim (built-in)"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open the simulated device description (--device sim:FILE)");
  std::ostringstream text;
  text << in.rdbuf();
  return std::make_unique<SimDevice>(sim::load_model(text.str(), path, "sim:" + path));
}

}  // namespace memtopo::engine
