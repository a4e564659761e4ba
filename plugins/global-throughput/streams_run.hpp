// One point of global-throughput/streams on the device: the stream kernels (streams_run.cu),
// written with the device toolkit's sweeps, so that the same kernels run on a CUDA GPU and on
// the simulated GPU. docs/global-throughput.md, "Method".
#pragma once

#include <cstdint>

#include <memtopo/probe.hpp>

namespace global_throughput {

// How a stream's blocks share its footprint.
enum class StreamShape : uint32_t {
  Rounds = 0,  // resident blocks, each every blocks-th round of the footprint, pass after pass
  Grid = 1,    // a block per round, a launch per pass
  Shared = 2,  // resident blocks, each the whole footprint from its own round on (reads only)
};

struct StreamLaunch {
  uint32_t op = MT_SWEEP_READ;  // MT_SWEEP_*
  uint32_t width_bytes = 16;    // 4, 8 or 16
  uint32_t ilp = 1;             // 1, 2, 4 or 8 accesses in flight per thread
  bool cg = true;               // reads through the L2 only (else .ca)
  StreamShape shape = StreamShape::Rounds;
  uint32_t blocks = 1;          // Rounds, Shared: resident blocks (Grid: one per round)
  uint32_t threads = 256;
  int carveout_percent = -1;
  uint64_t footprint_bytes = 0;
  uint64_t warmup_passes = 1, passes = 1;
  // Passes of the timed launch before its clock starts (resident shapes): where the caches of
  // the SMs start each launch empty and the warm-up launch cannot leave them warm.
  uint64_t inner_warm_passes = 0;
  // Runs the timed launch under the hardware counters (StreamRun::counted) of these MT_COUNT_*
  // bits (0: not counted); the warm-up stays outside.
  uint32_t count = 0;
  // Resident shapes: a second, shorter window of `short_passes` timed passes (0: none) over
  // `short_footprint_bytes` (0: the same footprint; else, Rounds only, in whole rounds of
  // lines of its own, where every block has four rounds in the long window), and the point is
  // the difference of the two (bytes, events, SMs' spans): what every window costs besides its
  // passes cancels.
  uint64_t short_passes = 0, short_footprint_bytes = 0;
  // Untouched bytes ahead of the footprint in its buffer (0: none): a point's buffers may take
  // the addresses of the point before, whose lines the L2 may still hold; past this lead the
  // lines are fresh.
  uint64_t ahead_bytes = 0;
};

struct StreamRun {
  // With short_passes, each the long window's less the short one's.
  uint64_t bytes = 0;            // read plus written by the timed passes
  double elapsed_ns = 0;         // the timed passes, by events
  uint64_t cycles = 0;           // the longest span of one SM's blocks, first start to last end (0: a grid)
  uint64_t shortest_cycles = 0;  // the shortest such span (0: a grid, or two windows)
  double average_cycles = 0;     // the blocks' mean
  uint32_t blocks_per_sm = 0;    // blocks of the kernel one SM holds at once
  uint32_t window_scale = 1;     // the windows ran this many times their passes (blocks apart)
  double sm_clock_mhz = 0;       // the SM clock around the (long) timed launch, 0 where unknown
  // With short_passes: each window's own events and longest SM span (the difference above is
  // theirs), so that the windows of several runs can be combined.
  double long_elapsed_ns = 0, short_elapsed_ns = 0;
  uint64_t long_cycles = 0, short_cycles = 0;
  // The timed launch as counted (StreamLaunch::count), and what it read and wrote by design:
  // the timed passes, its inner warm passes and every block's own reads of shared lines.
  memtopo::Counted counted;
  uint64_t launch_read_bytes = 0, launch_write_bytes = 0;
};

// Bytes of one round: every thread's accesses once.
inline uint64_t stream_round_bytes(const StreamLaunch& l) { return uint64_t(l.threads) * l.ilp * l.width_bytes; }

// At least the device addresses a launch's buffers span (each rounded up to 2 MiB on the
// simulated GPU): where the next fresh lines start.
uint64_t stream_span_bytes(const StreamLaunch& l);

StreamRun run_stream(const memtopo::Context& ctx, const StreamLaunch& l);

}  // namespace global_throughput
