// data-cache: the L1 data cache (global loads through ld.global.ca) and the L2 (through
// ld.global.cg). The measuring steps are the SDK's cache procedure; this file says which
// path reaches which cache and whether L1 caches global loads; l2_probes.cpp adds the
// L2-specific probes.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/cache_procedure.hpp>
#include <memtopo/probe.hpp>
#include <memtopo/recipes.hpp>

#include "eviction_sets.hpp"
#include "l2_probes.hpp"

namespace {
namespace an = memtopo::analysis;
using memtopo::Context;
using memtopo::Probe;

using memtopo::analysis::KiB;
using memtopo::analysis::MiB;

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
  const uint64_t api = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : 64 * MiB;
  // The reference spans many lines of every L2 partition, so near and far hits are both hits;
  // it and the search's start stay well inside an L2 smaller than a few MiB.
  t.reference_bytes = std::min<uint64_t>(512 * KiB, api / 8);
  t.search_start_bytes = std::min<uint64_t>(1 * MiB, api / 4);
  t.search_limit_bytes = std::min<uint64_t>(4 * api, 512 * MiB);
  // Footprints that need latencies (not counts) record one pass of samples: on the GPU every
  // further pass repeats a warm-up over the whole footprint, which for tens of MiB costs seconds.
  t.max_record_steps = 512;
  // About 1.3 s of H100 time with staggered streams (docs/cache-probes.md, step 5).
  t.geometry_load_budget = uint64_t(32) << 20;
  // Timed random loads per occupancy measurement: 2 Mi put the lines held of a 25 MiB L2
  // within about 0.05 % (one standard error: 100 of 205 k lines on an H100), enough to tell
  // the size candidates apart and the rates' lines held from each other (6 k lines apart), at
  // an eighth of the default's time (a second per measurement on a GPU).
  t.occupancy_loads = uint64_t(1) << 21;
  return t;
}

// Whether global loads are cached in L1 at all (thesis 4.2.1): a small warm footprint read
// through .ca against the same through .cg.
Probe l1d_present() {
  return Probe("data-cache/l1d-present")
      .roles({{"l1d.present", "cache.present@l1_cache"}})
      .summary("L1 data cache: are global loads (ld.global.ca) cached in L1?")
      .provides({"l1d.present"})
      .run([](Context& ctx) {
        const auto chase = memtopo::recipes::constant_stride(4 * KiB, 32);
        std::vector<memtopo::Job> jobs(2);
        for (int i = 0; i < 2; ++i) {
          jobs[i].space = i == 0 ? MT_SPACE_GLOBAL_CA : MT_SPACE_GLOBAL_CG;
          jobs[i].array = &chase.array;
          jobs[i].warmup_steps = 2 * chase.cycle_length();
          jobs[i].steps = 1024;
          jobs[i].shared_carveout_percent = 0;
        }
        const auto r = ctx.backend().run(jobs);
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

std::vector<Probe> all_probes() {
  std::vector<Probe> probes{l1d_present(), data_cache::l2_levels(), data_cache::l2_latency(),
                           data_cache::l1d_eviction_sets(), data_cache::l2_eviction_sets()};
  memtopo::cache::ElementSpec l1d{.plugin = "data-cache",
                                  .element = "l1d",
                                  .title = "L1 data cache",
                                  .target = l1d_target,
                                  .size_requires = {"l1d.present"}};
  l1d.carveout_option = true;  // the L1 shares its storage with shared memory
  // Its own worker, for the probes after it: after it in one process l2-size's buffer gets
  // other physical pages in each run, and the L2 sweep's footprints move with the pages
  // (docs/cache-probes.md, step 3, "Which pages").
  l1d.own_process_steps = {"geometry"};
  l1d.eviction_ways_key = "l1d.eviction_set_ways";  // data_cache::l1d_eviction_sets provides it
  l1d.subject = "l1_cache";
  l1d.eviction_policy_key = "l1d.eviction_set_policy";
  for (auto& p : memtopo::cache::element_probes(l1d)) probes.push_back(std::move(p));
  memtopo::cache::ElementSpec l2{.plugin = "data-cache",
                                 .element = "l2",
                                 .title = "L2 cache",
                                 .target = l2_target,
                                 .latency_probe = false,  // l2-latency measures it (near and far)
                                 .size_by_occupancy = true};
  l2.size_candidates = data_cache::l2_size_candidates;
  l2.candidate_uses = {"l2.api_size_bytes", "l2.partitions"};
  l2.eviction_ways_key = "l2.eviction_set_ways";  // data_cache::l2_eviction_sets provides it
  // Hashed homes spread a stride's lines over every partition: the scan would count one set of
  // all partitions' ways (docs/cache-probes.md, "L2: sets and ways").
  l2.strides_blind = [](const memtopo::Context& ctx) -> std::string {
    if (ctx.try_input<std::string>("l2.partition_interleave").value_or("") != "hashed") return "";
    return "the partitions' homes are hashed (l2.partition_interleave): lines a stride apart spread over every "
           "partition, so no stride singles out one set";
  };
  l2.geometry_uses = {"l2.partition_interleave", "l2.partitions", "l2.partition_granule_bytes"};
  l2.partitions_key = "l2.partitions";
  l2.home_granule_key = "l2.partition_granule_bytes";
  l2.subject = "l2_cache";
  l2.eviction_policy_key = "l2.eviction_set_policy";
  for (auto& p : memtopo::cache::element_probes(l2)) probes.push_back(std::move(p));
  return probes;
}

}  // namespace

MEMTOPO_PLUGIN("data-cache", "1.0.0", all_probes())
