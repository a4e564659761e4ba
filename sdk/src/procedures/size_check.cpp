// A cache size checked against the hardware counters (docs/measurement.md, "Counters"). What the
// procedure believes: a chase of the size's footprint hits on every load (a size by sweep, its
// definition); loads to random lines of twice the size hit where the timing says so (a size by
// occupancy is lines held = hit share x lines, the share the timing finds). The counters of the
// level the path's loads are judged at (.ca: the L1, .cg: the L2) give the hits; two runs of n
// and 2n timed loads leave, in their difference, only what the extra loads did (warm-up and
// launch scaffolding cancel).
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>

#include "memtopo/cache/steps.hpp"
#include "memtopo/verify.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace {

constexpr uint64_t kTimedLoads = uint64_t(1) << 16;

// The counts of `run(n)` less those of `run(n / 2)`.
Counted extra(const Context& ctx, const std::function<void(uint64_t)>& run, uint64_t n, uint32_t wanted) {
  const Counted half = ctx.backend().count([&] { run(n / 2); }, wanted);
  if (!half.counted) return half;
  Counted whole = ctx.backend().count([&] { run(n); }, wanted);
  if (whole.counted) whole.counts = whole.counts - half.counts;
  return whole;
}

}  // namespace

bool check_size_by_counters(Measurer& m, const Measured<int64_t>& size, bool by_occupancy, int64_t line_bytes,
                            ResultInfo& info, std::string* refuted) {
  const Target& t = m.target();
  // The counters read are those of global loads: the L1's for .ca, the L2's for .cg.
  if (t.space != MT_SPACE_GLOBAL_CA && t.space != MT_SPACE_GLOBAL_CG) return true;
  if (!size.found || size.bound != Bound::Exact || size.value <= 0) return true;
  const Context& ctx = m.ctx();
  const uint64_t bytes = uint64_t(size.value);
  double believed_share = 1.0;  // of the timed loads that hit
  uint64_t footprint = bytes;
  std::function<void(uint64_t)> run;
  std::map<uint64_t, FootprintResult> judged;  // occupancy: each run's loads as the timing judged them
  recipes::Chase chase;
  if (by_occupancy) {
    const uint64_t line = uint64_t(std::max<int64_t>(line_bytes, 4));
    footprint = 2 * bytes / line * line;
    if (footprint == 0 || (t.max_footprint_bytes && footprint > t.max_footprint_bytes)) return true;
    Rate rate;
    rate.streams = std::min<uint32_t>(8, ctx.backend().streams_max());
    // One pass of random loads over the footprint's lines fills the cache (63 % of them drawn).
    run = [&m, &judged, footprint, line, rate](uint64_t n) {
      judged[n] = m.run_random(footprint, line, footprint / line, n, 17, rate);
    };
  } else {
    chase = stride_chase(bytes, t.stride_bytes);
    run = [&m, &chase, &ctx](uint64_t n) {
      Job j = m.job_for(chase, 2, n);
      j.record = MT_RECORD_COUNTS;  // nothing written while the loads run
      j.slow_cycles = ~0u;
      j.keep_steps = 0;
      ctx.backend().run(j);
    };
  }
  // Lookups: every global load's sector is looked up in the L1 once (a .cg load misses it and
  // goes on to the L2); hits: the L1's, or the L2's read hits. (The L2's own read count and its
  // hits need two passes together on an H100, the L1's lookups and the L2's hits one.)
  const bool l1 = t.space == MT_SPACE_GLOBAL_CA;
  const Counted c = extra(ctx, run, 2 * kTimedLoads, l1 ? MT_COUNT_L1 : MT_COUNT_L1 | MT_COUNT_L2_HIT);
  if (!c.counted) {
    mark_unverified(info, c.why_not);
    return true;
  }
  std::string share_of_size;
  if (by_occupancy) {
    // The hits the timing found among the extra loads, which the size (lines held) rests on;
    // the reported size may be a candidate that agrees with them (the API's size over the
    // partitions), whose own share is in the note.
    const FootprintResult &a = judged[kTimedLoads], &z = judged[2 * kTimedLoads];
    const double loads = double(z.loads) - double(a.loads), hits = loads - (double(z.misses) - double(a.misses));
    believed_share = loads > 0 ? hits / loads : 0;
    char s[96];
    std::snprintf(s, sizeof s, " (the size is %.4f of the footprint)", double(bytes) / double(footprint));
    share_of_size = s;
  }
  // Each timed load is one sector looked up once at the path's level; the believed hits are the
  // claim the size rests on, within 5 % of the loads (as a stream's counts within 5 % of its
  // bytes): an H100's L2 counted 0.499 to 0.527 of the loads at twice 25 MiB as hits from run to
  // run where its timing found 0.497 to 0.500 (docs/results/log/h100.md, "Validity").
  const double lookups = double(kTimedLoads) * 32;
  Believed b;
  (l1 ? b.l1_hit_bytes : b.l2_read_hit_bytes) = believed_share * lookups;
  b.of_bytes = lookups;
  const CountedLevel level = l1 ? CountedLevel::L1Hit : CountedLevel::L2ReadHit;
  const double counted_lookups = c.counts.l1_load_bytes;
  const double counted_share = counted_lookups > 0 ? detail::counted_at(c.counts, level) / counted_lookups : 0;
  const Verdict v = compare_counts(c.counts, b, level);
  char shares[160];
  std::snprintf(shares, sizeof shares, ": a hit share of %.4f counted, %.4f %s", counted_share, believed_share,
                by_occupancy ? "by the timing" : "believed (no load of the size's footprint misses)");
  const std::string how = std::string(by_occupancy ? "random loads to lines of " : "a chase of ") + fmt_bytes(footprint) +
                          " on one SM, what " + std::to_string(kTimedLoads) + " more timed loads counted" + shares +
                          share_of_size;
  if (!v.complete) {
    mark_unverified(info, "the counters gave no number: " + v.disagreement);
    return true;
  }
  if (!v.agrees) {
    *refuted = how + "; " + v.note;
    return false;
  }
  mark_verified(info, v, how);
  info.counted_bytes = counted_share * double(footprint);  // the bytes the counted hits say the cache holds
  return true;
}

}  // namespace memtopo::cache
