// cache-sharing/l2-partitions: which of two L2 partitions is near each SM, and the granule in
// which addresses alternate between them. For each SM t, one sequence over a region no one has
// read: SM 0 reads every line of it once, then SM t does. SM 0's first reads split into a near
// and a far level by the line's home partition. SM t then finds the lines homed near SM 0 near
// when it shares SM 0's near partition (a copy SM 0's reads left near it counts the same), and
// far when it does not. docs/cache-sharing.md.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>

#include "near_far.hpp"

namespace {

namespace an = memtopo::analysis;
using cache_sharing::near_far;
using cache_sharing::NearFar;

constexpr uint64_t kLine = 128;
constexpr uint64_t kRegionLines = 512;  // 64 KiB per SM

struct Reads {
  std::vector<uint32_t> reference, other;  // SM 0's first reads, then SM t's
};

Reads read_region(const memtopo::Context& ctx, const memtopo::ChaseArray& a, int32_t t) {
  auto job = [&](int32_t sm, uint32_t order) {
    memtopo::Job j;
    j.space = MT_SPACE_GLOBAL_CG;
    j.array = &a;
    j.start = uint32_t(uint64_t(t) * kRegionLines * kLine / 4);
    j.steps = kRegionLines;
    j.sm = sm;
    j.block = int32_t(order);
    j.order = order;
    j.want_index = false;
    return j;
  };
  const auto r = ctx.backend().run(std::vector<memtopo::Job>{job(0, 1), job(t, 2)});
  return {r[0].latency, r[1].latency};
}

// Per line but the first (which pays for the read's start): 1 when SM 0's first read of it was
// far. A read slower than far by as much again was interrupted: it takes the line before's home.
// `clean`: nine reads in ten lie within 0.4 of the gap from their level. Where
// earlier work left some of a region's lines in the L2 and others not, SM 0's reads form four
// levels (near and far, hits and misses) and two-means splits them by hit and miss: such a
// region still says which lines are near for the map, but not where homes change.
struct Homes {
  std::vector<uint8_t> far;
  bool clean = false;
};
Homes far_from_reference(const std::vector<uint32_t>& lat) {
  std::vector<double> x(lat.begin() + 1, lat.end());
  const NearFar nf = near_far(x);
  Homes h{std::vector<uint8_t>(x.size(), 0), false};
  if (nf.far <= 0) return h;
  const double gap = nf.far - nf.near;
  size_t stray = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const bool interrupted = x[i] > 2 * nf.far - nf.near;
    h.far[i] = interrupted ? (i ? h.far[i - 1] : 0) : (x[i] > nf.boundary() ? 1 : 0);
    if (!interrupted && std::min(std::fabs(x[i] - nf.near), std::fabs(x[i] - nf.far)) > 0.4 * gap) ++stray;
  }
  h.clean = stray * 10 <= x.size();
  return h;
}

// The granule: the largest power of two that nine in ten of the offsets (from the region's
// start, a multiple of 64 KiB) where the home partition changes lie within two lines of, over
// every region whose reads are clean. Reads stray: the homes are first smoothed by a median of
// five lines (runs of three lines or more keep), and a change may still show a line early or
// late (the H100's reads from DRAM jitter by 100 cycles and more). Homes alternate when nine
// runs in ten between two changes, snapped to the granule, are one granule long; otherwise a
// hash of higher address bits chooses them (the H100: 4 KiB granules, runs of 8 KiB starting
// 4 KiB in).
struct Interleave {
  uint64_t granule_bytes = 0;
  bool alternating = true;
};
Interleave interleave(const std::vector<Homes>& regions) {
  std::vector<std::vector<uint64_t>> changes;  // per region: byte offsets where the home changes
  size_t count = 0;
  for (const Homes& r : regions) {
    if (!r.clean) continue;
    std::vector<uint8_t> h(r.far.size());
    for (size_t i = 0; i < h.size(); ++i) {
      const size_t from = i < 2 ? 0 : i - 2, to = std::min(h.size(), i + 3);
      const size_t ones = size_t(std::count(r.far.begin() + long(from), r.far.begin() + long(to), uint8_t(1)));
      h[i] = 2 * ones > to - from ? 1 : 0;
    }
    changes.emplace_back();
    for (size_t i = 1; i < h.size(); ++i)
      if (h[i] != h[i - 1]) changes.back().push_back((i + 1) * kLine);  // far leaves out line 0
    count += changes.back().size();
  }
  if (!count) return {0, false};
  const uint64_t slack = 2 * kLine;
  for (uint64_t g = kRegionLines * kLine / 2; g >= 8 * kLine; g /= 2) {
    size_t near = 0, runs = 0, one = 0;
    for (const auto& c : changes) {
      uint64_t last = 0;
      for (uint64_t at : c) {
        const uint64_t off = at % g, snapped = (at + g / 2) / g * g;
        if (std::min(off, g - off) > slack) continue;
        ++near;
        ++runs;
        if (snapped - last == g) ++one;
        last = snapped;
      }
    }
    if (near * 10 >= count * 9) return {g, one * 10 >= runs * 9};
  }
  return {kLine, false};  // no granule of 8 lines or more: changes at any line
}

