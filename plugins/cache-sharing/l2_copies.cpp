// cache-sharing/l2-far-copies: how much of a far line an SM's read copies into its near L2
// partition. SM 0 reads 4 KiB, 32 B apart, into the L2; then SM t, near the partition SM 0 is
// not, reads the first 32 B unit x once, and then the units from x on once each. A unit that
// came along with x's copy answers near; one that did not answers from its home, far where x's
// home was far (the copies SM 0's reads left are near SM 0, far from t). Trials whose units all
// answer near had x homed near t and say nothing. docs/cache-sharing.md.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>

#include "near_far.hpp"

namespace {

namespace an = memtopo::analysis;

constexpr uint64_t kUnit = 32;         // the narrowest unit an L2 fetches
constexpr uint64_t kSpanUnits = 128;   // 4 KiB read after x
constexpr uint64_t kTrials = 32;       // x at the start of 32 spans 68 KiB apart: both homes

// Units from x on that answered near, until the first far one (of `lat`, x's re-read first).
uint64_t near_run(const std::vector<uint32_t>& lat, double boundary) {
  uint64_t n = 0;
  while (n < lat.size() && double(lat[n]) < boundary) ++n;
  return n;
}

void measure_copies(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  const auto map = ctx.input<std::vector<int64_t>>("l2.near_partition_of_sm");
  const auto other = std::find_if(map.begin(), map.end(), [&](int64_t p) { return p != map.front(); });
  if (other == map.end()) throw memtopo::Skip("every SM is near one partition: no far line to copy");
  const int32_t t = int32_t(other - map.begin());
  const uint64_t l2 = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : uint64_t(64) << 20;
  const uint64_t spacing = 68 * 1024;
  const auto a = memtopo::ChaseArray::stride(std::max(4 * l2, 2 * kTrials * spacing), kUnit);
  std::vector<std::vector<uint32_t>> reads;
  std::vector<double> pooled;
  for (uint64_t k = 0; k < kTrials; ++k) {
    auto job = [&](int32_t sm, uint32_t order, uint64_t steps) {
      memtopo::Job j;
      j.space = MT_SPACE_GLOBAL_CG;
      j.array = &a;
      j.start = uint32_t(k * spacing / 4);
      j.steps = steps;
      j.sm = sm;
      j.block = sm == 0 ? 0 : 1;
      j.order = order;
      j.want_index = false;
      return j;
    };
    const auto r = ctx.backend().run(std::vector<memtopo::Job>{job(0, 1, kSpanUnits), job(t, 2, 1), job(t, 3, kSpanUnits)});
    reads.push_back(r.at(2).latency);
    pooled.insert(pooled.end(), reads.back().begin() + 1, reads.back().end());
  }
  const cache_sharing::NearFar nf = cache_sharing::near_far(pooled);
  if (nf.far <= 0) throw memtopo::NotDeterminable("every unit SM " + std::to_string(t) + " read answered alike");
  std::vector<double> runs, rows;
  for (uint64_t k = 0; k < kTrials; ++k) {
    const uint64_t n = near_run(reads[k], nf.boundary());
    rows.insert(rows.end(), {double(k), double(reads[k].front()), double(n)});
    if (n < reads[k].size()) runs.push_back(double(n));  // x's granule homed far from t
  }
  ctx.raw("trials", {"trial", "first_reread_cycles", "near_units"}, rows);
  if (runs.empty()) throw memtopo::NotDeterminable("every trial's units answered near: no x was homed far");
  const double median = an::median(runs);
  const std::string note = "SM " + std::to_string(t) + " re-read 4 KiB from a 32 B unit it had read once, in " +
                           std::to_string(runs.size()) + " of " + std::to_string(kTrials) +
                           " trials with far units; near and far at " + std::to_string(int(nf.near + 0.5)) + " and " +
                           std::to_string(int(nf.far + 0.5)) + " cycles";
  ctx.result("l2.far_copy_bytes", int64_t(median) * int64_t(kUnit),
             memtopo::ResultInfo{0.7, memtopo::Bound::Exact,
                                 "median of the near units from the one read on; 0: a far unit read once stays far; " +
                                     note});
}

}  // namespace

namespace cache_sharing {

memtopo::Probe l2_far_copies_probe() {
  return memtopo::Probe("cache-sharing/l2-far-copies")
      .roles({{"l2.far_copy_bytes", "cache.far_copy_bytes@l2_cache"}})
      .summary("How much of a far L2 line one read copies into the reading SM's near partition")
      .requires_keys({"l2.near_partition_of_sm"})
      .provides({"l2.far_copy_bytes"})
      .replays("l2.far_copy_bytes", "sim.l2.far_copy_bytes")
      .key("l2.far_copy_bytes", MT_VALUE_INT, "bytes",
           "bytes a read of a far line copies into the near partition (0: no copy)")
      .budget_seconds(30)
      .run(measure_copies);
}

}  // namespace cache_sharing
