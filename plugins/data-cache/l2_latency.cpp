// data-cache/l2-latency: the L2's hit latency near and far, and the DRAM latency behind it,
// as load-to-use times of fine-grained .cg loads less their timing's cost (docs/data-cache.md).
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/recipes.hpp>

#include "l2_probes.hpp"

namespace data_cache {
namespace an = memtopo::analysis;
using memtopo::Context;
using memtopo::Probe;

namespace {

using memtopo::analysis::KiB;
using memtopo::analysis::MiB;

// Fine-grained .cg loads of `arrays` chases of one footprint on SMs 0, 1, ... pooled, and
// the same footprint's load-to-use time (a pointer chase on the same SMs). An L2 hit takes
// longer from an SM far from the line's slice, and lines land on slices by physical address,
// so one array on one SM moves from run to run; eight arrays on SMs 0-7 (always those, not
// whichever are free) average over SMs and placements (docs/results/log/h100.md).
struct Pooled {
  std::vector<uint32_t> raw;  // each array's first lap (at most 4096 loads), for the levels
  double mean = 0;            // of every fine-grained sample
  double load_to_use = 0;     // mean over the SMs of the pointer chase's cycles per load
};
// Loads of each array, fine-grained and chased alike (laps of a short cycle): the difference
// of the two means is the timing's cost only where both meet interruptions at the same rate,
// and fine-grained samples of one lap of a small L2's footprint (512 lines an array) met 5000
// cycles in 0.4 % of loads a few times more or less than the chase's 4096 (8 to 15 cycles of
// the cost; random devices 67, 74, 84). Equal counts leave about 2.5 cycles (one sigma). The
// levels come from each array's first lap alone: over eight laps the noise's tails filled the
// gap between a near and a far level (random device 8: one level of both).
constexpr uint64_t kLoadsPerArray = 4096;
Pooled pooled_chases(const Context& ctx, uint64_t footprint, uint64_t line, uint64_t warm_passes, size_t arrays,
                     bool with_load_to_use) {
  const auto chase = footprint <= 64 * MiB ? memtopo::recipes::random_lines(footprint, line)
                                           : memtopo::recipes::constant_stride(footprint, line);
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &chase.array;
  j.start = chase.start;
  j.warmup_steps = warm_passes * chase.cycle_length();
  j.steps = kLoadsPerArray;
  j.want_index = false;
  std::vector<memtopo::Job> jobs(arrays, j);
  for (size_t i = 0; i < arrays; ++i) jobs[i].sm = int32_t(i);
  Pooled p;
  const size_t lap = size_t(std::min<uint64_t>(chase.cycle_length(), kLoadsPerArray));
  double sum_samples = 0;
  size_t count = 0;
  for (const auto& r : ctx.backend().run(jobs)) {
    p.raw.insert(p.raw.end(), r.latency.begin(), r.latency.begin() + long(std::min(lap, r.latency.size())));
    for (uint32_t v : r.latency) sum_samples += v;
    count += r.latency.size();
  }
  p.mean = count ? sum_samples / double(count) : 0;
  if (!with_load_to_use) return p;
  for (auto& pj : jobs) {
    pj.pattern = MT_PATTERN_POINTERS;
    pj.record = MT_RECORD_TOTAL;
    pj.steps = kLoadsPerArray;
  }
  double sum = 0;
  for (const auto& r : ctx.backend().run(jobs)) sum += r.average_cycles;
  p.load_to_use = sum / double(arrays);
  return p;
}

// What a noise term adds to a level's centre (the median of its samples): one SM re-reading
// one line through .cg hits one L2 slice at one latency, so its samples spread only by noise
// or by the timing's own cost; where chases of that line spread more the more loads they hold
// (analysis::chase_noise_excess), it is noise, and the samples' median less their 10th
// percentile is what it adds. 0 otherwise (a GPU's).
double noise_in_centre(const Context& ctx, uint64_t line) {
  const auto one = memtopo::recipes::constant_stride(line, line);
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &one.array;
  j.start = one.start;
  j.warmup_steps = 16;
  j.steps = 2048;
  j.want_index = false;
  j.sm = 0;
  const std::vector<double> s = an::to_doubles(ctx.backend().run(std::vector<memtopo::Job>{j}).front().latency);
  if (s.empty()) return 0.0;
  auto windows = [&](uint64_t loads) {
    memtopo::Job c = j;
    c.pattern = MT_PATTERN_POINTERS;
    c.record = MT_RECORD_TOTAL;
    c.steps = loads;
    std::vector<double> t;
    for (int k = 0; k < 16; ++k) t.push_back(double(ctx.backend().run(std::vector<memtopo::Job>{c}).front().cycles));
    return t;
  };
  const double ceiling = 4 * an::median(s);
  if (an::chase_noise_excess(s, ceiling, windows(128), windows(384), 256) <= 0) return 0.0;
  std::vector<double> kept;
  for (double v : s)
    if (v <= ceiling) kept.push_back(v);
  return std::max(0.0, an::median(kept) - an::percentile(kept, 10));
}

// Latency levels holding at least 10 % of the loads.
std::vector<an::Level> big_levels(const std::vector<uint32_t>& samples) {
  std::vector<an::Level> big;
  for (const auto& l : an::find_levels(samples).levels)
    if (l.count * 10 >= samples.size()) big.push_back(l);
  return big;
}

// First reads of lines another SM read: SM 0 reads each of eight 64 KiB regions twice (the
// lines now in their homes, copies near SM 0), then SM t_i, spread over the SM numbers, reads
// region i once. A line homed in t_i's near partition answers near; one homed near SM 0
// answers from there, far, where t_i is near the other partition: with two partitions about
// half the readers see half their lines far. The first read of each region pays for the
// read's start and is left out.
struct FarReads {
  an::TwoModes modes;  // near and far; not found where every reader was near SM 0's partition
  size_t readers = 0, samples = 0;
};
FarReads far_first_reads(const Context& ctx, uint64_t line) {
  FarReads out;
  const uint64_t sms = uint64_t(std::max<int64_t>(ctx.device().sm_count, 0));
  if (!ctx.backend().has(MT_CAP_SEQUENCE) || sms < 2) return out;
  constexpr uint64_t kRegionBytes = 64 * KiB, kRegions = 8;
  const uint64_t regions = std::min<uint64_t>(kRegions, sms - 1), lines = kRegionBytes / line;
  const auto a = memtopo::ChaseArray::stride(regions * kRegionBytes, line);
  std::vector<memtopo::Job> jobs;
  memtopo::Job fill;
  fill.space = MT_SPACE_GLOBAL_CG;
  fill.array = &a;
  fill.warmup_steps = regions * lines;
  fill.steps = regions * lines;
  fill.sm = 0;
  fill.block = 0;
  fill.order = 1;
  fill.want_index = false;
  jobs.push_back(fill);
  for (uint64_t i = 0; i < regions; ++i) {
    memtopo::Job r = fill;
    r.start = uint32_t(i * kRegionBytes / 4);
    r.warmup_steps = 0;
    r.steps = lines;
    r.sm = int32_t(1 + i * (sms - 1) / regions);
    r.block = int32_t(1 + i);
    r.order = uint32_t(2 + i);
    jobs.push_back(r);
  }
  std::vector<uint32_t> pooled;
  const auto results = ctx.backend().run(jobs);
  for (size_t k = 1; k < results.size(); ++k)
    if (!results[k].latency.empty()) pooled.insert(pooled.end(), results[k].latency.begin() + 1, results[k].latency.end());
  std::vector<double> row, samples;
  for (size_t i = 0; i < pooled.size(); ++i) {
    samples.push_back(double(pooled[i]));
    row.insert(row.end(), {double(i), double(pooled[i])});
  }
  ctx.raw("far-first-reads", {"read", "cycles"}, row);
  out.readers = regions;
  out.samples = pooled.size();
  out.modes = an::two_modes(samples, 1.15, 0.02);
  return out;
}

// The far hit. Lines spread over the partitions by address (the simulator) show a hit level
// per distance in a warm footprint, the slowest of them far. An L2 that copies what an SM reads
// into the partition near it (the H100) shows one hit level there: its far hit shows only in
// the first read of a line from an SM on the other side (far_first_reads). (The footprint
// sweep's plateau between one and two partitions is no far hit: there the near partition loses
// the lines homed in it to the copies of far ones, so half the loads read DRAM and half the far
// partition; docs/cache-probes.md, "L2: latency per partition".) How many partitions there are
// is cache-sharing/l2-partitions' answer, from the groups of SMs near each. Returns the slowest
// hit level's centre (fine-grained, raw).
double report_far_hit(const Context& ctx, const std::vector<an::Level>& hits, double sample_cost,
                      const memtopo::ResultInfo& info, uint64_t line) {
  if (hits.size() > 1) {
    ctx.result("l2.far_latency_cycles", hits.back().centre - sample_cost, info);
    return hits.back().centre;
  }
  const FarReads far = far_first_reads(ctx, line);
  if (!far.modes.found()) {  // every reader near every line: one partition
    ctx.absent("l2.far_latency_cycles", "one hit level, and first reads from SMs spread over the SM numbers form one "
                                        "mode: every line is near every reader (one partition)");
    return hits.back().centre;
  }
  ctx.result("l2.far_latency_cycles", far.modes.high - sample_cost,
             {0.8, memtopo::Bound::Exact,
              "load-to-use: the slower mode of first reads of lines SM 0 read twice, by " + std::to_string(far.readers) +
                  " SMs spread over the SM numbers (fine-grained .cg, " + std::to_string(far.modes.high_count) +
                  " far of " + std::to_string(far.samples) + "; one hit level in warm footprints: lines copied "
                  "near the SM), minus the timing's own cost"});
  return far.modes.high;
}


// DRAM load-to-use: SM 0's fine-grained .cg loads, 33 lines apart (a new DRAM row each time,
// homes near and far alike), of lines the L2 does not hold. A chase's set-up writes the lines
// it visits, which leaves them in the L2; a second array of 3x the API's L2 (32 MiB to 512
// MiB), written whole from the host after them, evicts them. Levels above the slowest L2 hit
// are DRAM: one per partition where lines have homes (near and far). The timed loads span
// 17 MiB (128 B lines): a few pages, TLB hits on every GPU measured.
// The DRAM levels' centres (fine-grained, raw), the faster first; none where most loads hit.
std::vector<double> dram_levels(const Context& ctx, uint64_t line, double slowest_hit, double hit_margin,
                                uint64_t times_api, std::string& why_none) {
  const uint64_t api = uint64_t(std::max<int64_t>(ctx.device().l2_bytes, 0));
  constexpr uint64_t kTimed = 4096, kApart = 33;
  const auto timed = memtopo::ChaseArray::stride(kTimed * kApart * line + line, kApart * line);
  memtopo::ChaseArray evict;
  evict.next.assign(std::clamp<uint64_t>(times_api * api, 32 * MiB, 512 * MiB * (times_api / 3)) / 4, 0);
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &timed;
  j.steps = kTimed;
  j.sm = 0;
  j.want_index = false;
  memtopo::Job e = j;  // one load: the array is there to be written
  e.array = &evict;
  e.steps = 1;
  e.sm = ctx.device().sm_count > 1 ? 1 : -1;
  const std::vector<uint32_t> s = ctx.backend().run(std::vector<memtopo::Job>{j, e}).front().latency;
  std::vector<double> row, loads;  // the first load pays for the chase's start
  for (size_t i = 1; i < s.size(); ++i) {
    loads.push_back(double(s[i]));
    row.insert(row.end(), {double(i), double(s[i])});
  }
  ctx.raw("dram-loads", {"load", "cycles"}, row);
  std::vector<double> misses;  // the few loads of lines the L2 still held left out
  for (double v : loads)
    if (v > slowest_hit + hit_margin) misses.push_back(v);
  if (misses.size() * 2 < loads.size()) {
    why_none = "most loads of lines written over by " + std::to_string(evict.next.size() * 4 >> 20) +
               " MiB still hit the L2 (" + std::to_string(misses.size()) + " of " + std::to_string(loads.size()) +
               " slower than the slowest hit by " + std::to_string(int(hit_margin + 0.5)) + " cycles)";
    return {};
  }
  // Near and far homes a few tens of cycles apart lie within 15 % of DRAM's latency: two
  // modes also where they stand ten of their own spreads apart, each a tenth of the loads at
  // least (with four partitions the near home holds a quarter of the lines: a random device's
  // 18 % of loads 45 cycles under the rest were taken for one level at the far latency).
  const an::TwoModes m = an::two_modes_or_separated(misses, 1.15, 0.1, 0.1);
  if (m.found()) return {m.low, m.high};
  return {an::median(misses)};
}

// How much slower than the slowest hit a load must be to count as DRAM: four spreads of the
// widest hit level, within 3 % and 15 % of the slowest hit. A fixed 15 % left out every near
// DRAM load where it lies 12 % above the far hit (random devices 12, 21, 28: 470 against 425
// raw cycles), and the far DRAM loads alone were taken for the one DRAM level. The H200's DRAM
// latencies stayed within their spread with it (docs/results/h200.md).
double dram_margin(const std::vector<an::Level>& hits, double slowest_hit) {
  double spread = 0;
  for (const auto& l : hits) spread = std::max(spread, l.spread);
  return std::clamp(4 * spread, 0.03 * slowest_hit, 0.15 * slowest_hit);
}

}  // namespace

// L2 latency per partition: fine-grained loads over a footprint spread across every
// partition show one hit level per distance (near, far); the lowest is latency_cycles. A
// fine-grained sample is the load-to-use latency plus the cost of its own timing, which a
// pointer chase over the same footprint on the same SMs gives: the difference of the means.
Probe l2_latency() {
  return Probe("data-cache/l2-latency")
      .roles({{"l2.latency_cycles", "cache.latency_cycles@l2_cache"},
              {"l2.miss_penalty_cycles", "cache.miss_penalty_cycles@l2_cache"},
              {"l2.far_latency_cycles", "cache.far_latency_cycles@l2_cache"},
              {"dram.latency_cycles", "memory.latency_cycles@main"},
              {"dram.far_latency_cycles", "memory.far_latency_cycles@main"}})
      .summary("L2: hit latency (near and far partitions), miss penalty, and DRAM's latency behind it")
      .provides({"l2.latency_cycles", "l2.far_latency_cycles", "l2.miss_penalty_cycles", "dram.latency_cycles",
                 "dram.far_latency_cycles"})
      .requires_keys({"l2.first_miss_bytes"})
      .key("dram.latency_cycles", MT_VALUE_FLOAT, "cycles",
           "load-to-use of a DRAM read: near home, clean L2, TLB hit (the one DRAM latency)", MT_KEY_HEADLINE)
      .key("dram.far_latency_cycles", MT_VALUE_FLOAT, "cycles", "the same for a line homed in the far partition",
           MT_KEY_HEADLINE)
      .uses({"l2.line_bytes"})
      .invariant(MT_INVARIANT_LESS, "l1d.latency_cycles", "dram.latency_cycles",
                 "a load the L1 answers does not wait for memory")
      .run([](Context& ctx) {
        const uint64_t line = uint64_t(ctx.try_input<int64_t>("l2.line_bytes").value_or(128));
        const uint64_t size = uint64_t(ctx.input<int64_t>("l2.first_miss_bytes"));
        // Eight hit footprints together stay within half the first miss.
        const uint64_t hit_foot = std::max<uint64_t>(std::min<uint64_t>(512 * KiB, size / 16) / line * line, line);
        const size_t hit_arrays = size_t(std::clamp<int64_t>(ctx.device().sm_count, 1, 8));
        const Pooled hit = pooled_chases(ctx, hit_foot, line, 2, hit_arrays, true);
        const auto hits = big_levels(hit.raw);
        if (hits.empty()) throw memtopo::Error("no latency level in the L2 hit chase");
        // The timing's own cost, and what a noise term adds to a level's median beyond it.
        const double sample_cost = hit.mean - hit.load_to_use + noise_in_centre(ctx, line);
        const memtopo::ResultInfo info{
            0.95, memtopo::Bound::Exact,
            "load-to-use: level centre of fine-grained .cg loads over warm footprints spread over the partitions (" +
                std::to_string(hit_arrays) + " arrays on as many SMs, pooled) minus the timing's own cost (" +
                std::to_string(sample_cost) + " cycles: their mean minus a pointer chase's over the same footprints, "
                "plus the median over the 10th percentile of one line re-read, the noise in a level's median)"};
        ctx.result("l2.latency_cycles", hits.front().centre - sample_cost, info);
        const double slowest_hit = report_far_hit(ctx, hits, sample_cost, info, line);
        std::string why_none;
        const double margin = dram_margin(hits, slowest_hit);
        auto dram = dram_levels(ctx, line, slowest_hit, margin, 3, why_none);
        // Lines the writes left in the L2 (once in three runs on one H200): written over again
        // by twice as much before the key is given up.
        if (dram.empty()) {
          ctx.debug("DRAM loads: " + why_none + "; again after twice the writes");
          dram = dram_levels(ctx, line, slowest_hit, margin, 6, why_none);
        }
        if (dram.empty()) {
          for (const char* key : {"dram.latency_cycles", "dram.far_latency_cycles", "l2.miss_penalty_cycles"})
            ctx.absent(key, why_none);
          return;
        }
        const std::string how = "load-to-use: fine-grained .cg loads 33 lines apart on SM 0 of lines evicted by 3x (or "
                                "6x) the API's L2 written after them, minus the timing's own cost; ";
        ctx.result("dram.latency_cycles", dram.front() - sample_cost,
                   {0.9, memtopo::Bound::Exact,
                    how + (dram.size() > 1 ? std::string("the faster of two DRAM modes (lines homed in the partition near "
                                                             "the SM)")
                                           : std::string("one DRAM level"))});
        if (dram.size() > 1)
          ctx.result("dram.far_latency_cycles", dram.back() - sample_cost,
                     {0.9, memtopo::Bound::Exact, how + "the slower of two DRAM modes (lines homed in the far partition)"});
        else
          ctx.absent("dram.far_latency_cycles", "the DRAM loads form one level (no far partition's mode)");
        ctx.result("l2.miss_penalty_cycles", dram.front() - hits.front().centre,
                   {0.9, memtopo::Bound::Exact, "dram.latency_cycles minus l2.latency_cycles (near hit and miss)"});
      });
}


}  // namespace data_cache
