#include "l2_probes.hpp"

#include <algorithm>
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

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

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
      const memtopo::recipes::Chase chase = next.get();
      if (k + 1 < idx.size()) next = build(idx[k + 1]);
      ctx_.progress(double(got_.size()) / double(grid_.size()),
                    "L2 levels: " + std::to_string(grid_[idx[k]] >> 10) + " KiB");
      got_[idx[k]] = chase_time(ctx_, chase);
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
};

// Fine-grained .cg loads of `arrays` chases of one footprint on SMs 0, 1, ... pooled, and
// the same footprint's load-to-use time (a pointer chase on the same SMs). An L2 hit takes
// longer from an SM far from the line's slice, and lines land on slices by physical address,
// so one array on one SM moves from run to run; eight arrays on SMs 0-7 (always those, not
// whichever are free) average over SMs and placements (docs/results/h100.md).
struct Pooled {
  std::vector<uint32_t> raw;
  double load_to_use = 0;  // mean over the SMs of the pointer chase's cycles per load
};
Pooled pooled_chases(const Context& ctx, uint64_t footprint, uint64_t line, uint64_t warm_passes, size_t arrays,
                     bool with_load_to_use) {
  const auto chase = footprint <= 64 * MiB ? memtopo::recipes::random_lines(footprint, line)
                                           : memtopo::recipes::constant_stride(footprint, line);
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &chase.array;
  j.start = chase.start;
  j.warmup_steps = warm_passes * chase.cycle_length();
  j.steps = std::min<uint64_t>(chase.cycle_length(), 4096);
  j.want_index = false;
  std::vector<memtopo::Job> jobs(arrays, j);
  for (size_t i = 0; i < arrays; ++i) jobs[i].sm = int32_t(i);
  Pooled p;
  for (const auto& r : ctx.backend().run(jobs)) p.raw.insert(p.raw.end(), r.latency.begin(), r.latency.end());
  if (!with_load_to_use) return p;
  for (auto& pj : jobs) {
    pj.pattern = MT_PATTERN_POINTERS;
    pj.record = MT_RECORD_TOTAL;
    pj.steps = 4096;
  }
  double sum = 0;
  for (const auto& r : ctx.backend().run(jobs)) sum += r.average_cycles;
  p.load_to_use = sum / double(arrays);
  return p;
}

// What a noise term adds to a level's centre (the median of its samples): one SM re-reading
// one line through .cg hits one L2 slice at one latency, so its samples spread only by noise
// or by the timing's own cost; where chases of that line spread more the more loads they hold
// (analysis::chase_noise_excess), it is noise, and the samples' median less their 10th
// percentile is what it adds. 0 otherwise (a GPU's).
double noise_in_centre(const Context& ctx, uint64_t line) {
  const auto one = memtopo::recipes::constant_stride(line, line);
  memtopo::Job j;
  j.space = MT_SPACE_GLOBAL_CG;
  j.array = &one.array;
  j.start = one.start;
  j.warmup_steps = 16;
  j.steps = 2048;
  j.want_index = false;
  j.sm = 0;
  const std::vector<double> s = an::to_doubles(ctx.backend().run(std::vector<memtopo::Job>{j}).front().latency);
  if (s.empty()) return 0.0;
  auto windows = [&](uint64_t loads) {
    memtopo::Job c = j;
    c.pattern = MT_PATTERN_POINTERS;
    c.record = MT_RECORD_TOTAL;
    c.steps = loads;
    std::vector<double> t;
    for (int k = 0; k < 16; ++k) t.push_back(double(ctx.backend().run(std::vector<memtopo::Job>{c}).front().cycles));
    return t;
  };
  const double ceiling = 4 * an::median(s);
  if (an::chase_noise_excess(s, ceiling, windows(128), windows(384), 256) <= 0) return 0.0;
  std::vector<double> kept;
  for (double v : s)
    if (v <= ceiling) kept.push_back(v);
  return std::max(0.0, an::median(kept) - an::percentile(kept, 10));
}

// Latency levels holding at least 10 % of the loads.
std::vector<an::Level> big_levels(const std::vector<uint32_t>& samples) {
  std::vector<an::Level> big;
  for (const auto& l : an::find_levels(samples).levels)
    if (l.count * 10 >= samples.size()) big.push_back(l);
  return big;
}

// An L2 that copies what an SM reads into the partition near it (the H100) shows one hit
// level in a warm footprint; the far partition appears in the footprint sweep, as an on-chip
// plateau between the near level and memory. The sweep reaches twice the API's L2 size, so
// its last plateau is memory; the on-chip plateaus are those before it that start below the
// API's L2 size. (Where memory's own plateau starts, near the API's size, moves from run to
// run.) Lines spread over the partitions (the simulator) show both levels in the warm footprint.
void report_partitions(const Context& ctx, const std::vector<an::Level>& hits, double sample_cost,
                       const memtopo::ResultInfo& info) {
  const auto levels = ctx.try_input<std::vector<double>>("l2.level_latencies_cycles");
  const auto starts = ctx.try_input<std::vector<int64_t>>("l2.level_start_bytes");
  const auto api = ctx.try_input<int64_t>("l2.api_size_bytes");
  size_t on_chip = 0;
  if (levels && starts && api && starts->size() == levels->size() && levels->size() >= 3)
    for (size_t i = 0; i + 1 < starts->size(); ++i) on_chip += (*starts)[i] < *api ? 1 : 0;
  if (hits.size() == 1 && on_chip >= 2) {
    ctx.result("l2.partitions", int64_t(on_chip),
               {0.7, memtopo::Bound::Exact,
                "one hit level in warm footprints (lines copied near the SM); on-chip plateaus of the footprint sweep "
                "below the API's L2 size"});
    ctx.result("l2.far_latency_cycles", (*levels)[on_chip - 1],
               {0.7, memtopo::Bound::Exact,
                "the footprint sweep's last on-chip plateau, from " + std::to_string((*starts)[on_chip - 1]) +
                    " B (load-to-use: pointer chase)"});
    return;
  }
  ctx.result("l2.partitions", int64_t(hits.size()),
             {0.8, memtopo::Bound::Exact, "distinct L2 hit latency levels in the pooled loads"});
  if (hits.size() > 1) ctx.result("l2.far_latency_cycles", hits.back().centre - sample_cost, info);
}

}  // namespace

