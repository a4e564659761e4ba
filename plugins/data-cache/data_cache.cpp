// data-cache: the L1 data cache (global loads through ld.global.ca) and the L2 (through
// ld.global.cg). The measuring steps are the SDK's cache procedure; this file only says
// which path reaches which cache, and adds the two L1/L2-specific probes.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/cache_procedure.hpp>
#include <memtopo/probe.hpp>
#include <memtopo/recipes.hpp>

namespace {
namespace an = memtopo::analysis;
using memtopo::Context;
using memtopo::Probe;

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

memtopo::cache::Target l1d_target(const Context&) {
  memtopo::cache::Target t;
  t.space = MT_SPACE_GLOBAL_CA;
  t.element = "l1d";
  t.shared_carveout_percent = 0;  // largest L1: shared memory and L1 share one array
  t.search_limit_bytes = 4 * MiB;
  return t;
}

memtopo::cache::Target l2_target(const Context& ctx) {
  memtopo::cache::Target t;
  t.space = MT_SPACE_GLOBAL_CG;
  t.element = "l2";
  t.shared_between_sms = true;
  // The reference spans many lines of every L2 partition, so near and far hits are both hits.
  t.reference_bytes = 512 * KiB;
  t.search_start_bytes = 1 * MiB;
  const uint64_t api = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : 64 * MiB;
  t.search_limit_bytes = std::min<uint64_t>(4 * api, 512 * MiB);
  // Points that need latencies (not counts) record one pass of samples: on the GPU every
  // further pass repeats a warm-up over the whole footprint, which for tens of MiB costs seconds.
  t.max_record_steps = 512;
  // About 12 s of H100 time at L2 latencies; the 8 MiB simulated L2 needs two thirds of it.
  t.geometry_load_budget = uint64_t(32) << 20;
  return t;
}

// Whether global loads are cached in L1 at all (thesis 4.2.1): a small warm footprint read
// through .ca against the same through .cg.
Probe l1d_present() {
  return Probe("data-cache/l1d-present")
      .summary("L1 data cache: are global loads (ld.global.ca) cached in L1?")
      .provides({"l1d.present"})
      .run([](Context& ctx) {
        const auto chase = memtopo::recipes::constant_stride(4 * KiB, 32);
        std::vector<memtopo::ChaseSpec> specs(2);
        for (int i = 0; i < 2; ++i) {
          specs[i].space = i == 0 ? MT_SPACE_GLOBAL_CA : MT_SPACE_GLOBAL_CG;
          specs[i].array = &chase.array;
          specs[i].warmup_steps = 2 * chase.cycle_length();
          specs[i].steps = 1024;
          specs[i].shared_carveout_percent = 0;
        }
        const auto r = ctx.backend().fine_chase(specs);
        const auto ca = an::to_doubles(r[0].latency), cg = an::to_doubles(r[1].latency);
        const auto ks = an::ks_two_sample(ca, cg);
        const double mca = an::median(ca), mcg = an::median(cg);
        const bool present = ks.p_value < 0.01 && mca < 0.9 * mcg;
        ctx.result("l1d.present", present,
                   {ks.confidence, memtopo::Bound::Exact,
                    "median .ca " + std::to_string(mca) + " vs .cg " + std::to_string(mcg) + " cycles, KS p=" +
                        std::to_string(ks.p_value)});
      });
}

// Every latency level a footprint sweep shows beyond L1 (near and far L2 partitions, DRAM),
// with the footprint where each begins: plain P-chase averages over random line orders,
// eight footprints per octave. A level is a plateau of the averages; it begins at the first
// footprint past the previous plateau whose average has gone 1/8 of the way to it. The
// H100's near plateau ends in a creep (2-5 % of loads already far) where the first footprint
// past it moved between three grid points from run to run; 1/8 of the way lies on the steep
// part of the ramp.
Probe l2_levels() {
  return Probe("data-cache/l2-levels")
      .summary("L2: latency levels of a footprint sweep beyond L1, and the API's L2 size")
      .provides({"l2.api_size_bytes", "l2.level_latencies_cycles", "l2.level_start_bytes"})
      .uses({"l1d.size_bytes", "l2.line_bytes"})
      .run([](Context& ctx) {
        const uint64_t api = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : 0;
        if (api) ctx.result("l2.api_size_bytes", int64_t(api));
        const uint64_t line = uint64_t(ctx.try_input<int64_t>("l2.line_bytes").value_or(128));
        const uint64_t lo = std::max<uint64_t>(2 * uint64_t(ctx.try_input<int64_t>("l1d.size_bytes").value_or(0)), 64 * KiB);
        const uint64_t hi = std::min<uint64_t>(std::max<uint64_t>(2 * api, 8 * MiB), 160 * MiB);
        std::vector<uint64_t> sizes;
        for (double f = double(lo); f <= double(hi); f *= 1.0905077327) sizes.push_back(uint64_t(f) / line * line);
        std::vector<double> lat;
        for (size_t i = 0; i < sizes.size(); ++i) {
          ctx.progress(double(i) / double(sizes.size()), "L2 levels: " + std::to_string(sizes[i] >> 10) + " KiB");
          const auto chase = memtopo::recipes::random_lines(sizes[i], line);
          memtopo::ChaseSpec spec;
          spec.space = MT_SPACE_GLOBAL_CG;
          spec.array = &chase.array;
          spec.start = chase.start;
          spec.warmup_steps = chase.cycle_length();
          spec.steps = std::min<uint64_t>(std::max<uint64_t>(chase.cycle_length(), 4096), 65536);
          lat.push_back(ctx.backend().average_chase(spec));
        }
        std::vector<double> row;
        for (size_t i = 0; i < sizes.size(); ++i) {
          row.push_back(double(sizes[i]));
          row.push_back(lat[i]);
        }
        ctx.raw("l2-levels", {"footprint_bytes", "average_cycles"}, row);
        const auto pl = an::plateaus(lat, 0.04, 3);
        if (pl.empty()) throw memtopo::Error("no latency plateau in the L2 footprint sweep (see the raw l2-levels series)");
        std::vector<double> levels;
        std::vector<int64_t> starts;
        for (const auto& p : pl) levels.push_back(p.median);
        for (size_t i : an::level_starts(lat, pl, 0.125)) starts.push_back(int64_t(sizes[i]));  // the first: the sweep's
        const memtopo::ResultInfo info{0.9, memtopo::Bound::Exact,
                                       "plain P-chase averages (.cg, random line order, raw cycles), 8 footprints per "
                                       "octave; levels are plateaus within 4 %; a level starts at the first footprint "
                                       "past the previous plateau whose average has gone 1/8 of the way to it"};
        ctx.result("l2.level_latencies_cycles", levels, info);
        ctx.result("l2.level_start_bytes", starts, info);
      });
}

// L2 latency per partition: fine-grained loads over a footprint spread across every
// partition show one hit level per distance (near, far); the lowest is latency_cycles.
Probe l2_latency() {
  return Probe("data-cache/l2-latency")
      .summary("L2: hit latency (near and far partitions) and miss penalty")
      .provides({"l2.latency_cycles", "l2.far_latency_cycles", "l2.partitions", "l2.miss_penalty_cycles"})
      // The first miss, not the size: the size by occupancy may use the partitions found here.
      .requires_keys({"l2.first_miss_bytes"})
      .uses({"l2.line_bytes", "l2.level_latencies_cycles", "l2.level_start_bytes", "l2.api_size_bytes"})
      .run([](Context& ctx) {
        const uint64_t line = uint64_t(ctx.try_input<int64_t>("l2.line_bytes").value_or(128));
        const uint64_t size = uint64_t(ctx.input<int64_t>("l2.first_miss_bytes"));
        const double overhead = ctx.backend().timing_overhead();
        // `arrays` > 1: as many chases of one array on as many SMs at once, their loads
        // pooled. An L2 hit takes longer from an SM far from the line's slice, and lines land
        // on slices by physical address: one array on one SM gave hit levels 259-270 cycles
        // across runs on the H100; eight average over SMs. The SMs are always 0, 1, ...: eight
        // SMs that happened to be free gave 267-276 cycles in three runs on one H100.
        auto levels_of = [&](uint64_t footprint, uint64_t warm_passes, size_t arrays) {
          const auto chase = footprint <= 64 * MiB ? memtopo::recipes::random_lines(footprint, line)
                                                   : memtopo::recipes::constant_stride(footprint, line);
          memtopo::ChaseSpec spec;
          spec.space = MT_SPACE_GLOBAL_CG;
          spec.array = &chase.array;
          spec.start = chase.start;
          spec.warmup_steps = warm_passes * chase.cycle_length();
          spec.steps = std::min<uint64_t>(chase.cycle_length(), 4096);
          std::vector<memtopo::ChaseSpec> specs(arrays, spec);
          for (size_t i = 0; i < arrays; ++i) specs[i].sm = int32_t(i);
          std::vector<uint32_t> pooled;
          for (const auto& r : ctx.backend().fine_chase(specs))
            pooled.insert(pooled.end(), r.latency.begin(), r.latency.end());
          const an::Levels lv = an::find_levels(pooled);
          std::vector<an::Level> big;  // levels holding at least 10 % of the loads
          for (const auto& l : lv.levels)
            if (l.count * 10 >= pooled.size()) big.push_back(l);
          return big;
        };
        // Eight hit footprints together stay within half the first miss.
        const uint64_t hit_foot = std::max<uint64_t>(std::min<uint64_t>(512 * KiB, size / 16) / line * line, line);
        const size_t hit_arrays = size_t(std::clamp<int64_t>(ctx.device().sm_count, 1, 8));
        const auto hits = levels_of(hit_foot, 2, hit_arrays);
        if (hits.empty()) throw memtopo::Error("no latency level in the L2 hit chase");
        const memtopo::ResultInfo info{0.95, memtopo::Bound::Exact,
                                       "fine-grained .cg loads over warm footprints spread over the partitions (" +
                                           std::to_string(hit_arrays) + " arrays on as many SMs, pooled); "
                                       "level centre minus the timing overhead (" + std::to_string(overhead) + " cycles)"};
        ctx.result("l2.latency_cycles", hits.front().centre - overhead, info);
        // An L2 that copies what an SM reads into the partition near it (the H100) shows one
        // hit level in a warm footprint; the far partition appears in the footprint sweep, as
        // an on-chip plateau between the near level and memory (one starting below the API's
        // L2 size). Lines spread over the partitions (the simulator) show both levels here.
        const auto levels = ctx.try_input<std::vector<double>>("l2.level_latencies_cycles");
        const auto starts = ctx.try_input<std::vector<int64_t>>("l2.level_start_bytes");
        const auto api = ctx.try_input<int64_t>("l2.api_size_bytes");
        size_t on_chip = 0;
        if (levels && starts && api && starts->size() == levels->size() && levels->size() >= 3)
          for (int64_t b : *starts) on_chip += b < *api ? 1 : 0;
        if (hits.size() == 1 && on_chip >= 2 && on_chip < levels->size()) {
          ctx.result("l2.partitions", int64_t(on_chip),
                     {0.7, memtopo::Bound::Exact,
                      "one hit level in warm footprints (lines copied near the SM); on-chip plateaus of the "
                      "footprint sweep below the API's L2 size"});
          ctx.result("l2.far_latency_cycles", (*levels)[on_chip - 1],
                     {0.7, memtopo::Bound::Exact,
                      "the footprint sweep's last on-chip plateau, from " + std::to_string((*starts)[on_chip - 1]) +
                          " B (plain P-chase average, raw cycles)"});
        } else {
          ctx.result("l2.partitions", int64_t(hits.size()),
                     {0.8, memtopo::Bound::Exact, "distinct L2 hit latency levels in the pooled loads"});
          if (hits.size() > 1) ctx.result("l2.far_latency_cycles", hits.back().centre - overhead, info);
        }
        // Misses: every line new, a footprint four times the first miss (cold, no warm-up pass).
        const auto miss = levels_of(std::min<uint64_t>(4 * size, 512 * MiB), 0, 1);
        if (!miss.empty() && miss.front().centre > hits.back().centre)
          ctx.result("l2.miss_penalty_cycles", miss.front().centre - hits.front().centre,
                     {0.9, memtopo::Bound::Exact, "lowest miss level minus the near hit level (fine-grained, raw)"});
      });
}

// What the occupancy may confirm: the API's L2 size, where an SM's lines spread over every
// partition (the simulator), or its even share per partition, where an SM fills the one near
// it (the H100: 50 MiB, 25 MiB per SM).
std::vector<memtopo::cache::SizeCandidate> l2_size_candidates(const Context& ctx) {
  std::vector<memtopo::cache::SizeCandidate> c;
  const auto api = ctx.try_input<int64_t>("l2.api_size_bytes");
  if (!api || *api <= 0) return c;
  c.push_back({*api, "the API's L2 size"});
  const auto parts = ctx.try_input<int64_t>("l2.partitions");
  if (parts && *parts > 1 && *api % *parts == 0)
    c.push_back({*api / *parts, "the API's L2 size over the " + std::to_string(*parts) + " partitions"});
  return c;
}

std::vector<Probe> all_probes() {
  std::vector<Probe> probes{l1d_present(), l2_levels(), l2_latency()};
  for (auto& p : memtopo::cache::element_probes({"data-cache", "l1d", "L1 data cache", l1d_target,
                                                  {"l1d.present"}, {}}))
    probes.push_back(std::move(p));
  memtopo::cache::ElementSpec l2{"data-cache", "l2", "L2 cache", l2_target, {}, {}, false, true};
  l2.size_candidates = l2_size_candidates;
  l2.candidate_uses = {"l2.api_size_bytes", "l2.partitions"};
  for (auto& p : memtopo::cache::element_probes(l2)) probes.push_back(std::move(p));
  return probes;
}

}  // namespace

MEMTOPO_PLUGIN("data-cache", "1.0.0", all_probes())
