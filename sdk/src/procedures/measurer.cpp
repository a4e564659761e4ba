// The measuring instrument of the cache procedure: calibration against a reference
// footprint, then footprints run as counted or recorded jobs and judged hit or miss.
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/measurer.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;

Footprint counted_footprint(recipes::Chase chase, uint64_t warmup_passes, uint64_t counted_passes, bool recurring_only) {
  Footprint f;
  f.record_steps = counted_passes * cycle_of(chase);
  f.chase = std::move(chase);
  f.warmup_passes = warmup_passes;
  f.recurring_only = recurring_only;
  f.counts_only = true;
  return f;
}

Measurer::Measurer(const Context& ctx, Target target) : ctx_(ctx), target_(std::move(target)) { calibrate(); }

int32_t Measurer::pinned_sm() const {
  // A shared cache is measured from one SM: hit latencies (and with them the slow-load
  // threshold) depend on the SM's distance from the cache's slices.
  return target_.shared_between_sms ? 0 : -1;
}

int Measurer::parallel_footprints() const {
  if (target_.shared_between_sms) return 1;
  return std::max(1, ctx_.device().sm_count);
}

Job Measurer::job_for(const recipes::Chase& chase, uint64_t warmup_passes, uint64_t steps) const {
  Job j;
  j.space = target_.space;
  j.array = &chase.array;
  j.start = chase.start;
  j.warmup_steps = warmup_passes * std::max<uint64_t>(cycle_of(chase), 1);
  j.steps = steps;
  j.shared_carveout_percent = target_.shared_carveout_percent;
  j.sm = pinned_sm();
  return j;
}

void Measurer::calibrate() {
  // The reference: a footprint far below any plausible size, chased until warm. Its
  // latencies are the hit level every later classification is anchored to.
  const auto chase = stride_chase(target_.reference_bytes, target_.stride_bytes);
  const Job ref = job_for(chase, 2, 4096);
  const JobResult r = ctx_.backend().run(ref);
  ++launches_;
  reference_ = an::to_doubles(r.latency);
  hit_centre_ = an::median(reference_);
  // A load is slow when it lies above the reference's 99th percentile by a margin. The
  // reference's own slow loads (noise tails, interrupts) give the rate at which slow loads
  // happen without any capacity miss; counts are judged against that rate. A shared cache's
  // small reference may not show how far its hits spread at footprints of many MiB (TLB
  // reach, distance to the slice), so its margin is 30 % of the hit: the next level is 1.5x
  // the hit or more on every GPU seen (docs/results/log/h100.md: L2 near and far).
  const double p99 = an::percentile(reference_, 99.0);
  slow_threshold_ = p99 + std::max(4.0, (target_.shared_between_sms ? 0.3 : 0.1) * hit_centre_);
  // A load far slower than any miss can be is an interruption, not a miss: the ceiling is
  // twice the 99th percentile of a cold chase over the largest footprint searched, where
  // every load misses every level (TLBs included).
  {
    const uint64_t cold_bytes = std::max(target_.search_limit_bytes, 2 * target_.reference_bytes);
    const auto cold = recipes::constant_stride(
        target_.max_footprint_bytes ? std::min(cold_bytes, target_.max_footprint_bytes) : cold_bytes,
        std::max<uint64_t>(target_.stride_bytes, 128));
    const JobResult cr = ctx_.backend().run(job_for(cold, 0, std::min<uint64_t>(2048, cycle_of(cold))));
    ++launches_;
    const std::vector<double> cold_latency = an::to_doubles(cr.latency);
    // Never past half way from the hits to the fastest cold loads: where a miss of the near
    // partition is about as slow as a far hit (437 against 372 cycles on a random device),
    // 30 % of the hit lay above the near misses, and only far lines missed visibly.
    const double cold_low = an::percentile(cold_latency, 10.0);
    if (cold_low > p99) slow_threshold_ = std::max(p99 + 4.0, std::min(slow_threshold_, 0.5 * (p99 + cold_low)));
    ceiling_ = std::max(2.0 * an::percentile(cold_latency, 99.0), 2.0 * slow_threshold_);
  }
  size_t strays = 0;
  for (double x : reference_) strays += x > slow_threshold_ && x <= ceiling_ ? 1 : 0;
  slow_rate_ = double(strays + 1) / double(reference_.size() + 2);
  // Counted footprints classify millions of loads: the rate of stray slow loads must be
  // known far below 1/4096 for their counts to mean anything. A long counted reference gives it.
  counting_ = ctx_.backend().has(MT_CAP_COUNTS);
  if (counting_) {
    Job c = ref;
    c.steps = uint64_t(1) << 20;
    c.record = MT_RECORD_COUNTS;
    c.slow_cycles = static_cast<uint32_t>(slow_threshold_);
    c.slow_max_cycles = static_cast<uint32_t>(ceiling_);
    c.keep_steps = 0;
    c.rate.streams = staggered_streams(chase.array, c.steps);
    c.stagger_streams = c.rate.streams > 1;
    const JobResult cr = ctx_.backend().run(c);
    ++launches_;
    slow_rate_ = double(cr.slow + 1) / double(c.steps + 2);
  }
}