// Every latency level a footprint sweep shows beyond L1 (near and far L2 partitions, DRAM),
// with the footprint where each begins: pointer chases over random line orders on a grid of
// eight footprints per octave, coarse to fine. A level is a plateau of the load-to-use times;
// it begins at the first footprint past the previous plateau whose time has gone 1/8 of the
// way to it. (The
// H100's near plateau ends in a creep where the first footprint past it moved between three
// grid points from run to run; 1/8 of the way lies on the steep part of the ramp.)
Probe l2_levels() {
  return Probe("data-cache/l2-levels")
      .summary("L2: latency levels of a footprint sweep beyond L1, and the API's L2 size")
      .provides({"l2.api_size_bytes", "l2.level_latencies_cycles", "l2.level_start_bytes"})
      .not_replayed({"l2.api_size_bytes", "l2.level_latencies_cycles", "l2.level_start_bytes"})
      .uses({"l1d.size_bytes", "l2.line_bytes"})
      .run([](Context& ctx) {
        const uint64_t api = ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) : 0;
        if (api) ctx.result("l2.api_size_bytes", int64_t(api));
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
        const auto pl = an::plateaus(lat, 0.04, 3);
        if (pl.empty()) throw memtopo::Error("no latency plateau in the L2 footprint sweep (see the raw l2-levels series)");
        std::vector<double> levels;
        std::vector<int64_t> starts;
        for (const auto& p : pl) levels.push_back(p.median);
        for (size_t i : an::level_starts(lat, pl, 0.125)) starts.push_back(int64_t(sizes[i]));  // the first: the sweep's
        const memtopo::ResultInfo info{0.9, memtopo::Bound::Exact,
                                       "load-to-use times of pointer chases (.cg, random line order), footprints of a "
                                       "grid of 8 per octave, coarse to fine; levels are plateaus within 4 %; a level "
                                       "starts at the first footprint past the previous plateau whose time has gone 1/8 "
                                       "of the way to it"};
        ctx.result("l2.level_latencies_cycles", levels, info);
        ctx.result("l2.level_start_bytes", starts, info);
      });
}

// L2 latency per partition: fine-grained loads over a footprint spread across every
// partition show one hit level per distance (near, far); the lowest is latency_cycles. A
// fine-grained sample is the load-to-use latency plus the cost of its own timing, which a
// pointer chase over the same footprint on the same SMs gives: the difference of the means.
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
        // Eight hit footprints together stay within half the first miss.
        const uint64_t hit_foot = std::max<uint64_t>(std::min<uint64_t>(512 * KiB, size / 16) / line * line, line);
        const size_t hit_arrays = size_t(std::clamp<int64_t>(ctx.device().sm_count, 1, 8));
        const Pooled hit = pooled_chases(ctx, hit_foot, line, 2, hit_arrays, true);
        const auto hits = big_levels(hit.raw);
        if (hits.empty()) throw memtopo::Error("no latency level in the L2 hit chase");
        // The timing's own cost, and what a noise term adds to a level's median beyond it.
        const double sample_cost =
            an::mean(an::to_doubles(hit.raw)) - hit.load_to_use + noise_in_centre(ctx, line);
        const memtopo::ResultInfo info{
            0.95, memtopo::Bound::Exact,
            "load-to-use: level centre of fine-grained .cg loads over warm footprints spread over the partitions (" +
                std::to_string(hit_arrays) + " arrays on as many SMs, pooled) minus the timing's own cost (" +
                std::to_string(sample_cost) + " cycles: their mean minus a pointer chase's over the same footprints, "
                "plus the median over the 10th percentile of one line re-read, the noise in a level's median)"};
        ctx.result("l2.latency_cycles", hits.front().centre - sample_cost, info);
        report_partitions(ctx, hits, sample_cost, info);
        // Misses: every line new, a footprint four times the first miss (cold, no warm-up pass).
        const auto miss = big_levels(pooled_chases(ctx, std::min<uint64_t>(4 * size, 512 * MiB), line, 0, 1, false).raw);
        if (!miss.empty() && miss.front().centre > hits.back().centre)
          ctx.result("l2.miss_penalty_cycles", miss.front().centre - hits.front().centre,
                     {0.9, memtopo::Bound::Exact, "lowest miss level minus the near hit level (fine-grained, raw)"});
      });
}

// What the occupancy may confirm: the API's L2 size, where an SM's lines spread over every
// partition (the simulator), or its even share per partition, where an SM fills the one near
// it (the H100: docs/results/h100.md).
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
