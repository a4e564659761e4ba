// The descriptors of data-cache's eviction-set probes (eviction_sets.cu measures).
#include "eviction_sets.hpp"

#include <algorithm>

namespace data_cache {
namespace {

constexpr const char* kPolicyHelp =
    "replacement within one set of the eviction sets: keeps_reused, lru, fifo, random or non_uniform (docs/cache-probes.md)";
constexpr const char* kVictimsHelp =
    "per fill position of a set, the share of trials whose new line evicted it after the first was used again";

// The options both probes read, with each cache's defaults.
memtopo::Probe& common_options(memtopo::Probe& p, const char* targets, const char* buffer_bytes,
                               const char* max_tests) {
  return p.option("targets", MT_VALUE_INT, targets, "target lines at most, one minimal eviction set each")
      .range("0", "1024")
      .option("pool_factor", MT_VALUE_FLOAT, "3", "candidates per target, in units of the cache's lines")
      .range("1", "16")
      .option("buffer_bytes", MT_VALUE_INT, buffer_bytes, "the buffer the lines are drawn from (its address bits are searched; 0: 32 times the cache)")
      .range("0", "4294967296")
      .option("passes", MT_VALUE_INT, "4",
              "passes over a candidate set per test (x is loaded after the first; with fewer the cache may keep x)")
      .range("2", "16")
      .option("trials", MT_VALUE_INT, "3", "trials per test (majority)")
      .range("1", "15")
      .option("max_tests", MT_VALUE_INT, max_tests,
              "tests per target before its reduction stops (docs/cache-probes.md, \"Eviction sets\")")
      .range("1", "1000000")
      .option("max_pool_loads", MT_VALUE_FLOAT, "400",
              "lines loaded per target, in pools, before its reduction stops (more ways need more: docs/cache-probes.md)")
      .range("1", "100000");
}

}  // namespace

memtopo::Probe l1d_eviction_sets() {
  memtopo::Probe p("data-cache/l1d-eviction-sets");
  p.summary("L1 ways from minimal eviction sets; the set index as XOR parities of address bits")
      .provides({"l1d.eviction_set_ways", "l1d.set_index_parities", "l1d.set_hash", "l1d.eviction_set_policy",
                 "l1d.eviction_set_victim_fractions"})
      .key("l1d.eviction_set_ways", MT_VALUE_INT, "", "lines of most minimal eviction sets: the ways of a set")
      .key("l1d.eviction_set_policy", MT_VALUE_STRING, "", kPolicyHelp)
      .key("l1d.eviction_set_victim_fractions", MT_VALUE_FLOAT_ARRAY, "", kVictimsHelp)
      .key("l1d.set_index_parities", MT_VALUE_STRING_ARRAY, "",
           "XOR parities of address bits (\"7^12\") equal within every eviction set found: the linear part of the index")
      .key("l1d.set_hash", MT_VALUE_STRING_ARRAY, "",
           "the set index, one entry per index bit, each an XOR of address bits (\"7^12\"), tested on predictions")
      .requires_keys({"l1d.size_bytes", "l1d.line_bytes"})
      // Rounds of targets, each reduction a few hundred tests: seconds on a GPU or the simulated
      // GPU (its budget also ranks it among the probes that run at once there: docs/host.md).
      .budget_seconds(60);
  common_options(p, "32", "16777216", "400")
      .option("carveout_percent", MT_VALUE_INT, "0", "shared-memory carveout (0: the largest L1, as l1d.size_bytes)")
      .range("0", "100")
      .run([](memtopo::Context& ctx) {
        measure_eviction_sets(ctx, EvictionLevel{.element = "l1d",
                                                 .size_key = "l1d.size_bytes",
                                                 .total_bytes = 0,
                                                 .l2_path = false,
                                                 .block_threads = 32,
                                                 .one_target_at_a_time = false,
                                                 .threshold_permille = 500});
      });
  return p;
}

memtopo::Probe l2_eviction_sets() {
  memtopo::Probe p("data-cache/l2-eviction-sets");
  p.summary("L2 ways from minimal eviction sets of one SM's .cg loads; the sets over all partitions")
      .provides({"l2.eviction_set_ways", "l2.total_sets", "l2.set_index_parities", "l2.set_hash",
                 "l2.eviction_set_policy", "l2.eviction_set_victim_fractions"})
      .key("l2.eviction_set_ways", MT_VALUE_INT, "",
           "lines of most minimal eviction sets of one SM's .cg loads: the ways of a set of the partition it fills")
      .key("l2.eviction_set_policy", MT_VALUE_STRING, "", kPolicyHelp)
      .key("l2.eviction_set_victim_fractions", MT_VALUE_FLOAT_ARRAY, "", kVictimsHelp)
      .key("l2.total_sets", MT_VALUE_INT, "", "sets of all partitions: the device's L2 size (the API's) in lines over the ways")
      .key("l2.set_index_parities", MT_VALUE_STRING_ARRAY, "",
           "XOR parities of virtual address bits (\"7^12\") equal within every eviction set found")
      .key("l2.set_hash", MT_VALUE_STRING_ARRAY, "",
           "the set index, one entry per index bit, each an XOR of address bits (\"7^12\"), tested on predictions")
      .requires_keys({"l2.size_bytes", "l2.line_bytes"})
      .budget_seconds(60)
      .opt_in();  // its reductions take seconds on a GPU of 50 MiB of L2
  // A target at a time (the L2 is shared), a block of 1024 threads loading S; a far hit counts
  // as a miss: the threshold lies 30 % of the way from a near hit to memory.
  common_options(p, "8", "0", "12000").run([](memtopo::Context& ctx) {
    if (ctx.option<int64_t>("targets") == 0)
      throw memtopo::Skip("targets = 0 under [probes.\"data-cache/l2-eviction-sets\"]: no eviction set is searched");
    measure_eviction_sets(ctx, EvictionLevel{.element = "l2",
                                             .size_key = "l2.size_bytes",
                                             .total_bytes = uint64_t(std::max<int64_t>(ctx.device().l2_bytes, 0)),
                                             .l2_path = true,
                                             .block_threads = 1024,
                                             .one_target_at_a_time = true,
                                             .threshold_permille = 300});
  });
  return p;
}

}  // namespace data_cache
