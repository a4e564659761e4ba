#include "l2_probes.hpp"
#include "l2_levels_analysis.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <future>
#include <map>
#include <string>

#include <memtopo/analysis.hpp>
#include <memtopo/recipes.hpp>

namespace data_cache {
namespace an = memtopo::analysis;
using memtopo::Context;
using memtopo::Probe;

namespace {

using memtopo::analysis::KiB;
using memtopo::analysis::MiB;

// The load-to-use time of a pointer chase (.cg) over a random order of a footprint's lines
// after one warm-up pass, 4096 to 65536 timed loads. (Fewer timed loads are not faster for
// free: where the footprint just exceeds a randomly replaced cache, the first loads after one
// pass hit more often than later ones, and the time would depend on the window.)
double chase_time(const Context& ctx, const memtopo::recipes::Chase& chase) {
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.pattern = MT_PATTERN_POINTERS;
  j.record = MT_RECORD_TOTAL;
  j.array = &chase.array;
  j.start = chase.start;
  j.warmup_steps = chase.cycle_length();
  j.steps = std::min<uint64_t>(std::max<uint64_t>(chase.cycle_length(), 4096), 65536);
  return ctx.backend().run(j).average_cycles;
}

// The footprint sweep of l2-levels, coarse to fine on a grid of eight footprints per octave:
// every other grid point up to grid[first_n - 1] (and that one); then, between two measured
// neighbours whose times differ by more than the plateau tolerance, the grid point between
// them, until each such pair is adjacent; then past first_n, one grid point at a time, until
// the last three measured times make a plateau (the last level) or the grid ends. A skipped
// point lies between two times within 4 % of each other: inside a plateau, never on a ramp,
// so the plateaus and the level starts are those of the whole grid.
struct Sweep {
  std::vector<uint64_t> sizes;
  std::vector<double> lat;
};
class CoarseToFine {
 public:
  CoarseToFine(const Context& ctx, const std::vector<uint64_t>& grid, uint64_t line)
      : ctx_(ctx), grid_(grid), line_(line) {}

  Sweep run(size_t first_n) {
    std::vector<size_t> coarse;
    for (size_t i = 0; i < first_n; i += 2) coarse.push_back(i);
    if (coarse.back() != first_n - 1) coarse.push_back(first_n - 1);
    measure(coarse);
    refine();
    for (size_t next = first_n; next < grid_.size() && !last_level(); ++next) {
      measure({next});
      refine();
    }
    ctx_.debug("l2 levels: " + std::to_string(got_.size()) + " footprints; chases " + std::to_string(chase_s_) +
                " s, waiting for their random orders " + std::to_string(order_wait_s_) + " s");
    return times();
  }

 private:
  // Builds the next footprint's random order on another thread while the GPU chases the
  // current one: for the largest footprints that takes about as long as the chase.
  void measure(const std::vector<size_t>& idx) {
    auto build = [this](size_t i) {
      return std::async(std::launch::async, [f = grid_[i], l = line_] { return memtopo::recipes::random_lines(f, l); });
    };
    std::future<memtopo::recipes::Chase> next = build(idx.front());
    for (size_t k = 0; k < idx.size(); ++k) {
      const auto t0 = std::chrono::steady_clock::now();
      const memtopo::recipes::Chase chase = next.get();
      const auto t1 = std::chrono::steady_clock::now();
      if (k + 1 < idx.size()) next = build(idx[k + 1]);
      ctx_.progress(double(got_.size()) / double(grid_.size()),
                    "L2 levels: " + std::to_string(grid_[idx[k]] >> 10) + " KiB");
      got_[idx[k]] = chase_time(ctx_, chase);
      order_wait_s_ += std::chrono::duration<double>(t1 - t0).count();
      chase_s_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    }
  }
  // Grid points between measured neighbours more than 4 % apart, until there are none.
  void refine() {
    for (;;) {
      std::vector<size_t> mid;
      for (auto a = got_.begin(), b = std::next(a); b != got_.end(); a = b++)
        if (b->first - a->first > 1 && std::fabs(b->second - a->second) > 0.04 * std::min(a->second, b->second))
          mid.push_back((a->first + b->first) / 2);
      if (mid.empty()) return;
      measure(mid);
    }
  }
  Sweep times() const {
    Sweep s;
    for (const auto& [i, t] : got_) {
      s.sizes.push_back(grid_[i]);
      s.lat.push_back(t);
    }
    return s;
  }
  bool last_level() const {
    const std::vector<double> lat = times().lat;
    const auto pl = an::plateaus(lat, 0.04, 3);
    return !pl.empty() && pl.back().last + 1 == lat.size();
  }