uint32_t Measurer::staggered_streams(const Footprint& f) const {
  // Only whole-footprint counts: which step missed (misses that recur in two counted passes,
  // a miss pattern) is numbered along one chase.
  const uint64_t steps = f.record_steps ? f.record_steps : cycle_of(f.chase);
  if ((f.recurring_only && steps >= 2 * cycle_of(f.chase)) || f.miss_pattern) return 1;
  return staggered_streams(f.chase.array, steps);
}

uint32_t Measurer::staggered_streams(const ChaseArray& array, uint64_t steps) const {
  // A shared cache's footprint runs alone, one chase on one SM: tens of MiB at one load at a
  // time. Streams staggered along the cycle load every element once per cycle as the chase
  // does (the same reuse distance, so the same capacity misses) in a fraction of its time.
  // Sixteen chains of one SM stay far below what an SM keeps in flight to the L2 and to
  // memory (hundreds on an H100, docs/results/log/h100.md), so a hit stays a hit.
  constexpr uint32_t kStreams = 16;
  const Backend& b = ctx_.backend();
  const bool global = target_.space == MT_SPACE_GLOBAL_CA || target_.space == MT_SPACE_GLOBAL_CG;
  if (!target_.shared_between_sms || !global || !b.has(MT_CAP_STREAMS) || b.streams_max() < kStreams ||
      array.c().kind != MT_ARRAY_STRIDE || steps < uint64_t(kStreams) * 1024)
    return 1;
  return kStreams;
}

bool Measurer::significant(size_t misses, size_t loads) const {
  return an::beyond_chance(double(misses), slow_rate_ * double(loads));
}

bool Measurer::significant_recurring(size_t recurring, uint64_t cycle, uint64_t passes) const {
  // An element is slow in two passes by chance with probability C(passes, 2) p^2 and then
  // counts twice.
  const double pairs = double(passes) * double(passes - 1) / 2.0;
  return an::beyond_chance(double(recurring), 2.0 * double(cycle) * pairs * slow_rate_ * slow_rate_);
}

std::vector<std::pair<size_t, size_t>> Measurer::batches(const std::vector<Footprint>& footprints) const {
  // Fill a launch up to what the device holds for it: one small buffer for all jobs on
  // constant memory, a few GiB of arrays elsewhere (132 SMs x sparse GiB arrays would not fit).
  std::vector<std::pair<size_t, size_t>> out;
  const size_t most = static_cast<size_t>(parallel_footprints());
  const uint64_t budget = target_.max_footprint_bytes ? target_.max_footprint_bytes : kLaunchBytes;
  for (size_t first = 0; first < footprints.size();) {
    uint64_t total = 0;
    size_t k = first;
    while (k < footprints.size() && k - first < most &&
           (k == first || total + footprints[k].chase.footprint_bytes <= budget))
      total += footprints[k++].chase.footprint_bytes;
    out.emplace_back(first, k);
    first = k;
  }
  return out;
}

std::vector<FootprintResult> Measurer::run(const std::vector<Footprint>& footprints) {
  // Footprints that need only counts run as counted jobs; the others are recorded.
  std::vector<Footprint> counted, recorded;
  std::vector<std::pair<bool, size_t>> where;
  for (const Footprint& f : footprints) {
    if ((f.counts_only || f.miss_pattern) && counting_) {
      where.emplace_back(true, counted.size());
      counted.push_back(f);
    } else {
      where.emplace_back(false, recorded.size());
      recorded.push_back(f);
    }
  }
  std::vector<FootprintResult> c = counted.empty() ? std::vector<FootprintResult>{} : run_counted(counted);
  std::vector<FootprintResult> r = recorded.empty() ? std::vector<FootprintResult>{} : run_recorded(recorded);
  std::vector<FootprintResult> out;
  for (auto [is_counted, i] : where) out.push_back(std::move(is_counted ? c[i] : r[i]));
  return out;
}

std::vector<int32_t> Measurer::spread_sms(size_t n) const {
  const int64_t count = std::max(1, ctx_.device().sm_count);
  std::vector<int32_t> sms;
  for (size_t k = 0; k < n; ++k) sms.push_back(int32_t(int64_t(k) * count / int64_t(std::max<size_t>(n, 1))));
  return sms;
}