void measure_partitions(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  const int32_t sms = ctx.device().sm_count;
  // The regions lie at the start of an array four times the L2: writing the array before each
  // call (the GPU backend fills it in order) leaves its end in the L2 and the regions out, so
  // that SM 0's reads are first reads from memory.
  const uint64_t l2 = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : uint64_t(64) << 20;
  const uint64_t regions = uint64_t(sms) * kRegionLines * kLine;
  const auto a = memtopo::ChaseArray::stride(std::max(4 * l2, 2 * regions) / kLine * kLine, kLine);
  std::vector<Reads> reads(static_cast<size_t>(sms));
  std::vector<Homes> homes;
  std::vector<double> pooled;
  for (int32_t t = 1; t < sms; ++t) {
    ctx.progress(double(t) / sms, "SM " + std::to_string(t));
    reads[size_t(t)] = read_region(ctx, a, t);
    homes.push_back(far_from_reference(reads[size_t(t)].reference));
    if (t == 1 && std::none_of(homes[0].far.begin(), homes[0].far.end(), [](uint8_t f) { return f != 0; })) {
      // SM 0's first reads in one level: every line's home is equally near, one partition.
      ctx.result("l2.near_partition_of_sm", std::vector<int64_t>(size_t(sms), 0),
                 memtopo::ResultInfo{0.7, memtopo::Bound::Exact,
                                     "SM 0's first reads of 512 lines lie in one level: no line is homed far"});
      ctx.result("l2.partition_sm_counts", std::vector<int64_t>{sms},
                 memtopo::ResultInfo{0.7, memtopo::Bound::Exact, "one partition"});
      return;
    }
    pooled.insert(pooled.end(), reads[size_t(t)].other.begin() + 1, reads[size_t(t)].other.end());
  }
  std::vector<double> samples;
  for (int32_t t = 1; t < sms; ++t)
    for (size_t i = 0; i < kRegionLines; ++i)
      samples.insert(samples.end(), {double(t), double(i), double(reads[size_t(t)].reference.at(i)),
                                     double(reads[size_t(t)].other.at(i))});
  ctx.raw("reads", {"sm", "line", "sm0_cycles", "cycles"}, samples);
  // Near and far hits of every SM t together: the boundary between them.
  const double boundary = near_far(pooled).boundary();
  if (boundary <= 0) throw memtopo::NotDeterminable("every SM's reads lie in one level: no far partition shows");
  std::vector<int64_t> near_of_sm(size_t(sms), 0);
  std::vector<double> rows{0, 0, 0, 0};
  for (int32_t t = 1; t < sms; ++t) {
    std::vector<double> near_home, far_home;
    const auto& h = homes[size_t(t - 1)].far;
    for (size_t i = 0; i < h.size(); ++i) (h[i] ? far_home : near_home).push_back(double(reads[size_t(t)].other[i + 1]));
    if (near_home.empty() || far_home.empty())
      throw memtopo::NotDeterminable("SM 0's first reads of SM " + std::to_string(t) + "'s region lie in one level");
    const double m = an::median(near_home);
    near_of_sm[size_t(t)] = m > boundary ? 1 : 0;
    rows.insert(rows.end(), {double(t), m, an::median(far_home), double(near_of_sm[size_t(t)])});
  }
  ctx.raw("sms", {"sm", "near_home_median", "far_home_median", "near_partition"}, rows);
  const Interleave il = interleave(homes);
  const std::string how = "SM t's first reads of lines homed near SM 0, after SM 0 read them, against the boundary (" +
                          std::to_string(int(boundary + 0.5)) + " cycles) between near and far hits";
  ctx.result("l2.near_partition_of_sm", near_of_sm,
             memtopo::ResultInfo{0.8, memtopo::Bound::Exact, how + "; partition 0 is SM 0's near one"});
  const int64_t on_one = std::accumulate(near_of_sm.begin(), near_of_sm.end(), int64_t(0));
  ctx.result("l2.partition_sm_counts", std::vector<int64_t>{sms - on_one, on_one},
             memtopo::ResultInfo{0.8, memtopo::Bound::Exact, "SMs near partition 0 and 1"});
  const auto clean = std::count_if(homes.begin(), homes.end(), [](const Homes& h) { return h.clean; });
  if (il.granule_bytes) {
    const memtopo::ResultInfo info{0.7, memtopo::Bound::Exact,
                                   "where the home partition changes in SM 0's first reads of " + std::to_string(clean) +
                                       " regions of " + std::to_string(kRegionLines) + " lines whose reads form two levels (of " +
                                       std::to_string(homes.size()) + ")"};
    ctx.result("l2.partition_granule_bytes", int64_t(il.granule_bytes), info);
    ctx.result("l2.partition_interleave", std::string(il.alternating ? "alternating" : "hashed"), info);
  }
}

}  // namespace

namespace cache_sharing {

memtopo::Probe l2_partitions_probe() {
  return memtopo::Probe("cache-sharing/l2-partitions")
      .summary("Which L2 partition is near each SM, and the granule in which addresses alternate between partitions")
      .provides({"l2.near_partition_of_sm", "l2.partition_sm_counts", "l2.partition_granule_bytes",
                 "l2.partition_interleave"})
      .replays("l2.near_partition_of_sm", "sim.l2.near_partition")
      .replays("l2.partition_granule_bytes", "sim.l2.interleave_bytes")
      .replays("l2.partition_interleave", "sim.l2.interleave")
      .not_replayed({"l2.partition_sm_counts"})
      .key("l2.near_partition_of_sm", MT_VALUE_INT_ARRAY, "", "per SM, the L2 partition near it (0: SM 0's)")
      .key("l2.partition_sm_counts", MT_VALUE_INT_ARRAY, "", "SMs near each partition")
      .key("l2.partition_granule_bytes", MT_VALUE_INT, "bytes", "the address granule that has one home partition")
      .key("l2.partition_interleave", MT_VALUE_STRING, "",
           "\"alternating\": granules alternate between partitions; \"hashed\": some other order", MT_KEY_HEADLINE)
      .invariant(MT_INVARIANT_EQUALS_COUNT, "l2.partitions", "l2.partition_sm_counts",
                 "both count the groups of SMs that share a near L2 partition")
      .budget_seconds(30)
      .run(measure_partitions);
}

}  // namespace cache_sharing
