// cache-sharing/l2-partitions: which SMs share a near L2 partition, how many partitions there
// are, and the granule in which addresses change partition. SM a's first reads of a region no
// one has read split into a near and a far level by each line's home partition; SM t then reads
// the lines homed near SM a near exactly when it shares SM a's near partition (a copy SM a's
// reads left near it counts the same). The SMs are grouped by that test; the groups are the
// partitions, so that l2.partitions, l2.partition_sm_counts and l2.near_partition_of_sm come
// from one decision. docs/cache-sharing.md.
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>

#include "near_far.hpp"
#include "sm_groups.hpp"

namespace {

namespace an = memtopo::analysis;
using cache_sharing::near_far;
using cache_sharing::NearFar;

constexpr uint64_t kLine = 128;
constexpr uint64_t kRegionLines = 512;  // 64 KiB per SM

struct Reads {
  std::vector<uint32_t> reference, other;  // the first SM's first reads, then SM t's
};

// SM `first` reads region t (one no earlier job of the call read), then SM t reads it.
Reads read_region(const memtopo::Context& ctx, const memtopo::ChaseArray& a, int32_t first, int32_t t) {
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
  const auto r = ctx.backend().run(std::vector<memtopo::Job>{job(first, 1), job(t, 2)});
  return {r[0].latency, r[1].latency};
}

// Per line but the first (which pays for the read's start): 1 when the first SM's first read of
// it was far. A read slower than far by as much again was interrupted: it takes the line
// before's home. `clean`: nine reads in ten lie within 0.4 of the gap from their level. Where
// earlier work left some of a region's lines in the L2 and others not, the first reads form
// four levels (near and far, hits and misses) and two-means splits them by hit and miss: such a
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

// The median of SM t's reads of the lines the first SM read near (homed in its near partition),
// or nullopt where its first reads did not split into two levels.
std::optional<double> near_home_median(const Homes& h, const Reads& r) {
  std::vector<double> near_home;
  size_t far = 0;
  for (size_t i = 0; i < h.far.size() && i + 1 < r.other.size(); ++i) {
    if (h.far[i]) ++far;
    else near_home.push_back(double(r.other[i + 1]));
  }
  if (near_home.empty() || far == 0) return std::nullopt;
  return an::median(near_home);
}

// Where the home changes in one region, smoothed by a median of five lines (runs of three lines
// or more keep): byte offsets from the region's start, each with whether the run before it was
// far from SM 0.
struct Change {
  uint64_t at;
  bool far_before;
};
std::vector<Change> home_changes(const Homes& r) {
  std::vector<uint8_t> h(r.far.size());
  for (size_t i = 0; i < h.size(); ++i) {
    const size_t from = i < 2 ? 0 : i - 2, to = std::min(h.size(), i + 3);
    const size_t ones = size_t(std::count(r.far.begin() + long(from), r.far.begin() + long(to), uint8_t(1)));
    h[i] = 2 * ones > to - from ? 1 : 0;
  }
  std::vector<Change> c;
  for (size_t i = 1; i < h.size(); ++i)
    if (h[i] != h[i - 1]) c.push_back({(i + 1) * kLine, h[i - 1] != 0});  // far leaves out line 0
  return c;
}

// The granule: the largest power of two that nine in ten of the offsets (from the region's
// start, a multiple of 64 KiB) where the home partition changes lie within two lines of, over
// every region whose reads are clean. A change may still show a line early or late after the
// smoothing (reads from DRAM jitter: docs/results/log/h100.md, "Cache sharing"). Homes alternate when
// SM 0's near partition takes one granule in every `partitions`: nine runs in ten between two
// changes, snapped to the granule, are one granule long where near and partitions - 1 where far
// (two partitions: every run one granule). Otherwise a hash of higher address bits chooses them
// (the H100's: docs/results/log/h100.md, "Cache sharing").
struct Interleave {
  uint64_t granule_bytes = 0;
  bool alternating = true;
};
Interleave interleave(const std::vector<Homes>& regions, int64_t partitions) {
  std::vector<std::vector<Change>> changes;  // per clean region
  size_t count = 0;
  for (const Homes& r : regions) {
    if (!r.clean) continue;
    changes.push_back(home_changes(r));
    count += changes.back().size();
  }
  if (!count) return {0, false};
  const uint64_t slack = 2 * kLine;
  for (uint64_t g = kRegionLines * kLine / 2; g >= 8 * kLine; g /= 2) {
    size_t near = 0, runs = 0, periodic = 0;
    for (const auto& region : changes) {
      uint64_t last = 0;
      for (const Change& c : region) {
        const uint64_t off = c.at % g, snapped = (c.at + g / 2) / g * g;
        if (std::min(off, g - off) > slack) continue;
        ++near;
        ++runs;
        if (snapped - last == (c.far_before ? uint64_t(partitions - 1) : 1) * g) ++periodic;
        last = snapped;
      }
    }
    if (near * 10 >= count * 9) return {g, periodic * 10 >= runs * 9};
  }
  return {kLine, false};  // no granule of 8 lines or more: changes at any line
}

void store_one_partition(memtopo::Context& ctx, int32_t sms) {
  const memtopo::ResultInfo info{0.7, memtopo::Bound::Exact,
                                 "SM 0's first reads of 512 lines lie in one level: no line is homed far"};
  ctx.result("l2.partitions", int64_t(1), info);
  ctx.result("l2.near_partition_of_sm", std::vector<int64_t>(size_t(sms), 0), info);
  ctx.result("l2.partition_sm_counts", std::vector<int64_t>{sms}, info);
  for (const char* key : {"l2.partition_granule_bytes", "l2.partition_interleave"})
    ctx.absent(key, "one partition: no address changes home");
}

void measure_partitions(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  const int32_t sms = ctx.device().sm_count;
  // The regions lie at the start of an array four times the L2: writing the array before each
  // call (the GPU backend fills it in order) leaves its end in the L2 and the regions out, so
  // that the first SM's reads are first reads from memory.
  const uint64_t l2 = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : uint64_t(64) << 20;
  const uint64_t regions = uint64_t(sms) * kRegionLines * kLine;
  const auto a = memtopo::ChaseArray::stride(std::max(4 * l2, 2 * regions) / kLine * kLine, kLine);
  std::vector<Reads> reads(static_cast<size_t>(sms));
  std::vector<Homes> homes;
  std::vector<double> pooled;
  for (int32_t t = 1; t < sms; ++t) {
    ctx.progress(double(t) / sms, "SM " + std::to_string(t));
    reads[size_t(t)] = read_region(ctx, a, 0, t);
    homes.push_back(far_from_reference(reads[size_t(t)].reference));
    if (t == 1 && std::none_of(homes[0].far.begin(), homes[0].far.end(), [](uint8_t f) { return f != 0; }))
      return store_one_partition(ctx, sms);  // every line's home is equally near
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
  // SM t shares SM a's near partition when it reads the lines homed there near. SM 0's tests
  // are the reads above; another SM's first reads of region t come in a sequence of their own.
  std::vector<double> rows;
  const auto groups = cache_sharing::group_sms(sms, [&](int64_t first, int64_t t) {
    const Reads r = first == 0 ? reads[size_t(t)] : read_region(ctx, a, int32_t(first), int32_t(t));
    const auto m = near_home_median(first == 0 ? homes[size_t(t - 1)] : far_from_reference(r.reference), r);
    if (!m)
      throw memtopo::NotDeterminable("SM " + std::to_string(first) + "'s first reads of SM " + std::to_string(t) +
                                     "'s region lie in one level");
    rows.insert(rows.end(), {double(first), double(t), *m, *m < boundary ? 1.0 : 0.0});
    return *m < boundary;
  });
  ctx.raw("pairs", {"first_sm", "sm", "near_home_median", "shares"}, rows);
  std::vector<int64_t> counts;
  for (const auto& g : groups) counts.push_back(int64_t(g.size()));
  const std::string how = "groups of SMs that read near the lines homed near the group's first SM, after it read them "
                          "(" + std::to_string(rows.size() / 4) + " pairs; near below " +
                          std::to_string(int(boundary + 0.5)) + " cycles, between near and far hits)";
  const memtopo::ResultInfo info{0.8, memtopo::Bound::Exact, how};
  ctx.result("l2.partitions", int64_t(groups.size()), info);
  ctx.result("l2.near_partition_of_sm", cache_sharing::group_of_sm(groups, sms),
             memtopo::ResultInfo{0.8, memtopo::Bound::Exact, how + "; partition 0 is SM 0's near one"});
  ctx.result("l2.partition_sm_counts", counts, info);
  const Interleave il = interleave(homes, int64_t(groups.size()));
  const auto clean = std::count_if(homes.begin(), homes.end(), [](const Homes& h) { return h.clean; });
  if (il.granule_bytes) {
    const memtopo::ResultInfo gi{0.7, memtopo::Bound::Exact,
                                 "where the home partition changes in SM 0's first reads of " + std::to_string(clean) +
                                     " regions of " + std::to_string(kRegionLines) + " lines whose reads form two levels (of " +
                                     std::to_string(homes.size()) + ")"};
    ctx.result("l2.partition_granule_bytes", int64_t(il.granule_bytes), gi);
    ctx.result("l2.partition_interleave", std::string(il.alternating ? "alternating" : "hashed"), gi);
  } else {
    const std::string why = groups.size() < 2 ? "one partition: no home changes"
                                              : "no region's first reads changed home in two levels (" +
                                                    std::to_string(clean) + " clean of " + std::to_string(homes.size()) +
                                                    ")";
    ctx.absent("l2.partition_granule_bytes", why);
    ctx.absent("l2.partition_interleave", why);
  }
}

}  // namespace

namespace cache_sharing {

memtopo::Probe l2_partitions_probe() {
  return memtopo::Probe("cache-sharing/l2-partitions")
      .roles({{"l2.partitions", "cache.partitions@l2_cache"},
              {"l2.near_partition_of_sm", "cache.near_partition_of_sm@l2_cache"},
              {"l2.partition_sm_counts", "cache.partition_sm_counts@l2_cache"},
              {"l2.partition_granule_bytes", "cache.partition_granule_bytes@l2_cache"},
              {"l2.partition_interleave", "cache.partition_interleave@l2_cache"}})
      .summary("L2 partitions: which SMs share a near one, and the granule in which addresses change partition")
      .provides({"l2.partitions", "l2.near_partition_of_sm", "l2.partition_sm_counts", "l2.partition_granule_bytes",
                 "l2.partition_interleave"})
      .replays("l2.near_partition_of_sm", "sim.l2.near_partition")
      .replays("l2.partition_granule_bytes", "sim.l2.interleave_bytes")
      .replays("l2.partition_interleave", "sim.l2.interleave")
      .not_replayed({"l2.partition_sm_counts"})
      .key("l2.partitions", MT_VALUE_INT, "", "L2 partitions: groups of SMs that share a near one", MT_KEY_HEADLINE)
      .key("l2.near_partition_of_sm", MT_VALUE_INT_ARRAY, "", "per SM, the L2 partition near it (0: SM 0's)",
           MT_KEY_CONFIGURATION)
      .key("l2.partition_sm_counts", MT_VALUE_INT_ARRAY, "", "SMs near each partition", MT_KEY_CONFIGURATION)
      .key("l2.partition_granule_bytes", MT_VALUE_INT, "bytes", "the address granule that has one home partition")
      .key("l2.partition_interleave", MT_VALUE_STRING, "",
           "\"alternating\": granules alternate between partitions; \"hashed\": some other order", MT_KEY_HEADLINE)
      .invariant(MT_INVARIANT_EQUALS_COUNT, "l2.partitions", "l2.partition_sm_counts",
                 "both count the groups of SMs that share a near L2 partition")
      .budget_seconds(30)
      .run(measure_partitions);
}

}  // namespace cache_sharing