void Measurer::run_batched(const std::vector<Footprint>& footprints, const std::function<Job(const Footprint&)>& make,
                           const std::function<void(size_t, const Job&, JobResult&)>& take) {
  for (auto [first, last] : batches(footprints)) {
    if (ctx_.cancelled()) throw Error("cancelled");
    std::vector<Job> jobs;
    for (size_t i = first; i < last; ++i) {
      jobs.push_back(make(footprints[i]));
      if (!footprint_sms_.empty() && !target_.shared_between_sms) jobs.back().sm = footprint_sms_[i % footprint_sms_.size()];
    }
    std::vector<JobResult> r = ctx_.backend().run(jobs);
    ++launches_;
    for (size_t i = first; i < last; ++i) {
      loads_chased_ += jobs[i - first].warmup_steps + jobs[i - first].steps;
      take(i, jobs[i - first], r[i - first]);
    }
  }
}

std::vector<FootprintResult> Measurer::run_counted(const std::vector<Footprint>& footprints) {
  std::vector<FootprintResult> out(footprints.size());
  auto make = [this](const Footprint& f) {
    Job j = job_for(f.chase, f.warmup_passes, f.record_steps ? f.record_steps : std::max<uint64_t>(cycle_of(f.chase), 1));
    j.record = MT_RECORD_COUNTS;
    j.slow_cycles = static_cast<uint32_t>(slow_threshold_);
    j.slow_max_cycles = static_cast<uint32_t>(ceiling_);
    j.keep_steps = 1024;
    j.rate.streams = staggered_streams(f);
    j.stagger_streams = j.rate.streams > 1;
    // Staggered streams warm up twice: on the H100 a few 64 B pieces that one stream's first
    // warm-up pass reached right after the array was written were still read from the far
    // L2 partition when the next stream counted them a cycle later (slow loads at 1 MiB);
    // with a second pass none were, from 1 MiB up to the size (docs/results/log/h100.md).
    if (j.stagger_streams) j.warmup_steps = std::max<uint64_t>(j.warmup_steps, 2 * std::max<uint64_t>(cycle_of(f.chase), 1));
    return j;
  };
  run_batched(footprints, make, [&](size_t i, const Job& j, JobResult& r) {
    out[i].loads = static_cast<size_t>(j.steps);
    judge_counted(footprints[i], r, out[i]);
  });
  return out;
}

void Measurer::judge_counted(const Footprint& f, const JobResult& r, FootprintResult& o) const {
  const uint64_t cycle = std::max<uint64_t>(cycle_of(f.chase), 1);
  o.misses = static_cast<size_t>(r.slow);
  o.miss_fraction = double(o.misses) / double(o.loads);
  o.significant = significant(o.misses, o.loads);
  // The kept steps say where the slow loads were. A capacity miss comes back at the same
  // place of the cycle in the next pass, a stray one does not; and a footprint past the
  // capacity misses in every pass (at least one line of an overflowing set must go),
  // whereas a burst of slow loads (a transient on the GPU) falls into one. With every slow
  // step kept, a count counts only when it recurs or when every pass has its share.
  const uint64_t passes = o.loads / cycle;
  const bool complete = r.slow == r.slow_steps.size();
  if (f.recurring_only && passes >= 2 && !r.slow_steps.empty()) {
    std::map<uint64_t, int> times;
    std::vector<size_t> per_pass(static_cast<size_t>(passes) + 1, 0);
    for (uint32_t step : r.slow_steps) {
      ++times[step % cycle];
      ++per_pass[std::min<size_t>(step / cycle, static_cast<size_t>(passes))];
    }
    size_t recurring = 0;
    for (auto [pos, n] : times)
      if (n >= 2) recurring += static_cast<size_t>(n);
    bool every_pass = true;
    for (uint64_t k = 0; k < passes; ++k) every_pass = every_pass && per_pass[static_cast<size_t>(k)] > 0;
    const bool by_count = o.significant && (every_pass || !complete);
    o.significant = by_count || significant_recurring(recurring, cycle, passes);
  }
  if (f.miss_pattern) {
    // Complete up to the last kept slow load (or to the end when every one was kept).
    const size_t covered = complete ? o.loads : size_t(r.slow_steps.back()) + 1;
    o.miss.assign(covered, 0);
    for (uint32_t step : r.slow_steps) o.miss[step] = 1;
    // The warm-up is whole cycles, so counting starts at the start element again.
    o.index = recipes::walk(f.chase.array, f.chase.start, covered);
  }
}

