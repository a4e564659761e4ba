// shared-memory/carveout: the L1 left at every shared-memory carveout the device offers, and
// the shared memory per SM and per block of each. The L1 at carveout p% is the lines it holds
// under loads to random lines of a footprint larger than it (hit fraction x lines, whatever the
// replacement policy or set hash): a sweep of p = 0 .. 100 finds the levels, one long run per
// level measures each to a fraction of a KiB. docs/shared-memory.md.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/cache_procedure.hpp>
#include <memtopo/probe.hpp>

#include "carveout_analysis.hpp"
#include "probes.hpp"

namespace shmem {
namespace {

constexpr uint64_t kSweepLoads = 1u << 17;   // per percent: about 0.3 % of the footprint
// Per level: 0.3 KiB above a whole KiB (the rounding's upper margin, carveout_analysis.hpp) is
// 3.2 standard errors; at 128 B (2.4) one level in a hundred of unbiased simulated runs rounded up.
constexpr double kLevelSeBytes = 96;
constexpr int kSms = 8;                      // SMs each measurement's loads are split over

struct L1Left {
  memtopo::cache::Measurer& m;
  uint64_t line;

  CarveoutPoint at(int32_t percent, uint64_t footprint, uint64_t loads) {
    m.set_carveout(percent);
    const uint64_t n = footprint / line;
    // One stream per SM: with several, hits queue behind the others' misses and some pass
    // the threshold (docs/results/log/h100.md, "Figures behind comments"). The loads split over 8
    // SMs at once, each its own L1 at the same carveout: the same count in an eighth of the time.
    const auto o = m.run_random(n * line, line, 2 * n, loads, 0x5eed + uint64_t(percent), {}, kSms);
    // A hit the counting calls slow (an interruption, a noise tail) is no line the L1 lacks:
    // the reference's rate of them is taken off (a miss stays a miss either way).
    const double stray = std::min(m.stray_slow_rate(), 0.5);
    const double h = o.loads ? std::min(1.0, (1.0 - o.miss_fraction) / (1.0 - stray)) : 0.0;
    const double se = double(n * line) * memtopo::analysis::proportion_standard_error(h, double(std::max<size_t>(o.loads, 1)));
    return CarveoutPoint{percent, double(n * line) * h, se};
  }
};

std::string kib(double bytes) { return std::to_string(bytes / 1024.0).substr(0, 6) + " KiB"; }

void measure_carveout(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_RANDOM | MT_CAP_COUNTS))
    throw memtopo::Skip("the backend makes no counted random loads (MT_CAP_RANDOM, MT_CAP_COUNTS)");
  const uint64_t line = uint64_t(ctx.input<int64_t>("l1d.line_bytes"));
  const uint64_t size = uint64_t(ctx.input<int64_t>("l1d.size_bytes"));
  memtopo::cache::Target t;
  t.space = MT_SPACE_GLOBAL_CA;
  t.element = "l1d";
  memtopo::cache::Measurer m(ctx, t);
  L1Left left{m, line};
  // The sweep's footprint: twice the largest L1 (carveout 0), so every carveout's L1 over-fills.
  const uint64_t sweep_footprint = (2 * size + line - 1) / line * line;
  std::vector<CarveoutPoint> sweep;
  std::vector<double> rows;
  for (int32_t p = 0; p <= 100; ++p) {
    ctx.progress(0.8 * p / 100.0, "L1 at carveout " + std::to_string(p) + " %");
    sweep.push_back(left.at(p, sweep_footprint, kSweepLoads));
    rows.insert(rows.end(), {double(p), sweep.back().l1d_bytes, sweep.back().se_bytes});
  }
  ctx.raw("sweep", {"carveout_percent", "l1d_bytes", "standard_error_bytes"}, rows);
  std::vector<CarveoutLevel> levels = group_levels(sweep);
  // Each level again, longer, over a footprint twice its L1.
  rows.clear();
  for (size_t i = 0; i < levels.size(); ++i) {
    ctx.progress(0.8 + 0.2 * double(i) / double(levels.size()), "L1 of carveout level " + std::to_string(i));
    const RefineRun run = refine_run(levels[i].l1d_bytes, line, kLevelSeBytes, uint64_t(1) << 23);
    const CarveoutPoint p = left.at(levels[i].first_percent, run.footprint_bytes, run.loads);
    levels[i].l1d_bytes = p.l1d_bytes;
    levels[i].se_bytes = p.se_bytes;
    rows.insert(rows.end(), {double(levels[i].first_percent), double(levels[i].last_percent), p.l1d_bytes, p.se_bytes});
  }
  ctx.raw("levels", {"first_percent", "last_percent", "l1d_bytes", "standard_error_bytes"}, rows);
  const mt_device_info& d = ctx.device();
  // A device with an opt-in above the default per-block limit gives a block all of an SM's
  // shared memory but what it reserves per block; one without caps a block at the default.
  const bool opt_in = d.shared_per_block_optin_bytes > d.shared_per_block_bytes;
  const int64_t reserved = opt_in ? std::max<int64_t>(0, d.shared_per_sm_bytes - d.shared_per_block_optin_bytes) : 0;
  const int64_t block_max = opt_in ? d.shared_per_block_optin_bytes : d.shared_per_block_bytes;
  const std::vector<CarveoutRow> table = carveout_table(levels, d.shared_per_sm_bytes, reserved, block_max);
  std::vector<int64_t> percent, l1, sm, block;
  std::string measured;
  for (const CarveoutRow& r : table) {
    percent.push_back(r.first_percent);
    l1.push_back(r.l1d_bytes);
    sm.push_back(r.sm_shared_bytes);
    block.push_back(r.block_shared_bytes);
    measured += (measured.empty() ? "" : ", ") + kib(r.measured_bytes) + " +- " + kib(r.se_bytes);
  }
  const std::string why = "levels of a sweep of carveout 0 .. 100 % by lines held under random loads, one level per "
                          "row from its smallest percent";
  ctx.result("shared.carveout_percent", percent, memtopo::ResultInfo{0.8, memtopo::Bound::Exact, why});
  ctx.result("shared.carveout_l1d_size_bytes", l1,
             memtopo::ResultInfo{0.8, memtopo::Bound::Exact, "lines held x line bytes, rounded to KiB: " + measured});
  ctx.result("shared.carveout_sm_shared_bytes", sm,
             memtopo::ResultInfo{0.7, memtopo::Bound::Exact,
                                 "device.shared_per_sm_bytes less what the level's L1 exceeds the last level's by"});
  ctx.result("shared.carveout_block_shared_bytes", block,
             memtopo::ResultInfo{0.7, memtopo::Bound::Exact,
                                 "shared per SM less the reservation per block (" + std::to_string(reserved) +
                                     " B), at most " + std::to_string(block_max) + " B (the API's limit per block)"});
}

}  // namespace

