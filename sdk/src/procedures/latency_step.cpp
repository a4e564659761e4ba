// Latency: the hit latency as the load-to-use latency of a dependent load (a pointer chase,
// where each loaded value is the next address and nothing else lies between two loads), and
// the miss penalty as the next level's fine-grained latency minus the hit's.
#include <algorithm>
#include <cmath>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/steps.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;
namespace {

// Pointer chases of two lengths, each repeated: the difference of their low times (10th
// percentile) over the difference of their lengths is the time per load without what every
// chase pays once (the clock reads, the first pass through a cold instruction cache: about 66
// cycles on the H100, docs/results/log/h100.md); short chases and low times leave out those an
// interruption slowed.
constexpr uint64_t kShortChase = 128, kLongChase = 384;
constexpr int kPointerChaseRepeats = 16;
// At least 128 chases of each length in all: the spread of 16 from one SM (a shared cache)
// tells noise from none too loosely for analysis::chase_noise_excess.
size_t chase_repeats(size_t sms) { return std::max<size_t>(kPointerChaseRepeats, 128 / std::max<size_t>(sms, 1)); }

// Most SMs a per-SM cache's hit or miss chase runs on at once.
constexpr size_t kLatencySms = 8;

}  // namespace

double load_to_use_cycles(const Measurer& m, const recipes::Chase& chase, const std::vector<int32_t>& sms) {
  auto times = [&](uint64_t loads) {
    std::vector<Job> jobs;
    for (int32_t sm : sms) {
      Job j = m.job_for(chase, 2, loads);
      j.sm = sm;
      j.pattern = MT_PATTERN_POINTERS;
      j.record = MT_RECORD_TOTAL;
      jobs.push_back(j);
    }
    const size_t repeats = chase_repeats(sms.size());
    std::vector<double> t;
    for (size_t k = 0; k < repeats; ++k)
      for (const JobResult& r : m.ctx().backend().run(jobs)) t.push_back(double(r.cycles));
    return t;
  };
  const std::vector<double> short_times = times(kShortChase), long_times = times(kLongChase);
  const double between = double(kLongChase - kShortChase);
  const double per_load = (an::percentile(long_times, 10) - an::percentile(short_times, 10)) / between;
  // A positive noise term per load is in every chase; the reference's per-load samples of the
  // same hits show how much (their mean over their low end), where the chases carry it too.
  return per_load - an::chase_noise_excess(m.reference_samples(), m.ceiling(), short_times, long_times, between);
}

LatencyResult find_latency(Measurer& m, int64_t size_bytes, int64_t line_bytes) {
  const Target& t = m.target();
  LatencyResult res;
  const size_t sms = t.shared_between_sms ? 1 : std::min<size_t>(kLatencySms, size_t(m.parallel_footprints()));
  // Hit: one load per line, so that a cache in front with shorter lines (constant L1 before
  // L1.5) never serves a second word of a line. Lines of 8 bytes or more keep the chase's
  // 64-bit pointers apart.
  m.ctx().progress(0.2, t.element + " latency: hit");
  const uint64_t hit_stride = std::max<uint64_t>(line_bytes > 0 ? uint64_t(line_bytes) : 0, std::max<uint64_t>(t.stride_bytes, 8));
  const uint64_t hit_foot = std::max<uint64_t>(t.latency_bytes ? t.latency_bytes : t.reference_bytes, 4 * hit_stride);
  const auto ref = recipes::constant_stride(hit_foot, hit_stride);
  // Per-SM caches on SMs spread over the device, the same in every run: the next level's
  // latency depends on the SM's place (its distance from the L2 slices, its GPC's L1.5).
  const std::vector<int32_t> on = t.shared_between_sms ? std::vector<int32_t>(sms, m.pinned_sm()) : m.spread_sms(sms);
  const double hit = load_to_use_cycles(m, ref, on);
  res.latency_cycles = {true, hit, 0.99, Bound::Exact,
                        "load-to-use: time per load of pointer chases (each loaded value is the next address) over a "
                        "warm " + fmt_bytes(hit_foot) + " footprint, stride " + fmt_bytes(hit_stride) +
                            ": the low times (10th percentile) of chases of " + std::to_string(kLongChase) +
                            " and " + std::to_string(kShortChase) + " loads, their difference over " +
                            std::to_string(kLongChase - kShortChase) + " (" + std::to_string(chase_repeats(sms)) +
                            " chases of each on each of " + std::to_string(sms) + (sms == 1 ? " SM" : " SMs") +
                            "), less the noise the reference's single loads show (their mean over their 10th "
                            "percentile) where the chases' spread grows with their length"};
  // Miss penalty: fine-grained loads over a footprint well past the size, one load per line:
  // the median miss minus the median hit (the timing overhead cancels out).
  m.ctx().progress(0.6, t.element + " latency: miss penalty");
  const uint64_t b = line_bytes > 0 ? uint64_t(line_bytes) : t.stride_bytes;
  uint64_t foot = size_bytes > 0 ? 4 * uint64_t(size_bytes) : t.search_limit_bytes;
  if (t.max_footprint_bytes) foot = std::min(foot, t.max_footprint_bytes);
  foot = std::max<uint64_t>(foot / b * b, 4 * b);
  Footprint f;
  f.chase = foot <= (64ull << 20) ? recipes::random_lines(foot, b) : spaced_lines(foot / b, b);
  f.warmup_passes = 1;
  f.record_steps = std::min<uint64_t>(cycle_of(f.chase), 4096);
  // The next level's latency depends on where each line lands (L2 slices and partitions, by
  // physical address): one array's median moves by several percent from run to run on the
  // H100 (docs/results/log/h100.md). Eight arrays on eight SMs average over eight placements.
  // (Per-SM caches only: eight footprints of 4x a shared cache would not stay in the level
  // behind it; and only as many as half the device's L2 holds, or the misses go to DRAM.)
  size_t miss_sms = sms;
  if (const int64_t l2 = m.ctx().device().l2_bytes; !t.shared_between_sms && l2 > 0)
    miss_sms = std::clamp<size_t>(size_t(uint64_t(l2) / 2 / foot), 1, sms);
  if (!t.shared_between_sms) m.pin_footprints(m.spread_sms(miss_sms));
  const auto outs = m.run(std::vector<Footprint>(miss_sms, f));
  m.pin_footprints({});
  std::vector<double> hits, misses;
  for (const auto& o : outs)
    for (size_t i = 0; i < o.latency.size(); ++i) (o.miss[i] ? misses : hits).push_back(o.latency[i]);
  if (misses.size() < 8) {
    res.miss_penalty_cycles.note = "a footprint of " + fmt_bytes(foot) + " produced too few misses";
    return res;
  }
  const double penalty = an::median(misses) - m.hit_latency_raw();
  res.miss_penalty_cycles = {true, penalty, 0.95, Bound::Exact,
                             "median fine-grained miss latency at " + fmt_bytes(foot) + " (" + std::to_string(miss_sms) +
                                 (miss_sms == 1 ? " array" : " arrays on as many SMs") +
                                 ") minus the median hit latency (raw; the timing overhead cancels)"};
  return res;
}

}  // namespace memtopo::cache
