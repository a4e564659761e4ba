// tlb/sets: the sets and ways of each TLB level (Mei and Chu, paper 001, section 5.3): chases
// over entries + 1, entries + 2, ... consecutive pages. With LRU sets indexed by page number,
// the first page past the level's entries overflows one set, whose ways + 1 pages then miss on
// every pass; each further page overflows the next set, until every load misses. The growth
// of the misses per pass gives each set's ways, equal or not (the Kepler L2 TLB's 17 + 6 x 8).
#include "probes.hpp"

#include <string>
#include <vector>

#include "miss_test.hpp"
#include "tlb_analysis.hpp"
#include "tlb_chase.hpp"

namespace tlb {
namespace {

constexpr uint64_t kMaxSets = 512;  // further pages tried past the entries

// Where noise hides some misses from the counts: whether a chase over entries + 1 pages has
// (nearly) every load missing and one over entries none, by each chase's low percentile. With
// LRU sets, one more page than the entries makes every load miss only in a single set.
bool one_set_by_percentiles(const memtopo::Context& ctx, const Chaser& chase, int level, uint64_t e, uint64_t quiet,
                            uint64_t st, std::string& note) {
  const auto penalty = ctx.try_input<double>("tlb.l" + std::to_string(level) + "_miss_penalty_cycles");
  if (!penalty || *penalty <= 0) return false;
  const double hit = chase.low_cycles(quiet, st), threshold = hit + 0.5 * *penalty;
  const double at = chase.low_cycles(e, st), past = chase.low_cycles(e + 1, st);
  if (!(at < threshold && past > threshold)) return false;
  note = "the 10th percentile of a chase over " + std::to_string(e + 1) + " pages is " + std::to_string(int(past - hit)) +
         " cycles above the held level, of a " + std::to_string(int(*penalty)) + "-cycle miss penalty, and over " +
         std::to_string(e) + " pages " + std::to_string(int(at - hit)) +
         ": every load misses one page past the entries, so one set holds them all (LRU)";
  return true;
}

void measure_sets(memtopo::Context& ctx) {
  const Chaser chase(ctx, MT_SPACE_GLOBAL_CG);
  const uint64_t limit = footprint_limit(ctx);
  uint64_t below = 0;  // the level below: its entries, all missing in this level's baseline
  bool any = false;
  // A level whose sets are not measured says why in its keys' absence.
  auto absent = [&](int level, const std::string& why) {
    for (const char* key : {"sets", "set_ways"}) ctx.absent("tlb.l" + std::to_string(level) + "_" + key, why);
  };
  for (int k = 1; k <= 2; ++k) {
    const std::string p = "tlb.l" + std::to_string(k) + "_";
    const auto entries = ctx.try_input<int64_t>(p + "entries");
    const auto page = ctx.try_input<int64_t>(p + "page_bytes");
    if (!entries || !page || *entries < 1) break;
    const uint64_t e = uint64_t(*entries), pg = uint64_t(*page);
    const uint64_t top = std::min<uint64_t>(e + kMaxSets, 2 * e + 2);
    if (top * page_stride(pg, top) > std::min(limit, kIndexedFootprint)) {
      const std::string why = std::to_string(top) + " pages of " + std::to_string(pg) +
                              " B are beyond what a counted chase spans";
      ctx.warn("tlb level " + std::to_string(k) + ": " + why + "; its sets are not measured");
      for (int l = k; l <= 2; ++l) absent(l, "level " + std::to_string(k) + ": " + why);
      break;
    }
    const uint64_t quiet = std::max<uint64_t>(std::max(e / 2, below + 1), 1);
    if (quiet >= e + 1) break;
    // One stride for every chase, so that each sees the same kinds of L2 hit as the windows.
    const uint64_t st = page_stride(pg, top);
    MissTest t = miss_test(chase, st, 2 * quiet, e + 1, 0, 0, limit);
    if (!t.counted)
      throw memtopo::NotDeterminable("tlb level " + std::to_string(k) + ": the loads of " + std::to_string(2 * e + 2) +
                                     " pages are no slower than those of " + std::to_string(quiet));
    std::vector<double> misses, rows;
    SetStructure s;
    for (uint64_t n = e + 1; n <= top; ++n) {
      ctx.progress(0.5 * double(k - 1) + 0.5 * double(n - e) / double(top - e), "TLB sets: " + std::to_string(n) + " pages");
      misses.push_back(t.misses_per_pass(n, st, 16));
      rows.insert(rows.end(), {double(k), double(n), misses.back()});
      s = set_structure(e, misses);
      if (s.complete || !s.reason.empty() && s.ways.empty() && misses.size() > 1) break;
    }
    ctx.raw("misses_l" + std::to_string(k), {"level", "pages", "misses_per_pass"}, rows);
    // As uncertain as the level it counts on, where that level's chases crowd the L2.
    const std::string crowded = crowds_l2(ctx, e);
    std::string one_set;
    if (!s.complete && one_set_by_percentiles(ctx, chase, k, e, quiet, st, one_set)) {
      const memtopo::ResultInfo info{crowded.empty() ? 0.8 : 0.5, memtopo::Bound::Exact,
                                     one_set + crowded + "; the counts: " + s.reason};
      ctx.result(p + "sets", int64_t(1), info);
      ctx.result(p + "set_ways", std::vector<int64_t>{int64_t(e)}, info);
      any = true;
      below = e;
      continue;
    }
    if (!s.complete) {
      ctx.warn("tlb level " + std::to_string(k) + " sets: " + s.reason);
      absent(k, s.reason);
      below = e;
      continue;
    }
    const std::string note = "misses per pass from " + std::to_string(e + 1) + " pages of " + std::to_string(pg) +
                             " B grow by each set's ways + 1 (LRU), in the order the sets overflow" + crowded;
    const memtopo::ResultInfo info{crowded.empty() ? 0.9 : 0.5, memtopo::Bound::Exact, note};
    ctx.result(p + "sets", int64_t(s.ways.size()), info);
    ctx.result(p + "set_ways", s.ways, info);
    any = true;
    below = e;
  }
  if (!any) throw memtopo::NotDeterminable("no TLB level's sets show the LRU overflow pattern (see the warnings)");
}

}  // namespace

memtopo::Probe sets_probe() {
  return memtopo::Probe("tlb/sets")
      .summary("TLB sets and ways per level, equal or not, from the misses just past each level's entries")
      .provides({"tlb.l1_sets", "tlb.l1_set_ways", "tlb.l2_sets", "tlb.l2_set_ways"})
      .requires_keys({"tlb.l1_entries", "tlb.l1_page_bytes"})
      .uses({"tlb.l2_entries", "tlb.l2_page_bytes", "tlb.l1_miss_penalty_cycles", "tlb.l2_miss_penalty_cycles"})
      .key("tlb.l1_sets", MT_VALUE_INT, "", "sets of the L1 TLB (1: fully associative)")
      .key("tlb.l1_set_ways", MT_VALUE_INT_ARRAY, "", "entries of each L1 TLB set, in the order they overflow")
      .key("tlb.l2_sets", MT_VALUE_INT, "", "sets of the L2 TLB")
      .key("tlb.l2_set_ways", MT_VALUE_INT_ARRAY, "", "entries of each L2 TLB set, in the order they overflow")
      .option("max_footprint_bytes", MT_VALUE_INT, "0", "largest chase footprint (0: three quarters of the device memory)")
      .range("0", "1125899906842624")
      .budget_seconds(120)
      .run(measure_sets);
}

}  // namespace tlb