memtopo::Probe carveout_probe() {
  return memtopo::Probe("shared-memory/carveout")
      .roles({{"shared.carveout_l1d_size_bytes", "memory.carveout_l1_bytes@shared"},
              {"shared.carveout_sm_shared_bytes", "memory.carveout_shared_bytes@shared"}})
      .summary("The L1 left and the shared memory per SM and per block at every shared-memory carveout")
      .requires_keys({"l1d.size_bytes", "l1d.line_bytes"})
      .provides({"shared.carveout_percent", "shared.carveout_l1d_size_bytes", "shared.carveout_sm_shared_bytes",
                 "shared.carveout_block_shared_bytes"})
      // The levels found are the sizes a carveout selects, with the L1 left beside each.
      .replays("shared.carveout_sm_shared_bytes", "sim.shared_sizes_bytes")
      .replays("shared.carveout_l1d_size_bytes", "sim.carveout_l1d_size_bytes")
      .replays("shared.carveout_percent", "sim.carveout_percents")
      .not_replayed({"shared.carveout_block_shared_bytes"})
      .key("shared.carveout_percent", MT_VALUE_INT_ARRAY, "",
           "smallest carveout percent of each level (the kernel's own shared memory counts)")
      .key("shared.carveout_l1d_size_bytes", MT_VALUE_INT_ARRAY, "bytes", "L1 left at each level")
      .key("shared.carveout_sm_shared_bytes", MT_VALUE_INT_ARRAY, "bytes", "shared memory per SM at each level")
      .key("shared.carveout_block_shared_bytes", MT_VALUE_INT_ARRAY, "bytes", "shared memory one block may take at each level")
      // Tens of millions of random loads: on the simulated GPU one of the longest probes, which
      // the runner starts early for a budget this size (docs/shared-memory.md).
      .budget_seconds(90)
      .run(measure_carveout);
}

}  // namespace shmem
