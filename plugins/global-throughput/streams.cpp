// global-throughput/streams and l1-streams: bandwidth surfaces of DRAM and the L2, and of the
// L1. Every block of a stream sweeps its own slice with accesses of one width, ILP of them in
// flight per thread; the search (streams_search.cpp) walks warps per SM, ILP, block size and
// width until the rate levels off. Reported: the best rate with the configuration that reached
// it, and the smallest configuration within 95 % of it. docs/global-throughput.md.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <memtopo/device/launch.hpp>
#include <memtopo/probe.hpp>

#include "probes.hpp"
#include "streams_series.hpp"
#include "streams_windows.hpp"

namespace global_throughput {
namespace {

// Where the next fresh lines start: each DRAM launch's footprint lies past an untouched lead of
// this size (StreamLaunch::ahead_bytes), which then grows by what the launch took; past
// `wrap_bytes` it starts over, whose lines many L2s' worth of lines since have evicted.
struct FreshLines {
  uint64_t next = 0, wrap_bytes = 0;
  uint64_t take(uint64_t span) {
    if (next + span > wrap_bytes) next = 0;
    const uint64_t at = next;
    next += span;
    return at;
  }
};

struct Plan {
  uint64_t dram_bytes = 0, l2_bytes = 0, l1_budget_bytes = 0;  // footprints (L1: per SM)
  uint32_t sms = 1;
  // The reads of one shared-inputs point (every block the whole footprint, pass after pass), and
  // of the series' points in all (the first point runs in any case).
  uint64_t shared_window_bytes = 0, shared_series_bytes = 0;
  // Shared-inputs windows shorter than a long window needs (the framework sized them where
  // every sector costs): each point is the difference of a long and a short window, its passes
  // after a warm one inside the launch.
  bool short_shared_windows = false;
  // DRAM windows shorter than a long one (else null): each point streams once over lines no
  // earlier window touched, beside a short window over lines of its own. A footprint under 32
  // L2s streamed again kept a part of itself in a random-replacement L2 (DRAM read 1 to 2 %
  // above its rate on four of twelve random devices).
  FreshLines* fresh = nullptr;
  // Points beyond what the search needs run where their launch holds at most this many
  // threads (memtopo::device::optional_launch_threads).
  uint64_t optional_threads = ~uint64_t(0);
};

// A DRAM point's window as the framework sizes it (memtopo::device::window_bytes): a long one
// of 32 L2s, at least 1 GiB, whose edges and the L2's share of its lines weigh little; where
// every sector costs, this much (at least sixteen rounds of every block, over fresh lines). Not
// less where the L2 is small: four times an L2 of 512 KiB made windows of 17 us, in which a few
// interruptions of 5000 cycles (0.4 % of loads) moved the two windows' difference, and the best
// of nine points read DRAM 1 to 2.5 % above its rate (random devices 30, 33, 41).
constexpr uint64_t kLeastDramWindowBytes = uint64_t(16) << 20;
uint64_t long_dram_window_bytes(uint64_t l2) { return std::max<uint64_t>(32 * l2, uint64_t(1) << 30); }

// The reads of one shared-inputs point: a long window of 16 GiB, or at least this much.
constexpr uint64_t kLongSharedWindowBytes = uint64_t(16) << 30;
constexpr uint64_t kLeastSharedWindowBytes = uint64_t(64) << 20;

// Passes of a shared-inputs point with two windows at least: the short one a quarter of them.
constexpr uint64_t kLeastSharedPasses = 4;

uint64_t round_bytes(const StreamConfig& c) { return uint64_t(c.threads) * c.ilp * c.width_bytes; }

// The bytes a point sweeps: the level's footprint (the L1's: half of it on every SM, in whole
// rounds of each block), or the point's own.
uint64_t footprint_of(const Series& s, const StreamConfig& c, const Plan& plan) {
  if (c.footprint_bytes) return c.footprint_bytes;
  if (s.where == Where::Dram) return plan.dram_bytes;
  if (s.where == Where::L2) return plan.l2_bytes;
  return plan.l1_budget_bytes / c.blocks_per_sm / round_bytes(c) * round_bytes(c) * c.blocks_per_sm * plan.sms;
}

// Whether every block of the point gets at least one round of its threads' accesses.
bool fits(const Series& s, const StreamConfig& c, const Plan& plan) {
  if (c.shape != uint32_t(StreamShape::Rounds)) return footprint_of(s, c, plan) >= round_bytes(c);
  return footprint_of(s, c, plan) / (uint64_t(c.blocks_per_sm) * plan.sms) >= round_bytes(c);
}

// Points of the other shape beside the search's: DRAM as a grid of a block per round (no
// block stays to drift from the others).
std::vector<StreamConfig> grid_points(const Series& s, uint32_t max_warps) {
  std::vector<StreamConfig> out;
  if (s.where == Where::Dram)
    for (uint32_t threads : {256u, 512u, 1024u})
      for (uint32_t ilp : {1u, 2u}) {
        StreamConfig c;
        c.shape = uint32_t(StreamShape::Grid);
        c.threads = threads;
        c.blocks_per_sm = std::max(1u, max_warps * 32 / threads);
        c.ilp = ilp;
        out.push_back(c);
      }
  return out;
}

// The shared-inputs series' points, every block reading a footprint of a 64th to a 4th of the
// L2 (every SM reads every line); with two windows, those whose pass the point's window holds
// four times, and where none does, the first with the footprint that it holds so (whole rounds
// of 8 KiB: 256 threads, ILP 2, 16 B).
std::vector<StreamConfig> shared_points(const Series& s, const Plan& plan) {
  const uint64_t most_pass = plan.short_shared_windows ? plan.shared_window_bytes / kLeastSharedPasses : ~uint64_t(0);
  std::vector<StreamConfig> out;
  StreamConfig c;
  c.shape = uint32_t(StreamShape::Shared);
  c.ilp = 2;
  for (uint64_t f = plan.l2_bytes / 16; f <= plan.l2_bytes; f *= 4)
    for (uint32_t blocks : {2u, 4u, 8u}) {
      c.blocks_per_sm = blocks;
      c.footprint_bytes = f;
      if (fits(s, c, plan) && f * blocks * plan.sms <= most_pass) out.push_back(c);
    }
  if (out.empty() && plan.short_shared_windows) {
    c.blocks_per_sm = 2;
    c.footprint_bytes = most_pass / (uint64_t(c.blocks_per_sm) * plan.sms) / 8192 * 8192;
    if (fits(s, c, plan)) out.push_back(c);
  }
  return out;
}

// The launch of one point: the footprint, the read path and the passes fit the level.
StreamLaunch launch_of(const Series& s, const StreamConfig& c, const Plan& plan) {
  StreamLaunch l;
  l.op = s.op;
  l.width_bytes = c.width_bytes;
  l.ilp = c.ilp;
  l.shape = StreamShape(c.shape);
  l.blocks = c.blocks_per_sm * plan.sms;
  l.threads = c.threads;
  l.cg = true;  // the L2 and DRAM series must not hit in L1
  l.warmup_passes = 1;
  l.passes = 3;
  if (s.where == Where::L2) {
    // 400 passes of a quarter of the L2: a launch of about 0.7 ms, whose start and end (some
    // microseconds) weigh under 1 %; at 100 passes an H200's best point read 8-10 % under a
    // kernel of 16 GiB in one launch (bench/bandwidth_check.cu, docs/results/log/h200.md).
    l.warmup_passes = 2;
    l.passes = 400;
  } else if (s.where == Where::L1) {
    l.cg = false;
    l.carveout_percent = 0;  // the largest L1
    l.warmup_passes = 2;
    // 4000 passes of half the L1: a window of about 2 ms on an H100. At 200 (0.1 ms) the
    // launch's own microseconds took 7 to 18 % of the rate by events, and moved it 7 % between
    // runs, while the bytes per SM cycle stayed within 0.2 % (docs/results/fleet.md).
    l.passes = 4000;
  }
  l.footprint_bytes = footprint_of(s, c, plan);
  if (plan.fresh && s.where == Where::Dram && l.shape == StreamShape::Rounds)
    // Sixteen rounds of every block at least: the short window (a quarter) then has four. A
    // window of a round or two is all start and drain, which the two windows do not share.
    l.footprint_bytes = std::max<uint64_t>(l.footprint_bytes, 16 * round_bytes(c) * l.blocks);
  if (plan.fresh && s.where == Where::Dram) {
    // One timed pass over fresh lines: they miss the L2 as the far lines of a long stream do.
    l.passes = 1;
  }
  if (l.shape == StreamShape::Shared) {  // every block reads it all: the point's window of reads
    l.warmup_passes = 1;
    const uint64_t pass = l.footprint_bytes * c.blocks_per_sm * plan.sms;
    l.passes = std::max<uint64_t>(plan.short_shared_windows ? kLeastSharedPasses : 1, plan.shared_window_bytes / pass);
    // Two windows: a warm pass inside the timed launch as well (the short window's difference
    // cancels it), as the SMs of a simulated GPU start each launch with empty caches.
    if (plan.short_shared_windows) l.inner_warm_passes = 1;
  }
  // A point that writes over part of the L2 series' footprint keeps its bytes per window: the
  // stores the SMs keep in flight, which their clocks do not wait for, must not cover a window.
  if (s.op != MT_SWEEP_READ && l.shape == StreamShape::Rounds && c.footprint_bytes && c.footprint_bytes < plan.l2_bytes)
    l.passes *= plan.l2_bytes / c.footprint_bytes;
  // Every window costs more than its passes: the launch, the pipeline's start, the blocks of
  // one SM starting their clocks apart, the last loads' latency and the stores still draining
  // after the blocks' last clock read. A second, shorter window costs as much besides them, and
  // the difference of the two is the passes alone (docs/global-throughput.md, "Two windows"): a
  // quarter of the shared-inputs passes, or DRAM's pass over a quarter of the footprint, lines
  // of their own. Only where windows are short (the framework sized DRAM's and the
  // shared-inputs points' under a long window, where every sector costs): a GPU's windows, and
  // the L2's and L1's everywhere, stream hundreds of times the bytes in flight, which leaves that
  // cost under 0.2 %, while a difference of two windows doubles their noise (an H100's L2 rates
  // moved by 4 to 5 % between runs with it, docs/results/log/h100.md).
  if (plan.short_shared_windows && l.shape == StreamShape::Shared) {
    l.short_passes = l.passes / 4;
  } else if (plan.fresh && s.where == Where::Dram && l.shape == StreamShape::Rounds) {
    l.short_passes = l.passes;
    l.short_footprint_bytes = l.footprint_bytes / 4;
  }
  if (plan.fresh && s.where == Where::Dram) {
    // Fresh lines miss without a warm pass, and a warm pass over them would leave the timed
    // one L2 hits: the L2's dirty lines are the stream's before (warm_for_writes).
    l.warmup_passes = 0;
    l.ahead_bytes = plan.fresh->take(stream_span_bytes(l));
  }
  return l;
}

// Before the first series that writes, on fresh lines: eight times the L2 written (at most
// 128 MiB, at least twice the L2), so that the L2 holds dirty lines, as a long stream leaves
// it, and each written line costs DRAM a write-back. Twice left an eighth of a random-replacement
// L2 with the read series' clean lines (DRAM writes read 4 to 49 % above their rate).
void warm_for_writes(const memtopo::Context& ctx, const Plan& plan, uint64_t l2_bytes) {
  StreamLaunch l;
  l.op = MT_SWEEP_WRITE;
  l.blocks = 8 * plan.sms;
  l.footprint_bytes = std::max(2 * l2_bytes, std::min(8 * l2_bytes, uint64_t(128) << 20));
  l.warmup_passes = 0;
  l.ahead_bytes = plan.fresh->take(stream_span_bytes(l));
  run_stream(ctx, l);
}



// The series of the streams probe, in the order they run.
std::vector<Series> dram_and_l2_series() {
  return {{"dram_read", Where::Dram, MT_SWEEP_READ}, {"dram_write", Where::Dram, MT_SWEEP_WRITE},
          {"dram_copy", Where::Dram, MT_SWEEP_COPY},   {"dram_update", Where::Dram, MT_SWEEP_UPDATE},
          {"l2_read", Where::L2, MT_SWEEP_READ},       {"l2_write", Where::L2, MT_SWEEP_WRITE},
          {"l2_shared_read", Where::L2, MT_SWEEP_READ, true}};
}

// The series the `series` option names, in the probe's order; the keys of the others are
// absent with the reason. A name that is no series is an error that lists them.
std::vector<Series> selected_series(memtopo::Context& ctx, const std::vector<Series>& every) {
  const std::vector<std::string> named = ctx.option<std::vector<std::string>>("series");
  std::string known;
  for (const Series& s : every) known += (known.empty() ? "" : ", ") + std::string(s.name);
  for (const std::string& n : named)
    if (std::none_of(every.begin(), every.end(), [&](const Series& s) { return n == s.name; }))
      throw memtopo::Error("option series: unknown series '" + n + "' (known: " + known + ")");
  std::vector<Series> out;
  for (const Series& s : every) {
    if (std::find(named.begin(), named.end(), s.name) != named.end()) out.push_back(s);
    else absent_series(ctx, s, "not among the series the series option names");
  }
  return out;
}

// One window of a configuration: its rate as the search maximizes it, its per-cycle rate and
// its raw row.
struct Window {
  double rate = 0, per_cycle = 0;
  std::vector<double> row;
  StreamRun run;
};

Window window_of(const Series& s, const Plan& plan, const StreamConfig& c, const StreamRun& r) {
  const double bytes = double(r.bytes), cycles = double(std::max<uint64_t>(r.cycles, 1));
  const double per_second = bytes / std::max(1.0, double(r.elapsed_ns)) * 1e9;
  // A grid keeps no SM clocks; blocks beyond what an SM holds run in waves, and then the
  // slowest block's cycles are not the passes' (the rate by events still is).
  const bool waves = c.shape != uint32_t(StreamShape::Grid) && r.blocks_per_sm && c.blocks_per_sm > r.blocks_per_sm;
  // Stores: the SMs' clocks stop while the stores they keep in flight (up to their requests in
  // flight, a whole window's worth where windows are short) still drain; the events wait for
  // them, so the rate by events over the SM clock is the stores' (random simulated devices'
  // L2 writes read up to 1.5 times their rate by the SMs' spans; an H100's agree within 1 %).
  const bool stores = s.op != MT_SWEEP_READ && r.sm_clock_mhz > 0 && r.elapsed_ns > 0;
  const double gpu_per_cycle = stores ? per_second / (r.sm_clock_mhz * 1e6) : r.cycles && !waves ? bytes / cycles : 0;
  Window w;
  w.per_cycle = s.where == Where::L1 ? gpu_per_cycle / plan.sms : gpu_per_cycle;
  w.row = {double(c.blocks_per_sm), double(c.threads), double(c.ilp), double(c.width_bytes), per_second,
           gpu_per_cycle, double(r.elapsed_ns), double(r.cycles), double(r.blocks_per_sm), double(r.shortest_cycles)};
  // The L1's rate is the SMs' own: cycles, not the launch's time, which its short passes
  // would dilute.
  w.rate = s.where == Where::L1 ? w.per_cycle : per_second;
  w.run = r;
  return w;
}

Window measure_window(memtopo::Context& ctx, const Series& s, const Plan& plan, const StreamConfig& c) {
  return window_of(s, plan, c, run_stream(ctx, launch_of(s, c, plan)));
}

// The best point measured again: where its second window agrees with its first within this,
// the windows are quiet (a simulated GPU without noise prices each alike) and the first stands.
constexpr double kQuietWindows = 0.005;

// The three highest points measured twice more, each keeping its median window (the highest of
// many single windows is the one noise shortened most), unless the best point's second window
// shows the windows quiet; then the best point under the counters.
void settle_best(memtopo::Context& ctx, const Series& s, const Plan& plan, Measured& m, std::vector<double>& per_cycle) {
  if (m.points.empty()) return;
  std::vector<std::vector<Window>> repeats(m.points.size());
  std::vector<size_t> used(m.points.size(), 0);
  auto remeasure = [&](size_t i) {  // a repeat measured before is used first
    if (used[i] == repeats[i].size()) repeats[i].push_back(measure_window(ctx, s, plan, m.points[i].config));
    return repeats[i][used[i]++].rate;
  };
  auto keep = [&](size_t i, size_t w) {
    if (w == 0) return;
    const Window& kept = repeats[i][w - 1];
    per_cycle[i] = kept.per_cycle;
    std::copy(kept.row.begin(), kept.row.end(), m.rows.begin() + long(kColumns * i));
  };
  const size_t first_best = best_point(m.points);
  const double first = m.points[first_best].rate;
  repeats[first_best].push_back(measure_window(ctx, s, plan, m.points[first_best].config));
  const double again = repeats[first_best].back().rate;
  if (first > 0 && std::fabs(again - first) <= kQuietWindows * first) {
    m.best_spread = std::fabs(again - first) / first;
  } else {
    std::vector<double> firsts(m.points.size());
    for (size_t i = 0; i < m.points.size(); ++i) firsts[i] = m.points[i].rate;
    confirm_best(m.points, 3, 2, remeasure, keep);
    m.median_windows = true;
    auto quickest = [&](size_t i) {  // runs of two windows: the quickest of each
      if (repeats[i].empty() || !m.first_runs[i].short_elapsed_ns) return false;
      std::vector<StreamRun> runs{m.first_runs[i]};
      for (const Window& w : repeats[i]) runs.push_back(w.run);
      const Window w = window_of(s, plan, m.points[i].config, quickest_windows(runs));
      m.points[i].rate = w.rate;
      per_cycle[i] = w.per_cycle;
      std::copy(w.row.begin(), w.row.end(), m.rows.begin() + long(kColumns * i));
      return true;
    };
    for (size_t i = 0; i < m.points.size(); ++i) quickest(i);
    const size_t best = best_point(m.points);
    std::vector<double> rates{firsts[best]};
    for (const Window& w : repeats[best]) rates.push_back(w.rate);
    const auto [lo, hi] = std::minmax_element(rates.begin(), rates.end());
    if (rates.size() >= 3 && m.points[best].rate > 0) m.best_spread = (*hi - *lo) / m.points[best].rate;
    m.quickest_windows = quickest(best);
    if (m.quickest_windows && m.best_spread > kPairedWindowSpread) {
      // Noisy runs: two more, whose quickest windows come closer to the passes alone.
      for (int k = 0; k < 2; ++k) repeats[best].push_back(measure_window(ctx, s, plan, m.points[best].config));
      quickest(best);
    }
  }
  const size_t best = best_point(m.points);
  m.best_per_cycle = per_cycle[best];
  m.check = check_point(ctx, s.level(), launch_of(s, m.points[best].config, plan));
}

Measured measure_series(memtopo::Context& ctx, const Series& s, const Plan& plan) {
  const mt_device_info& d = ctx.device();
  SearchSpace space;
  if (d.max_threads_per_sm > 0) space.max_warps_per_sm = uint32_t(d.max_threads_per_sm / 32);
  if (d.max_blocks_per_sm > 0) space.max_blocks_per_sm = uint32_t(d.max_blocks_per_sm);
  if (d.max_threads_per_block > 0) space.max_threads_per_block = uint32_t(d.max_threads_per_block);
  space.allowed = [&](const StreamConfig& c) { return fits(s, c, plan); };
  // Points beyond the search's answer (other block sizes and widths at the best, the other
  // shapes) where the backend affords them: their launches' threads and the device's at most
  // what it runs beside a probe's answer (on the simulated GPU, each thread and each point cost
  // in proportion to the SMs).
  const uint64_t resident = uint64_t(space.max_warps_per_sm) * 32 * plan.sms;
  auto optional = [&](const StreamConfig& c) {
    const uint64_t blocks = c.shape == uint32_t(StreamShape::Grid) ? footprint_of(s, c, plan) / round_bytes(c)
                                                                    : uint64_t(c.blocks_per_sm) * plan.sms;
    return std::max(resident, blocks * c.threads) <= plan.optional_threads;
  };
  space.refine = resident <= plan.optional_threads;
  Measured m;
  std::vector<double> per_cycle;
  auto measure = [&](const StreamConfig& c) {
    Window w = measure_window(ctx, s, plan, c);
    per_cycle.push_back(w.per_cycle);
    m.first_runs.push_back(w.run);
    m.rows.insert(m.rows.end(), w.row.begin(), w.row.end());
    return w.rate;
  };
  if (s.shared_inputs) {
    uint64_t read = 0;
    for (const StreamConfig& c : shared_points(s, plan)) {
      if (read >= plan.shared_series_bytes) break;
      m.points.push_back({c, measure(c)});
      read += m.first_runs.back().launch_read_bytes;
    }
    settle_best(ctx, s, plan, m, per_cycle);
    return m;
  }
  m.points = search_surface(space, measure);
  if (s.where == Where::L2 && s.op == MT_SWEEP_READ && !m.points.empty()) {
    // Smaller footprints at the best point: lines a few SMs share may be copied into both
    // partitions, and then every read is a near hit. Writes have no such copies.
    StreamConfig c = m.points[best_point(m.points)].config;
    for (uint64_t f = plan.l2_bytes / 2; f >= plan.l2_bytes / 16; f /= 2) {
      c.footprint_bytes = f;
      if (!fits(s, c, plan)) break;
      m.points.push_back({c, measure(c)});
    }
  }
  // The other shapes answer effects of a GPU (blocks that drift apart, far lines copied near);
  // a grid costs the simulated GPU a thread per round.
  for (const StreamConfig& c : grid_points(s, space.max_warps_per_sm))
    if (fits(s, c, plan) && optional(c)) m.points.push_back({c, measure(c)});
  settle_best(ctx, s, plan, m, per_cycle);
  return m;
}

// The series of DRAM and the L2 (streams), or of the L1 (l1-streams, which needs the L1's size
// for its footprint: a probe of its own, so that asking for its keys alone measures the L1 as a
// default run does).
void measure_streams(memtopo::Context& ctx, bool l1) {
  if (!ctx.backend().has(MT_CAP_KERNELS)) throw memtopo::Skip("the backend runs no probe kernels (MT_CAP_KERNELS)");
  const mt_device_info& d = ctx.device();
  Plan plan;
  plan.sms = uint32_t(std::max(1, d.sm_count));
  // The device's L2 in all its partitions: a measured l2.size_bytes may be one partition's.
  const uint64_t l2 = d.l2_bytes > 0 ? uint64_t(d.l2_bytes) : uint64_t(ctx.try_input<int64_t>("l2.size_bytes").value_or(0));
  if (l2 == 0 && !l1) throw memtopo::Skip("no L2 size known (device.l2_bytes, l2.size_bytes)");
  plan.l2_bytes = l2 / 4;
  plan.dram_bytes = memtopo::device::window_bytes(ctx, long_dram_window_bytes(l2), kLeastDramWindowBytes);
  const bool short_dram_windows = plan.dram_bytes < long_dram_window_bytes(l2);
  if (d.global_memory_bytes > 0) plan.dram_bytes = std::min<uint64_t>(plan.dram_bytes, uint64_t(d.global_memory_bytes) / 4);
  plan.shared_window_bytes = memtopo::device::window_bytes(ctx, kLongSharedWindowBytes, kLeastSharedWindowBytes);
  plan.short_shared_windows = plan.shared_window_bytes < kLongSharedWindowBytes;
  // The series' reads: what its points take; where every sector costs, one window's.
  plan.shared_series_bytes = memtopo::device::window_bytes(ctx, ~uint64_t(0), kLeastSharedWindowBytes);
  plan.optional_threads = memtopo::device::optional_launch_threads(ctx);
  FreshLines fresh;
  if (short_dram_windows) {
    // Sixteen L2s of lines before the addresses come back, within a quarter of the memory.
    fresh.wrap_bytes = std::max<uint64_t>(16 * l2, 8 * plan.dram_bytes);
    if (d.global_memory_bytes > 0) fresh.wrap_bytes = std::min<uint64_t>(fresh.wrap_bytes, uint64_t(d.global_memory_bytes) / 4);
    plan.fresh = &fresh;
  }
  if (l1) plan.l1_budget_bytes = uint64_t(std::max<int64_t>(ctx.input<int64_t>("l1d.size_bytes"), 0)) / 2;
  if (l1 && plan.l1_budget_bytes == 0) throw memtopo::Skip("l1d.size_bytes is 0: no L1 to stream from");
  const std::vector<Series> all =
      l1 ? std::vector<Series>{{"l1_read", Where::L1, MT_SWEEP_READ}} : selected_series(ctx, dram_and_l2_series());
  double theoretical = 0;
  if (!l1 && d.memory_clock_khz > 0 && d.memory_bus_width_bits > 0)
    theoretical = 2.0 * double(d.memory_clock_khz) * 1e3 * double(d.memory_bus_width_bits) / 8;  // two transfers a clock
  bool warmed = false;
  for (size_t i = 0; i < all.size(); ++i) {
    const Series& s = all[i];
    ctx.progress(double(i) / double(all.size()), s.name);
    if (plan.fresh && s.where == Where::Dram && s.op != MT_SWEEP_READ && !warmed) {
      warm_for_writes(ctx, plan, l2);
      warmed = true;
    }
    const Measured m = measure_series(ctx, s, plan);
    if (m.points.empty()) {
      absent_series(ctx, s, "no configuration of the series ran");
      continue;
    }
    ctx.raw(s.name, {"blocks_per_sm", "threads", "ilp", "width_bytes", "bytes_per_second", "bytes_per_cycle",
                     "elapsed_ns", "cycles", "resident_blocks_per_sm", "shortest_sm_cycles"},
            m.rows);
    report_series(ctx, s, m);
    const bool refuted = m.check.counted && m.check.verdict.complete && !m.check.agrees;
    if ((s.op == MT_SWEEP_READ || s.op == MT_SWEEP_WRITE) && s.where == Where::Dram) {
      const std::string fraction_key = std::string("throughput.") + s.name + "_fraction_of_theoretical";
      if (theoretical <= 0) ctx.absent(fraction_key, kNoTheoretical);
      else if (refuted) ctx.absent(fraction_key, "its rate disagrees with the hardware counters");
      else report_fraction(ctx, s.name, m.rows[kColumns * best_point(m.points) + 4], theoretical);
    }
  }
  if (theoretical > 0)
    ctx.result("throughput.dram_theoretical_bytes_per_second", theoretical,
               {1.0, memtopo::Bound::Exact, "device.memory_clock_khz x 2 transfers x memory_bus_width_bits / 8"});
  else if (!l1)
    ctx.absent("throughput.dram_theoretical_bytes_per_second", kNoTheoretical);
}

// The keys of one series: the rate (a headline one for `headline`), its configuration and the
// smallest within 95 %.
void add_series_keys(memtopo::Probe& p, std::vector<std::string>& keys, const std::string& s, bool headline) {
  const std::string k = "throughput." + s;
  keys.insert(keys.end(), {k + "_bytes_per_second", k + "_best_config", k + "_min95_config"});
  const std::string meaning = s == "l2_shared_read"
                                  ? "best rate at which the L2 side delivers lines that every SM reads at once (shared "
                                    "inputs; merged requests: not the L2's bandwidth), by events"
                              : s == "l2_read" ? "best L2 read rate of all SMs, each SM its own lines, by events"
                                               : "best " + s + " rate of all SMs, by events";
  // DRAM rates stay within 2 % over healthy GPUs of a model (docs/fleet.md, "Rated keys"); the
  // L1 and L2 rates spread wider: only a measured table rates them.
  const uint32_t rated = s.rfind("dram", 0) == 0 ? MT_KEY_RATED : 0u;
  p.key(k + "_bytes_per_second", MT_VALUE_FLOAT, "", meaning, (headline ? MT_KEY_HEADLINE : 0u) | rated)
      .key(k + "_best_config", MT_VALUE_STRING, "", "the configuration of the best rate", MT_KEY_SETTING)
      .key(k + "_min95_config", MT_VALUE_STRING, "", "fewest bytes in flight per SM within 95 % of the best",
           MT_KEY_SETTING);
}

// Each series a surface: the best rate of each (blocks per SM, threads) cell, the best
// configuration and the fewest bytes in flight within 95 % outlined.
memtopo::Probe::Plot surface_plot() {
  return memtopo::Probe::Plot::heatmap("*", "threads", "blocks_per_sm", "bytes_per_second")
      .marks("cell:throughput.{series}_best_config;cell:throughput.{series}_min95_config");
}

}  // namespace

memtopo::Probe streams_probe() {
  memtopo::Probe p("global-throughput/streams");
  p.roles({{"throughput.dram_read_bytes_per_second", "memory.read_bytes_per_second@main"},
           {"throughput.dram_write_bytes_per_second", "memory.write_bytes_per_second@main"},
           {"throughput.l2_read_bytes_per_second", "cache.read_bytes_per_second@l2_cache"},
           {"throughput.l2_write_bytes_per_second", "cache.write_bytes_per_second@l2_cache"},
           {"throughput.dram_theoretical_bytes_per_second", "memory.theoretical_bytes_per_second@main"},
           {"throughput.dram_read_fraction_of_theoretical", "memory.read_fraction_of_theoretical@main"},
           {"throughput.dram_write_fraction_of_theoretical", "memory.write_fraction_of_theoretical@main"}});
  p.plot(surface_plot());
  p.summary("Bandwidth of DRAM and the L2 over blocks, threads, ILP and width: the best, and the smallest within 95 %")
      .uses({"l2.size_bytes"});
  std::string every;
  for (const Series& s : dram_and_l2_series()) every += (every.empty() ? "" : ",") + std::string(s.name);
  p.option("series", MT_VALUE_STRING_ARRAY, every, "series measured (of " + every + ")");
  std::vector<std::string> keys;
  // The headline rates: DRAM read and write, L2 read (and L1 read, l1_streams_probe).
  for (const Series& series : dram_and_l2_series()) {
    const std::string s = series.name;
    add_series_keys(p, keys, s, s == "dram_read" || s == "dram_write" || s == "l2_read");
  }
  keys.insert(keys.end(), {"throughput.l2_read_bytes_per_cycle", "throughput.l2_write_bytes_per_cycle",
                           "throughput.dram_theoretical_bytes_per_second",
                           "throughput.dram_read_fraction_of_theoretical", "throughput.dram_write_fraction_of_theoretical"});
  p.key("throughput.l2_read_bytes_per_cycle", MT_VALUE_FLOAT, "", "best L2 read rate of all SMs per SM cycle")
      .key("throughput.l2_write_bytes_per_cycle", MT_VALUE_FLOAT, "", "best L2 write rate of all SMs per SM cycle")
      .key("throughput.dram_theoretical_bytes_per_second", MT_VALUE_FLOAT, "", "memory clock x 2 x bus width",
           MT_KEY_RATED)
      .key("throughput.dram_read_fraction_of_theoretical", MT_VALUE_FLOAT, "", "best DRAM read rate over the theoretical",
           MT_KEY_HEADLINE | MT_KEY_RATED)
      .key("throughput.dram_write_fraction_of_theoretical", MT_VALUE_FLOAT, "", "best DRAM write rate over the theoretical",
           MT_KEY_RATED);
  // The simulator's peak rates; the others follow from them.
  for (const char* k : {"l2_read_bytes_per_cycle", "l2_write_bytes_per_cycle"})
    p.replays(std::string("throughput.") + k, std::string("sim.memory.") + k);
  p.replays("throughput.dram_read_bytes_per_second", "sim.memory.dram_read_bytes_per_second")
      .replays("throughput.dram_write_bytes_per_second", "sim.memory.dram_write_bytes_per_second")
      .replays("throughput.dram_copy_bytes_per_second", "sim.memory.dram_copy_bytes_per_second");
  // 120 s: the sanitized build's simulated GPU needs about 70 s (a GPU or the plain simulator 7 to 30).
  return p.provides(keys).budget_seconds(120).run([](memtopo::Context& ctx) { measure_streams(ctx, false); });
}

memtopo::Probe l1_streams_probe() {
  memtopo::Probe p("global-throughput/l1-streams");
  p.roles({{"throughput.l1_read_bytes_per_second", "cache.read_bytes_per_second@l1_cache"},
           {"throughput.l1_read_bytes_per_cycle_per_sm", "cache.read_bytes_per_cycle_per_sm@l1_cache"}});
  p.plot(surface_plot());
  p.summary("Bandwidth of the L1 over blocks, threads, ILP and width: the best, and the smallest within 95 %")
      .requires_keys({"l1d.size_bytes"});
  std::vector<std::string> keys;
  add_series_keys(p, keys, "l1_read", true);
  keys.push_back("throughput.l1_read_bytes_per_cycle_per_sm");
  p.key("throughput.l1_read_bytes_per_cycle_per_sm", MT_VALUE_FLOAT, "", "best L1 read rate of one SM")
      .replays("throughput.l1_read_bytes_per_cycle_per_sm", "sim.memory.l1_read_bytes_per_cycle_per_sm");
  return p.provides(keys).budget_seconds(60).run([](memtopo::Context& ctx) { measure_streams(ctx, true); });
}

}  // namespace global_throughput