FootprintResult Measurer::run_random(uint64_t footprint, uint64_t stride, uint64_t warmup, uint64_t loads,
                                     uint64_t seed, const Rate& rate, int sms) {
  if (ctx_.cancelled()) throw Error("cancelled");
  const ChaseArray array = ChaseArray::stride(footprint, stride);
  // A shared cache's loads stay on one SM: others would fill the same cache.
  const uint64_t copies = target_.shared_between_sms ? 1 : uint64_t(std::clamp(sms, 1, std::max(1, parallel_footprints())));
  std::vector<Job> jobs;
  for (uint64_t k = 0; k < copies; ++k) {
    Job j;
    j.space = target_.space;
    j.pattern = MT_PATTERN_RANDOM;
    j.array = &array;
    j.random_stride_bytes = stride;
    j.seed = seed + 7919 * k;
    j.warmup_steps = warmup;
    j.steps = loads / copies + (k < loads % copies ? 1 : 0);
    j.rate = rate;
    j.shared_carveout_percent = target_.shared_carveout_percent;
    j.sm = pinned_sm();
    j.record = MT_RECORD_COUNTS;
    j.slow_cycles = static_cast<uint32_t>(slow_threshold_);
    j.slow_max_cycles = static_cast<uint32_t>(ceiling_);
    j.keep_steps = 0;
    jobs.push_back(j);
  }
  const std::vector<JobResult> rs = ctx_.backend().run(jobs);
  ++launches_;
  loads_chased_ += copies * warmup + loads;
  FootprintResult o;
  uint64_t outliers = 0, span = 0, pump = 0, cycles = 0;
  for (const JobResult& r : rs) {
    outliers += r.outliers;
    o.misses += static_cast<size_t>(r.slow);
    span = std::max<uint64_t>(span, r.span_cycles);
    pump += r.pump_loads;
    cycles += r.cycles;
  }
  o.loads = static_cast<size_t>(loads - std::min<uint64_t>(outliers, loads));
  o.miss_fraction = o.loads ? double(o.misses) / double(o.loads) : 0;
  o.significant = significant(o.misses, o.loads);
  // Time per load of all streams (and the pump) together, on one SM: the span where the
  // backend reports it, else each stream's timed cycles and gap.
  const double per_sm_loads = double(loads) / double(copies);
  o.cycles_per_load = span ? double(span) / std::max(per_sm_loads + double(pump) / double(copies), 1.0)
                           : (double(cycles) / double(std::max<size_t>(o.loads, 1)) + rate.gap_cycles) /
                                 double(std::max<uint32_t>(rate.streams, 1));
  return o;
}

std::vector<FootprintResult> Measurer::run_recorded(const std::vector<Footprint>& footprints) {
  std::vector<FootprintResult> out(footprints.size());
  auto make = [this](const Footprint& f) {
    const uint64_t cycle = std::max<uint64_t>(cycle_of(f.chase), 1);
    return job_for(f.chase, f.warmup_passes, std::min<uint64_t>(f.record_steps ? f.record_steps : cycle, target_.max_record_steps));
  };
  run_batched(footprints, make, [&](size_t i, const Job&, JobResult& r) {
    out[i].index = std::move(r.index);
    out[i].latency = std::move(r.latency);
  });
  for (size_t i = 0; i < out.size(); ++i) judge_recorded(footprints[i], out[i]);
  return out;
}

void Measurer::judge_recorded(const Footprint& f, FootprintResult& o) const {
  o.loads = o.latency.size();
  o.miss.assign(o.latency.size(), 0);
  for (size_t i = 0; i < o.latency.size(); ++i) {
    if (o.latency[i] > slow_threshold_ && o.latency[i] <= ceiling_) {
      o.miss[i] = 1;
      ++o.misses;
    }
  }
  o.miss_fraction = o.latency.empty() ? 0 : double(o.misses) / double(o.latency.size());
  // With two or more recorded passes a capacity miss comes back at the same element; a
  // stray slow load (an interrupt, a recording-pass boundary on the GPU) does not.
  const uint64_t cycle = std::max<uint64_t>(cycle_of(f.chase), 1);
  size_t counted = o.misses;
  if (f.recurring_only && o.latency.size() >= 2 * cycle && !o.index.empty()) {
    std::map<uint32_t, int> times;
    for (size_t i = 0; i < o.latency.size(); ++i)
      if (o.miss[i]) ++times[o.index[i]];
    counted = 0;
    for (auto [idx, n] : times)
      if (n >= 2) counted += n;
  }
  o.significant = significant(counted, o.latency.size());
}

}  // namespace memtopo::cache
