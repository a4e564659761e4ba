// The bandwidth-stream kernels: every block sweeps its own rounds (or one round, or all of
// them), each thread keeping ILP accesses of one width in flight, its warp's accesses adjacent
// (docs/global-throughput.md, "Method"). One instantiation per shape, operation, width, ILP and
// read path; each sweep is one toolkit access program, so the simulated GPU prices it per warp
// instruction.
#include <algorithm>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <memtopo/device/kernel.hpp>

#include "streams_run.hpp"

namespace global_throughput {
namespace {

namespace md = memtopo::device;

constexpr unsigned kNever = 0x9e3779b9u;  // what no fold is in practice: the reads must not be dropped
constexpr uint32_t kMostWindowScale = 64;  // two windows at most this many times their passes

// `warm` passes before the clock starts, `passes` timed (the GPU's warm-up is a launch of its
// own: the simulated GPU, whose SMs' caches start each launch empty, warms the L1 here).
template <uint32_t Op, int W, int Ilp, bool Cg>
MEMTOPO_KERNEL void rounds_kernel(const char* src, char* dst, unsigned long long slice_bytes, unsigned warm,
                                  unsigned passes, unsigned long long* block_cycles, unsigned* sink) {
  constexpr md::Path P = Cg ? md::Path::GlobalCg : md::Path::GlobalCa;
  // A block's slice is every grid-th round of the footprint, from round blockIdx on: at any time
  // the blocks read neighbouring rounds, as DRAM pages favour, and each block still re-reads
  // only its own lines in the next pass, as an L1 needs.
  const unsigned threads = md::block_threads(), block = md::block_index(), blocks = md::grid_blocks();
  const unsigned long long round = (unsigned long long)(threads) * Ilp, rounds = slice_bytes / W / round;
  const char* s = src + block * round * W;
  char* d = (Op == MT_SWEEP_COPY ? dst : const_cast<char*>(src)) + block * round * W;
  const unsigned long long n = rounds * blocks * round, step = round * blocks;
  unsigned acc = md::sweep<Op, P, W, Ilp>(s, d, md::thread_index(), n, step, threads, 0, warm);
  md::sync_block();
  const unsigned long long t0 = md::clock_now();
  acc ^= md::sweep<Op, P, W, Ilp>(s, d, md::thread_index(), n, step, threads, 0, passes);
  md::sync_block();
  const unsigned long long t1 = md::clock_now();
  if (md::thread_index() == 0) {
    block_cycles[3 * block] = t1 - t0;
    block_cycles[3 * block + 1] = t0;
    block_cycles[3 * block + 2] = md::smid();
  }
  if (acc == kNever) sink[0] = acc;
}

// A block per round: block b makes round b once; a launch is one pass.
template <uint32_t Op, int W, int Ilp, bool Cg>
MEMTOPO_KERNEL void grid_kernel(const char* src, char* dst, unsigned long long, unsigned, unsigned pass,
                                unsigned long long*, unsigned* sink) {
  constexpr md::Path P = Cg ? md::Path::GlobalCg : md::Path::GlobalCa;
  const unsigned long long i = (unsigned long long)(md::block_index()) * md::block_threads() * Ilp + md::thread_index();
  char* d = Op == MT_SWEEP_COPY ? dst : const_cast<char*>(src);
  const unsigned acc = md::sweep<Op, P, W, Ilp>(src, d, i, i + 1, 1, md::block_threads(), pass);
  if (acc == kNever) sink[0] = acc;
}

// Every block reads all `rounds` rounds, from its own on, `passes` times.
template <uint32_t Op, int W, int Ilp, bool Cg>
MEMTOPO_KERNEL void shared_kernel(const char* src, char*, unsigned long long rounds, unsigned warm, unsigned passes,
                                  unsigned long long* block_cycles, unsigned* sink) {
  constexpr md::Path P = Cg ? md::Path::GlobalCg : md::Path::GlobalCa;
  const unsigned threads = md::block_threads(), t = md::thread_index();
  const unsigned long long round = (unsigned long long)(threads) * Ilp, from = md::block_index() % rounds;
  unsigned long long t0 = 0;
  unsigned acc = 0;
  for (unsigned p = 0; p < warm + passes; ++p) {
    if (p == warm) {
      md::sync_block();
      t0 = md::clock_now();
    }
    acc ^= md::sweep<MT_SWEEP_READ, P, W, Ilp>(src, nullptr, from * round + t, rounds * round, round, threads, p);
    acc ^= md::sweep<MT_SWEEP_READ, P, W, Ilp>(src, nullptr, t, from * round, round, threads, p);
  }
  md::sync_block();
  const unsigned long long t1 = md::clock_now();
  if (t == 0) {
    block_cycles[3 * md::block_index()] = t1 - t0;
    block_cycles[3 * md::block_index() + 1] = t0;
    block_cycles[3 * md::block_index() + 2] = md::smid();
  }
  if (acc == kNever) sink[0] = acc;
}

struct Buffers {
  const char* src;
  char* dst;
  unsigned long long* cycles;
  unsigned* sink;
  const md::Buffer<unsigned long long>* block_cycles;  // `cycles`, to download
  unsigned long long short_arg;  // the short window's footprint argument (0: no short window)
  const char* short_src;         // where the short window reads and writes
  char* short_dst;
};

// One SM's span of the timed passes, from its first block's start to its last block's end (one
// SM's clock): blocks of one SM that start their timed passes apart then count the whole time
// they shared it. The longest and the shortest over the SMs, and the blocks' mean. `overlap`:
// whether on every SM the last block started before the first one ended (every block in its
// passes at once).
void sm_spans(const std::vector<unsigned long long>& c, uint64_t& longest, uint64_t& shortest, double& mean,
              bool& overlap) {
  struct Span {
    unsigned long long first_start, last_end, last_start, first_end;
  };
  std::map<unsigned long long, Span> sm_span;
  double sum = 0;
  for (size_t b = 0; b < c.size(); b += 3) {
    const unsigned long long start = c[b + 1], end = c[b + 1] + c[b];
    auto [it, fresh] = sm_span.try_emplace(c[b + 2], Span{start, end, start, end});
    if (!fresh) {
      Span& s = it->second;
      s = {std::min(s.first_start, start), std::max(s.last_end, end), std::max(s.last_start, start),
           std::min(s.first_end, end)};
    }
    sum += double(c[b]);
  }
  longest = 0;
  shortest = sm_span.empty() ? 0 : ~uint64_t(0);
  overlap = true;
  for (const auto& [sm, span] : sm_span) {
    longest = std::max<uint64_t>(longest, span.last_end - span.first_start);
    shortest = std::min<uint64_t>(shortest, span.last_end - span.first_start);
    overlap = overlap && span.last_start < span.first_end;
  }
  mean = sum / double(std::max<size_t>(c.size() / 3, 1));
}

// `arg` is the kernel's footprint argument: a block's slice, or the rounds of the shared shape.
template <auto K>
StreamRun run_resident(const memtopo::Context& ctx, const StreamLaunch& l, const Buffers& b, unsigned long long arg) {
  md::LaunchConfig cfg;
  cfg.grid = {l.blocks};
  cfg.block = {l.threads};
  cfg.shared_carveout_percent = l.carveout_percent;
  cfg.warmup_launches = 0;
  if (l.warmup_passes > 0)
    md::launch<K>(ctx, "stream (warm-up)", cfg, b.src, b.dst, arg, 0u, unsigned(l.warmup_passes), b.cycles, b.sink);
  // A window: its events and its SMs' spans.
  bool overlap = true;
  auto window = [&](const char* src, char* dst, unsigned long long footprint, uint64_t passes, StreamRun& w) {
    const md::LaunchReport r = md::launch<K>(ctx, "stream", cfg, src, dst, footprint, unsigned(l.inner_warm_passes),
                                             unsigned(passes), b.cycles, b.sink);
    w.elapsed_ns = r.elapsed_ms * 1e6;
    w.sm_clock_mhz = 0.5 * (r.sm_clock_mhz_before + r.sm_clock_mhz_after);
    sm_spans(b.block_cycles->download(), w.cycles, w.shortest_cycles, w.average_cycles, overlap);
  };
  StreamRun out;
  if (l.count) {  // the long window alone, under the counters: what it moves, not its rate
    out.counted = ctx.backend().count([&] { window(b.src, b.dst, arg, l.passes, out); }, l.count);
    out.blocks_per_sm = uint32_t(md::max_active_blocks_per_sm<K>(ctx, "stream", cfg));
    return out;
  }
  if (b.short_arg > 0) {
    // What a window costs besides its passes (the launch, the first loads' latency, the last
    // ones' drain, stores still in flight) is in the short window too: the difference is the
    // passes alone. Only where each SM's blocks all pass at once in the short window: blocks
    // that start apart (their warm passes queue at the L2) and leave the level idle between
    // them there but not in the long window make the difference too small (random simulated
    // devices' L1 read 4 times its rate). Else both windows again, each 4 times as long.
    for (uint32_t scale = 1;; scale *= 4) {
      window(b.src, b.dst, arg, l.passes * scale, out);
      StreamRun s;
      window(b.short_src, b.short_dst, b.short_arg, l.short_passes * scale, s);
      if (!overlap && scale < kMostWindowScale) continue;
      out.long_elapsed_ns = out.elapsed_ns, out.short_elapsed_ns = s.elapsed_ns;
      out.long_cycles = out.cycles, out.short_cycles = s.cycles;
      out.elapsed_ns = std::max(0.0, out.elapsed_ns - s.elapsed_ns);
      out.cycles = out.cycles > s.cycles ? out.cycles - s.cycles : 0;
      out.shortest_cycles = 0;  // the SMs' spans of two windows do not subtract SM by SM
      out.average_cycles -= s.average_cycles;
      out.window_scale = scale;
      break;
    }
  } else {
    window(b.src, b.dst, arg, l.passes, out);
  }
  out.blocks_per_sm = uint32_t(md::max_active_blocks_per_sm<K>(ctx, "stream", cfg));
  return out;
}

template <auto K>
StreamRun run_grid(const memtopo::Context& ctx, const StreamLaunch& l, const Buffers& b) {
  md::LaunchConfig cfg;
  cfg.grid = {l.blocks};
  cfg.block = {l.threads};
  cfg.shared_carveout_percent = l.carveout_percent;
  cfg.warmup_launches = int(l.warmup_passes);
  cfg.timed_launches = int(l.passes);
  md::LaunchReport r;
  StreamRun out;
  if (l.count) {  // the warm-up launches apart, outside the counts
    md::LaunchConfig warm = cfg;
    warm.timed_launches = 1;
    md::launch<K>(ctx, "stream (grid, warm-up)", warm, b.src, b.dst, 0ull, 0u, 0u, b.cycles, b.sink);
    cfg.warmup_launches = 0;
    out.counted = ctx.backend().count(
        [&] { r = md::launch<K>(ctx, "stream (grid)", cfg, b.src, b.dst, 0ull, 0u, 0u, b.cycles, b.sink); }, l.count);
  } else {
    r = md::launch<K>(ctx, "stream (grid)", cfg, b.src, b.dst, 0ull, 0u, 0u, b.cycles, b.sink);
  }
  out.elapsed_ns = r.elapsed_ms * 1e6;
  out.blocks_per_sm = uint32_t(md::max_active_blocks_per_sm<K>(ctx, "stream (grid)", cfg));
  return out;
}

// Only the kernels the probe launches are built (a third of every combination: the build's
// longest compilation): grids of 16 B accesses at ILP 1 or 2 (DRAM's other shapes), the shared
// inputs' reads of 16 B at ILP 2, and .ca loads for reads alone (the L1's series).
template <uint32_t Op, int W, int Ilp, bool Cg>
StreamRun run_shape(const memtopo::Context& ctx, const StreamLaunch& l, const Buffers& b, unsigned long long arg) {
  if constexpr (W == 16 && Ilp <= 2 && Cg) {
    if (l.shape == StreamShape::Grid) return run_grid<grid_kernel<Op, W, Ilp, Cg>>(ctx, l, b);
    if constexpr (Op == MT_SWEEP_READ && Ilp == 2)
      if (l.shape == StreamShape::Shared) return run_resident<shared_kernel<Op, W, Ilp, Cg>>(ctx, l, b, arg);
  }
  if (l.shape != StreamShape::Rounds)
    throw std::invalid_argument("stream: shape " + std::to_string(uint32_t(l.shape)) + " is built for " +
                                (l.shape == StreamShape::Grid ? "16 B accesses at ILP 1 or 2, read through the L2"
                                                              : "16 B reads at ILP 2 through the L2") +
                                ", not " + std::to_string(W) + " B at ILP " + std::to_string(Ilp));
  return run_resident<rounds_kernel<Op, W, Ilp, Cg>>(ctx, l, b, arg);
}
template <uint32_t Op, int W, int Ilp>
StreamRun run_path(const memtopo::Context& ctx, const StreamLaunch& l, const Buffers& b, unsigned long long arg) {
  if constexpr (Op == MT_SWEEP_READ)
    if (!l.cg) return run_shape<Op, W, Ilp, false>(ctx, l, b, arg);
  if (!l.cg) throw std::invalid_argument("stream: stores and copies are built to go through the L2 only (cg)");
  return run_shape<Op, W, Ilp, true>(ctx, l, b, arg);
}
template <uint32_t Op, int W>
StreamRun run_ilp(const memtopo::Context& ctx, const StreamLaunch& l, const Buffers& b, unsigned long long arg) {
  switch (l.ilp) {
    case 1: return run_path<Op, W, 1>(ctx, l, b, arg);
    case 2: return run_path<Op, W, 2>(ctx, l, b, arg);
    case 4: return run_path<Op, W, 4>(ctx, l, b, arg);
    default: return run_path<Op, W, 8>(ctx, l, b, arg);
  }
}
template <uint32_t Op>
StreamRun run_width(const memtopo::Context& ctx, const StreamLaunch& l, const Buffers& b, unsigned long long arg) {
  switch (l.width_bytes) {
    case 4: return run_ilp<Op, 4>(ctx, l, b, arg);
    case 8: return run_ilp<Op, 8>(ctx, l, b, arg);
    default: return run_ilp<Op, 16>(ctx, l, b, arg);
  }
}

}  // namespace

uint64_t stream_span_bytes(const StreamLaunch& l) {
  constexpr uint64_t kAlign = uint64_t(2) << 20;
  const uint64_t buffer = (l.footprint_bytes + l.short_footprint_bytes + kAlign - 1) / kAlign * kAlign;
  // src and dst, then the clocks and the sink.
  return (l.op == MT_SWEEP_COPY ? 2 : 1) * buffer + 2 * kAlign;
}

StreamRun run_stream(const memtopo::Context& ctx, const StreamLaunch& in) {
  StreamLaunch l = in;
  const uint64_t round = stream_round_bytes(l);
  // Rounds: each block a slice of whole rounds; Grid: a block per round; Shared: every block
  // all rounds. What one pass reads (a copy or an update writes as much again).
  const uint64_t slice = l.footprint_bytes / std::max(1u, l.blocks) / round * round;
  const uint64_t rounds = l.footprint_bytes / round;
  uint64_t bytes = slice * l.blocks, pass_bytes = bytes;
  if (l.shape != StreamShape::Rounds) {
    bytes = rounds * round;
    pass_bytes = l.shape == StreamShape::Shared ? bytes * l.blocks : bytes;
    if (l.shape == StreamShape::Grid) l.blocks = uint32_t(rounds);
  }
  // The short window: `short_passes` over the same footprint, or (Rounds) over a smaller one
  // in whole rounds of every block, past the long window's in the buffers: lines no window
  // before it read, as the long window's first lines are. A window of a round or two a block
  // is all start and drain, which then do not cancel: a smaller footprint needs four rounds a
  // block in the long window, else the point is timed by the long window alone.
  const bool apart = l.shape == StreamShape::Rounds && l.short_footprint_bytes > 0;
  const uint64_t short_slice = apart ? l.short_footprint_bytes / std::max(1u, l.blocks) / round * round : slice;
  const uint64_t short_pass_bytes = apart ? short_slice * l.blocks : pass_bytes;
  const bool two = l.shape != StreamShape::Grid && l.short_passes > 0 && short_slice > 0 &&
                   (!apart || slice >= 4 * round) && short_pass_bytes * l.short_passes < pass_bytes * l.passes;
  const uint64_t buffer = bytes + (two && apart ? short_pass_bytes : 0);
  // One buffer: the untouched lead, the footprint, a copy's destination. Offsets within it keep
  // the footprint past the lead wherever the backend places buffers (the simulated GPU aligns
  // each to its size, so separate buffers may take the place of a point before).
  const bool copy = l.op == MT_SWEEP_COPY;
  md::Buffer<char> memory(ctx, l.ahead_bytes + (copy ? 2 : 1) * buffer);
  char* const src = memory.get() + l.ahead_bytes;
  ctx.backend().fill_buffer(src, 0, buffer);
  md::Buffer<char> one_byte(ctx, 1);
  char* const dst = copy ? src + buffer : one_byte.get();
  md::Buffer<unsigned long long> cycles(ctx, l.shape == StreamShape::Grid ? 3 : 3 * l.blocks);
  md::Buffer<unsigned> sink(ctx, 1);
  const unsigned long long arg = l.shape == StreamShape::Shared ? rounds : slice;
  const unsigned long long short_arg = !two ? 0 : apart ? short_slice : arg;
  const uint64_t offset = two && apart ? bytes : 0;
  const Buffers b{src, dst, cycles.get(), sink.get(), &cycles, short_arg, src + offset, dst + (copy ? offset : 0)};
  StreamRun r;
  switch (l.op) {
    case MT_SWEEP_READ: r = run_width<MT_SWEEP_READ>(ctx, l, b, arg); break;
    case MT_SWEEP_WRITE: r = run_width<MT_SWEEP_WRITE>(ctx, l, b, arg); break;
    case MT_SWEEP_COPY: r = run_width<MT_SWEEP_COPY>(ctx, l, b, arg); break;
    default: r = run_width<MT_SWEEP_UPDATE>(ctx, l, b, arg); break;
  }
  const uint64_t moved = (pass_bytes * l.passes - (two ? short_pass_bytes * l.short_passes : 0)) * r.window_scale;
  r.bytes = l.op == MT_SWEEP_COPY || l.op == MT_SWEEP_UPDATE ? 2 * moved : moved;
  // The counted launch: its inner warm passes too (a grid's launches are all timed).
  const uint64_t launched = pass_bytes * (l.passes + (l.shape == StreamShape::Grid ? 0 : l.inner_warm_passes));
  r.launch_read_bytes = l.op == MT_SWEEP_WRITE ? 0 : launched;
  r.launch_write_bytes = l.op == MT_SWEEP_READ ? 0 : launched;
  return r;
}

}  // namespace global_throughput