  const Context& ctx_;
  const std::vector<uint64_t>& grid_;
  uint64_t line_;
  std::map<size_t, double> got_;
  double chase_s_ = 0, order_wait_s_ = 0;
};

}  // namespace

// Every latency level a footprint sweep shows beyond L1 (near and far L2 partitions, DRAM),
// with the footprint where each begins: pointer chases over random line orders on a grid of
// eight footprints per octave, coarse to fine. A level is a plateau of the load-to-use times
// above the one before (l2_levels_analysis.cpp); it begins where the time has gone 1/8 of the
// way from the previous level to it, between the two footprints either side. (The H100's
// plateaus end in creeps, where a first footprint past the plateau moved between grid points
// from run to run.)
Probe l2_levels() {
  return Probe("data-cache/l2-levels")
      .roles({{"l2.api_size_bytes", "cache.api_size_bytes@l2_cache"}})
      .summary("L2: latency levels of a footprint sweep beyond L1, and the API's L2 size")
      .provides({"l2.api_size_bytes", "l2.level_latencies_cycles", "l2.level_start_bytes"})
      .not_replayed({"l2.api_size_bytes", "l2.level_latencies_cycles", "l2.level_start_bytes"})
      // Crossings between grid points: positions that estimate, compared within a tolerance.
      .key("l2.level_start_bytes", MT_VALUE_INT_ARRAY, "bytes",
           "footprints where each latency level begins (1/8 of the way up the ramp to it)", MT_KEY_ESTIMATE)
      .uses({"l1d.size_bytes", "l2.line_bytes"})
      .run([](Context& ctx) {
        const uint64_t api = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : 0;
        if (api) ctx.result("l2.api_size_bytes", int64_t(api));
        else ctx.absent("l2.api_size_bytes", "the backend reports no L2 size for this device");
        const uint64_t line = uint64_t(ctx.try_input<int64_t>("l2.line_bytes").value_or(128));
        const uint64_t lo = std::max<uint64_t>(2 * uint64_t(ctx.try_input<int64_t>("l1d.size_bytes").value_or(0)), 64 * KiB);
        // Past 1.5x the API's size only until the last level is a plateau (DRAM begins
        // within 1.1x on the H100 and H200; a gradual end of the L2 extends the sweep).
        const uint64_t hi = std::min<uint64_t>(std::max<uint64_t>(2 * api, 8 * MiB), 160 * MiB);
        const uint64_t first_hi = std::min<uint64_t>(std::max<uint64_t>(api + api / 2, 8 * MiB), hi);
        std::vector<uint64_t> grid;
        size_t first_n = 0;
        for (double f = double(lo); f <= double(hi); f *= 1.0905077327) {
          grid.push_back(uint64_t(f) / line * line);
          if (f <= double(first_hi)) first_n = grid.size();
        }
        const Sweep sw = CoarseToFine(ctx, grid, line).run(std::max<size_t>(first_n, 1));
        const std::vector<uint64_t>& sizes = sw.sizes;
        const std::vector<double>& lat = sw.lat;
        std::vector<double> row;
        for (size_t i = 0; i < sizes.size(); ++i) {
          row.push_back(double(sizes[i]));
          row.push_back(lat[i]);
        }
        ctx.raw("l2-levels", {"footprint_bytes", "load_to_use_cycles"}, row);
        const FootprintLevels found = footprint_levels(std::vector<double>(sizes.begin(), sizes.end()), lat);
        if (found.latencies_cycles.empty())
          throw memtopo::Error("no latency plateau in the L2 footprint sweep (see the raw l2-levels series)");
        // 1/8 of the way up each ramp, between the footprints either side: the first footprint
        // past the mark moved a whole grid step (9 %) where one sat near it; the crossing moves
        // as the ramp does. Further up, a gradual ramp (random replacement) would put the
        // start well past the cache's size.
        std::vector<int64_t> starts;
        for (double x : found.start_bytes)
          starts.push_back(int64_t(std::llround(x / double(line))) * int64_t(line));  // the first: the sweep's
        const memtopo::ResultInfo info{0.9, memtopo::Bound::Exact,
                                       "load-to-use times of pointer chases (.cg, random line order), footprints of a "
                                       "grid of 8 per octave, coarse to fine; levels are rising plateaus within 4 %; a level "
                                       "starts where the time has gone 1/8 of the way from the previous level to it "
                                       "(between the footprints either side, in log footprint)"};
        ctx.result("l2.level_latencies_cycles", found.latencies_cycles, info);
        ctx.result("l2.level_start_bytes", starts, info);
      });
}

// What the occupancy may confirm: the API's L2 size, where an SM's lines spread over every
// partition (the simulator), or its even share per partition, where an SM fills the one near
// it (the H100: docs/results/log/h100.md).
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

}  // namespace data_cache
