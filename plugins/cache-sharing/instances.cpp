// cache-sharing/instances: how many instances of the L1, texture and read-only caches one SM
// has, and which warp uses which (the thesis' warp sweep). In one block, one launch: warp a's
// lane 0 reads a few lines, warp b's lane 0 reads twice the cache, and warp a re-reads its
// lines, timed. Warp b evicted them when both use one instance. docs/cache-sharing.md.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>
#include <memtopo/recipes.hpp>

#include "sm_groups.hpp"

namespace {

namespace an = memtopo::analysis;

constexpr int64_t kWarps = 8;

struct Instance {
  const memtopo::Context& ctx;
  mt_space space;
  memtopo::recipes::Chase small, fill;
  uint64_t small_lines = 0, fill_lines = 0;
  uint32_t warp_size = 32;

  memtopo::Job job(const memtopo::recipes::Chase& c, int64_t warp, uint32_t order, uint64_t steps, bool timed) const {
    memtopo::Job j;
    j.space = space;
    j.array = &c.array;
    j.sm = 0;
    j.block = 0;
    j.lane = uint32_t(warp) * warp_size;
    j.order = order;
    j.steps = steps;
    j.timed = timed;
    j.want_index = false;
    return j;
  }
  // Median of warp a's re-read after warp b's fill (b < 0: no fill).
  double reread(int64_t a, int64_t b) const {
    std::vector<memtopo::Job> jobs{job(small, a, 1, 2 * small_lines, false)};
    if (b >= 0) jobs.push_back(job(fill, b, 2, 2 * fill_lines, false));
    jobs.push_back(job(small, a, uint32_t(jobs.size() + 1), small_lines, true));
    return an::median(an::to_doubles(ctx.backend().run(jobs).back().latency));
  }
};

void measure_element(memtopo::Context& ctx, const std::string& e, mt_space space, std::vector<double>& rows) {
  const auto size = ctx.try_input<int64_t>(e + ".size_bytes");
  if (!size || *size <= 0) throw memtopo::Skip("no " + e + ".size_bytes");
  const uint64_t line = uint64_t(ctx.try_input<int64_t>(e + ".line_bytes").value_or(128));
  const uint64_t small = std::max<uint64_t>(std::min<uint64_t>(uint64_t(*size) / 4, 16384) / line * line, 4 * line);
  Instance in{ctx, space, memtopo::recipes::constant_stride(small, line),
              memtopo::recipes::constant_stride(2 * uint64_t(*size) / 32 * 32, 32)};
  in.small_lines = small / line;
  in.fill_lines = in.fill.footprint_bytes / 32;
  in.warp_size = uint32_t(std::max<int64_t>(ctx.device().warp_size, 1));
  const double hit = in.reread(0, -1), evicted = in.reread(0, 0);
  if (!(evicted > 1.3 * hit))
    throw memtopo::NotDeterminable(e + ": warp 0's lines after its own fill (" + std::to_string(int(evicted + 0.5)) +
                                   " cycles) cost no more than a hit (" + std::to_string(int(hit + 0.5)) + ")");
  const double threshold = 0.5 * (hit + evicted);
  const auto groups = cache_sharing::group_sms(kWarps, [&](int64_t a, int64_t b) {
    const double m = in.reread(a, b);
    rows.insert(rows.end(), {double(space), double(a), double(b), m, hit, evicted});
    return m > threshold;
  });
  const auto of = cache_sharing::group_of_sm(groups, kWarps);
  const bool every = int64_t(groups.size()) == kWarps;
  const memtopo::ResultInfo info{0.9, every ? memtopo::Bound::AtLeast : memtopo::Bound::Exact,
                                 "warp b's fill of " + std::to_string(2 * *size) + " B evicted warp a's " +
                                     std::to_string(small) + " B (re-read above " + std::to_string(int(threshold + 0.5)) +
                                     " cycles) for the warps of one instance, warps 0 .. " + std::to_string(kWarps - 1) +
                                     (every ? "; each warp had its own: there may be more" : "")};
  ctx.result(e + ".instances_per_sm", int64_t(groups.size()), info);
  ctx.result(e + ".instance_of_warp", of, info);
}

void measure_instances(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  std::vector<double> rows;
  measure_element(ctx, "l1d", MT_SPACE_GLOBAL_CA, rows);
  measure_element(ctx, "texture", MT_SPACE_TEXTURE, rows);
  measure_element(ctx, "readonly", MT_SPACE_READONLY, rows);
  ctx.raw("pairs", {"space", "warp_a", "warp_b", "reread_median", "hit_median", "evicted_median"}, rows);
}

}  // namespace

namespace cache_sharing {

memtopo::Probe instances_probe() {
  memtopo::Probe p("cache-sharing/instances");
  p.summary("Instances of the L1, texture and read-only caches per SM and the warps of each (warp sweep)")
      .provides({"l1d.instances_per_sm", "l1d.instance_of_warp", "texture.instances_per_sm", "texture.instance_of_warp",
                 "readonly.instances_per_sm", "readonly.instance_of_warp"})
      .requires_keys({"l1d.size_bytes", "texture.size_bytes", "readonly.size_bytes"})
      .uses({"l1d.line_bytes", "texture.line_bytes", "readonly.line_bytes"});
  for (const char* e : {"l1d", "texture", "readonly"})
    p.key(std::string(e) + ".instances_per_sm", MT_VALUE_INT, "", "instances of the cache one SM has (its warps use them)")
        .key(std::string(e) + ".instance_of_warp", MT_VALUE_INT_ARRAY, "", "the instance warps 0 .. 7 of a block use")
        .replays(std::string(e) + ".instances_per_sm", std::string("sim.") + e + ".partitions_per_sm")
        .not_replayed({std::string(e) + ".instance_of_warp"});
  return p.budget_seconds(60).run(measure_instances);
}

}  // namespace cache_sharing
