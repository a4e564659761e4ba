// cache-sharing: which SMs share one cache instance. `constant-l15-groups` finds the SMs that
// share one constant L1.5: SM a reads a footprint that overflows the constant L1 but fits the
// L1.5, then SM b reads the same lines, timed, in the same launch (a sequence of two jobs). SM b
// hits in the L1.5 exactly when it shares a's. The groups are a second, independent GPC map
// where the L1.5 is one per GPC (compared with gpc.index_of_sm when hopper-dsmem ran).
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>
#include <memtopo/recipes.hpp>

#include "sm_groups.hpp"

namespace {

namespace an = memtopo::analysis;

struct Pass {
  const memtopo::Context& ctx;
  memtopo::recipes::Chase chase;
  uint64_t lines = 0;

  bool timed_fill = false;

  // Median cycles of SM b's timed pass after SM a's passes (a < 0: SM b's own, in one job).
  double after(int64_t a, int64_t b) const {
    memtopo::Job fill;
    fill.space = MT_SPACE_CONSTANT;
    fill.array = &chase.array;
    fill.start = chase.start;
    fill.sm = int32_t(a);
    fill.block = 0;
    fill.order = 1;
    fill.timed = timed_fill;
    fill.steps = 2 * lines;
    memtopo::Job probe = fill;
    probe.sm = int32_t(b);
    probe.block = a == b ? 0 : 1;
    probe.order = 2;
    probe.timed = true;
    probe.steps = lines;
    probe.want_index = false;
    if (a < 0) {  // one job on SM b alone: its warm-up passes, then the timed one
      probe.order = 0;
      probe.block = -1;
      probe.warmup_steps = 2 * lines;
      return an::median(an::to_doubles(ctx.backend().run(probe).latency));
    }
    const std::vector<memtopo::JobResult> r = ctx.backend().run(std::vector<memtopo::Job>{fill, probe});
    return an::median(an::to_doubles(r.at(1).latency));
  }
};

void measure_groups(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  const int64_t sms = ctx.device().sm_count;
  if (sms < 2) throw memtopo::Skip("one SM: nothing to share");
  const uint64_t l1 = uint64_t(ctx.input<int64_t>("constant_l1.size_bytes"));
  // One load per L1.5 line (wider than the L1's on every GPU seen), so that each load of a cold
  // pass misses the L1.5.
  uint64_t line = uint64_t(std::max({ctx.try_input<int64_t>("constant_l1.line_bytes").value_or(64),
                                     ctx.try_input<int64_t>("constant_l15.line_bytes").value_or(0),
                                     ctx.try_input<int64_t>("constant_l15.fetch_granularity_bytes").value_or(256)}));
  if (ctx.option<int64_t>("stride_bytes") > 0) line = uint64_t(ctx.option<int64_t>("stride_bytes"));
  const uint64_t limit = ctx.device().constant_memory_bytes > 0 ? uint64_t(ctx.device().constant_memory_bytes) : 65536;
  // Four times the constant L1 (its loads miss there), at most half the constant memory (the
  // L1.5 holds at least that much).
  const uint64_t footprint = std::max<uint64_t>(std::min<uint64_t>(4 * l1, limit / 2) / line * line, 2 * line);
  Pass pass{ctx, memtopo::recipes::constant_stride(footprint, line), footprint / line};
  // The hit reference: SM 0 re-reading what it read. What a miss in the L1.5 costs depends on
  // where the lines come from (another L1.5, L2), so the other level comes from the data: SM
  // 0 against every other SM first. Their medians are near the hit or near one slower level.
  const double one_job = pass.after(-1, 0);
  pass.timed_fill = true;
  const double timed_fill = pass.after(0, 0);
  pass.timed_fill = false;
  const double hit = pass.after(0, 0);
  ctx.raw("references", {"sequence_same_sm", "sequence_same_sm_timed_fill", "one_job_warm", "stride_bytes",
                         "footprint_bytes"},
          {hit, timed_fill, one_job, double(line), double(footprint)});
  // The method needs the caches to keep what the first job of a sequence loaded: SM 0 re-reading
  // its own lines in the second job must cost what a re-read inside one job costs.
  if (!(hit < 1.2 * one_job))
    throw memtopo::NotDeterminable("SM 0 re-reading its own " + std::to_string(footprint) + " B in the second job of a "
                                   "sequence costs " + std::to_string(int(hit + 0.5)) + " cycles, a re-read within "
                                   "one job " + std::to_string(int(one_job + 0.5)) + ": the constant caches do not "
                                   "keep the first job's lines for the second here, so sharing cannot be seen");
  std::vector<double> rows, first(size_t(sms), hit);
  double slowest = hit;
  for (int64_t b = 1; b < sms; ++b) {
    first[size_t(b)] = pass.after(0, b);
    slowest = std::max(slowest, first[size_t(b)]);
  }
  const bool one_level = slowest < 1.3 * hit;  // every SM hits what SM 0 loaded
  // Between a hit and the fastest miss: a miss of the L1.5 costs what the level below it costs
  // that SM, and where the L2 has near and far partitions, SMs near the lines miss faster than
  // the rest (194 and 320 cycles against a 94-cycle hit: half way to the slowest took the near
  // misses for hits, and two groups for one).
  double fastest_miss = slowest;
  for (double t : first)
    if (t >= 1.3 * hit) fastest_miss = std::min(fastest_miss, t);
  const double threshold = 0.5 * (hit + fastest_miss);
  int64_t measured = sms - 1;
  const auto groups = cache_sharing::group_sms(
      sms,
      [&](int64_t a, int64_t b) {
        measured += a == 0 ? 0 : 1;
        const double m = a == 0 ? first[size_t(b)] : pass.after(a, b);
        rows.insert(rows.end(), {double(a), double(b), m});
        return one_level || m < threshold;
      },
      nullptr);
  ctx.raw("pairs", {"filling_sm", "timed_sm", "median_cycles"}, rows);
  std::vector<int64_t> sizes;
  for (const auto& g : groups) sizes.push_back(int64_t(g.size()));
  const std::vector<int64_t> of = cache_sharing::group_of_sm(groups, sms);
  std::string note = std::to_string(measured) + " pairs: SM b re-reads " + std::to_string(footprint) +
                     " B that SM a read; a hit costs " + std::to_string(int(hit + 0.5)) + " cycles" +
                     (one_level ? ", and every SM hit what SM 0 read"
                                : ", the fastest miss " + std::to_string(int(fastest_miss + 0.5)) + ", the slowest " +
                                      std::to_string(int(slowest + 0.5)) + ", shared below " +
                                      std::to_string(int(threshold + 0.5)));
  const memtopo::ResultInfo info{0.9, memtopo::Bound::Exact, note};
  ctx.result("constant_l15.sm_group_count", int64_t(groups.size()), info);
  ctx.result("constant_l15.group_sm_counts", sizes, info);
  ctx.result("constant_l15.group_of_sm", of, info);
}

memtopo::Probe groups_probe() {
  return memtopo::Probe("cache-sharing/constant-l15-groups")
      .roles({{"constant_l15.sm_group_count", "cache.group_count@constant_cache_l15"},
              {"constant_l15.group_sm_counts", "cache.group_sm_counts@constant_cache_l15"},
              {"constant_l15.group_of_sm", "cache.group_of_sm@constant_cache_l15"}})
      .summary("Which SMs share one constant L1.5: SM b re-times what SM a loaded, in one launch")
      .provides({"constant_l15.sm_group_count", "constant_l15.group_sm_counts", "constant_l15.group_of_sm"})
      .requires_keys({"constant_l1.size_bytes"})
      .uses({"constant_l1.line_bytes", "constant_l15.line_bytes", "constant_l15.fetch_granularity_bytes"})
      .key("constant_l15.sm_group_count", MT_VALUE_INT, "", "groups of SMs that share one constant L1.5",
           MT_KEY_HEADLINE)
      .key("constant_l15.group_sm_counts", MT_VALUE_INT_ARRAY, "", "SMs of each group, groups by their lowest SM",
           MT_KEY_CONFIGURATION)
      .key("constant_l15.group_of_sm", MT_VALUE_INT_ARRAY, "", "the group (index into group_sm_counts) of SM 0, 1, ...",
           MT_KEY_CONFIGURATION)
      .replays("constant_l15.group_of_sm", "sim.constant_l15.group_of_sm")
      .not_replayed({"constant_l15.sm_group_count", "constant_l15.group_sm_counts"})
      .option("stride_bytes", MT_VALUE_INT, "0", "bytes between loads (0: the widest constant line known, 256 B at least)")
      .range("0", "65536")
      .budget_seconds(120)
      .run(measure_groups);
}

}  // namespace

namespace cache_sharing {
memtopo::Probe storage_probe();
memtopo::Probe instances_probe();
memtopo::Probe l2_partitions_probe();
memtopo::Probe l2_far_copies_probe();
memtopo::Probe l2_slice_map_probe();
}  // namespace cache_sharing

MEMTOPO_PLUGIN("cache-sharing", "1.2.0", groups_probe(), cache_sharing::storage_probe(), cache_sharing::instances_probe(),
               cache_sharing::l2_partitions_probe(), cache_sharing::l2_far_copies_probe(), cache_sharing::l2_slice_map_probe())
