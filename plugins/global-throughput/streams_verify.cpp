#include "streams_verify.hpp"

namespace global_throughput {

PointCheck check_point(const memtopo::Context& ctx, StreamLevel level, const StreamLaunch& launch) {
  // Only what the level's claims need: fewer counts fit one pass.
  StreamLaunch l = launch;
  l.count = level == StreamLevel::Dram           ? MT_COUNT_DRAM
            : level == StreamLevel::L1           ? MT_COUNT_L1
            : level == StreamLevel::SharedInputs ? MT_COUNT_TO_SM | MT_COUNT_L2_READ
            : launch.op == MT_SWEEP_WRITE        ? MT_COUNT_L2_WRITE | MT_COUNT_DRAM
                                                 : MT_COUNT_L2_READ | MT_COUNT_DRAM;
  l.short_passes = l.short_footprint_bytes = 0;  // one window: its bytes, not its rate
  const StreamRun r = run_stream(ctx, l);
  PointCheck out;
  if (!r.counted.counted) {
    out.why_not = r.counted.why_not;
    return out;
  }
  out.counted = true;
  const double reads = double(r.launch_read_bytes), writes = double(r.launch_write_bytes);
  const memtopo::Counts& c = r.counted.counts;
  memtopo::Believed b;
  memtopo::CountedLevel primary = memtopo::CountedLevel::L2Read;
  switch (level) {
    case StreamLevel::Dram:
      // A footprint many times the L2: every read comes from DRAM, every write goes there (the
      // lines the L2 still holds dirty at the end are a few percent of them).
      b.dram_read_bytes = reads;
      b.dram_write_bytes = writes;
      primary = writes == 0   ? memtopo::CountedLevel::DramRead
                : reads == 0  ? memtopo::CountedLevel::DramWrite
                              : memtopo::CountedLevel::Dram;
      break;
    case StreamLevel::L2:
      // Within a quarter of the L2, warm: the SMs ask the L2 for every byte, DRAM serves none.
      if (reads > 0) b.l2_read_bytes = reads, b.dram_read_bytes = 0;
      if (writes > 0) b.l2_write_bytes = writes, b.dram_write_bytes = 0;
      primary = reads > 0 ? memtopo::CountedLevel::L2Read : memtopo::CountedLevel::L2Write;
      break;
    case StreamLevel::L1:
      // Every timed pass hits the L1; its own warm passes fetch the lines.
      b.l1_hit_bytes = reads * double(l.passes) / double(l.passes + l.inner_warm_passes);
      b.of_bytes = reads;
      primary = memtopo::CountedLevel::L1Hit;
      break;
    case StreamLevel::SharedInputs:
      // Every block's reads are delivered to its SM; the slices may read fewer (merged requests).
      b.l2_to_sm_bytes = reads;
      primary = memtopo::CountedLevel::L2ToSm;
      break;
  }
  out.verdict = memtopo::compare_counts(c, b, primary);
  out.agrees = out.verdict.agrees;
  out.how = "the best point once more under the counters (" + std::to_string(c.passes) +
            (c.passes == 1 ? " pass" : " passes") + ")";
  if (level == StreamLevel::SharedInputs && reads > 0) {
    char share[96];
    std::snprintf(share, sizeof share, "; the L2 slices read %.4g GB of them (%.0f %%)", c.l2_read_bytes / 1e9,
                  100.0 * c.l2_read_bytes / reads);
    out.verdict.note += share;
  }
  return out;
}

}  // namespace global_throughput
