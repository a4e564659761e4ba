// tlb/levels: the TLB levels, each level's page size, entries, reach and miss penalty.
//   1. Sweep: load-to-use cycles of pointer chases over 1 .. N pages (.cg, so no SM cache
//      answers before translation), up to three quarters of the device memory. Each latency
//      plateau past the first is one more TLB level missing.
//   2. Page size per level: below the page a chase needs more loads to overflow the level
//      (several land in one page), above it the same number. Halving the stride from the
//      sweep's finds where that changes.
//   3. Entries: the most pages at a stride of one page that the level holds without a miss.
// docs/tlb.md gives the method and its reasons.
#include "probes.hpp"

#include <algorithm>
#include <string>

#include <memtopo/analysis.hpp>

#include "tlb_analysis.hpp"
#include "miss_test.hpp"
#include "tlb_chase.hpp"

namespace tlb {
namespace {

namespace an = memtopo::analysis;

struct LevelResult {
  uint64_t page = 0, entries = 0;
  std::string note;
  bool agrees_with_sweep = true;  // entries_agree_with_sweep: else the step is no level
};

// Steps 2 and 3 for one level: `held` pages of the sweep's `s0` hold, `missed` miss; `stride`
// steps a page of s0 and a little more.
LevelResult measure_level(const MissTest& t, uint64_t s0, uint64_t stride, uint64_t held, uint64_t missed,
                          uint64_t limit, uint64_t l2_lines) {
  const uint64_t n0 = t.first_miss(held, missed, stride);
  // Down: 1.5 n0 loads at half the stride miss only where the page is at most that stride.
  // No search upwards: with sets indexed by page number, doubling the stride leaves half the
  // sets unused, which looks exactly like pages twice as large. A page larger than the
  // sweep's stride shows as more entries of that stride, with the right reach. Where 1.5 n0
  // lines pass three quarters of the L2 (one line a load), as few as 9/8 n0 still tell the two
  // apart, and L2 misses then do not read as the level's (random device 9: 1154 lines in an L2
  // of 1024 missed down to pages of 4 KiB for 2 MiB).
  uint64_t loads = (3 * n0 + 1) / 2;
  if (l2_lines && 4 * loads > 3 * l2_lines) loads = std::max<uint64_t>(n0 + n0 / 8 + 1, 3 * l2_lines / 4);
  uint64_t s = s0;
  while (s / 2 >= 4 * KiB && t.misses(loads, page_stride(s / 2, loads))) s /= 2;
  LevelResult r;
  r.page = s;
  const uint64_t guess = n0;
  uint64_t lo = std::max<uint64_t>(guess / 2, 1), hi = guess * 2;
  while (lo > 1 && t.misses(lo, page_stride(r.page, lo))) lo /= 2;
  while (hi * r.page <= limit && !t.misses(hi, page_stride(r.page, hi))) hi *= 2;
  // The first miss comes with entries + 1 pages.
  while (hi - lo > 1) {
    const uint64_t mid = lo + (hi - lo) / 2;
    (t.misses(mid, page_stride(r.page, mid)) ? hi : lo) = mid;
  }
  r.entries = lo;
  r.agrees_with_sweep = entries_agree_with_sweep(r.entries, n0);
  r.note = "first miss at " + std::to_string(n0) + " pages of " + std::to_string(s0) + " B, at " +
           std::to_string(r.entries + 1) + " pages of " + std::to_string(r.page) + " B";
  return r;
}

// The stride a step is measured again at: twice the sweep's, or where `missed` pages of it
// pass the memory a chase may span, the widest of 3/2, 5/4 and 9/8 of it that fits (each load
// still on a page of its own; a TLB of 2048 pages of 2 MiB on a GPU of 8 GiB); 0 where none does.
uint64_t wider_stride(uint64_t s0, uint64_t missed, uint64_t limit) {
  for (const uint64_t eighths : {16, 12, 10, 9}) {
    const uint64_t s = s0 * eighths / 8 / (64 * KiB) * (64 * KiB);
    if (missed * page_stride(s, missed) <= limit) return s;
  }
  return 0;
}

// Step 1: per page count, the 10th percentile of per-load cycles (a near L2 hit plus the
// translation, whatever share of lines is far); past 16 GiB, where chases cannot record, the
// pointer chase's load-to-use average, shifted by what the two differ at the last recorded count.
struct Sweep {
  std::vector<uint64_t> grid;
  std::vector<double> cycles;
  double average_offset = 0;  // average minus percentile where both were measured
};
Sweep sweep(const memtopo::Context& ctx, const Chaser& chase, uint64_t s0, uint64_t limit) {
  Sweep sw;
  sw.grid = page_grid(limit / page_stride(s0, 1));
  std::vector<double> rows;
  bool recorded = true;
  for (size_t i = 0; i < sw.grid.size(); ++i) {
    const uint64_t n = sw.grid[i], st = page_stride(s0, n);
    ctx.progress(0.5 * double(i) / double(sw.grid.size()), "TLB sweep: " + std::to_string(n) + " pages");
    const bool fits = n * st <= kIndexedFootprint;
    if (!fits && recorded) {
      const uint64_t last = sw.grid[i - 1], last_st = page_stride(s0, last);
      sw.average_offset = chase.cycles(last, last_st) - sw.cycles.back();
      recorded = false;
    }
    sw.cycles.push_back(fits ? chase.low_cycles(n, st) : chase.cycles(n, st) - sw.average_offset);
    rows.insert(rows.end(), {double(n), double(n * st), sw.cycles.back(), fits ? 1.0 : 0.0});
  }
  ctx.raw("sweep", {"loads", "footprint_bytes", "cycles", "recorded"}, rows);
  return sw;
}

// tlb.level_count, the reach bound past the last level kept, and why the other keys are absent.
void report_level_count(memtopo::Context& ctx, size_t found, bool rising, uint64_t searched, std::string note) {
  if (rising) note += "; the sweep ends on a rise: a further level's reach is below " + std::to_string(searched) + " B";
  const bool bound = !rising && found < 2;
  ctx.result("tlb.level_count", int64_t(found),
             memtopo::ResultInfo{0.9, bound || rising ? memtopo::Bound::AtLeast : memtopo::Bound::Exact, note});
  if (bound)
    ctx.result("tlb.l" + std::to_string(found + 1) + "_reach_bytes", int64_t(searched),
               memtopo::ResultInfo{0.9, memtopo::Bound::AtLeast,
                                   "no further latency level kept up to " + std::to_string(searched) +
                                       " B of chase (at most three quarters of the device memory): a further TLB "
                                       "level, if any, reaches at least that far; " + note});
  for (size_t k = found + 1; k <= 2; ++k) {
    const std::string p = "tlb.l" + std::to_string(k) + "_";
    const std::string why = "the sweep kept " + std::to_string(found) + " TLB level(s) up to " +
                            std::to_string(searched) + " B of chase";
    for (const char* key : {"page_bytes", "entries", "miss_penalty_cycles"}) ctx.absent(p + key, why);
    if (!(bound && k == found + 1)) ctx.absent(p + "reach_bytes", why);
  }
}

// The raw levels' columns, one row per window of each level.
const std::vector<std::string> kLevelColumns = {"level",          "page_bytes",      "entries",  "miss_penalty_cycles",
                                                "window_low_raw", "window_high_raw", "base_rate"};

// Lines of 128 B the device's L2 holds (0: not known).
uint64_t l2_lines(const memtopo::Context& ctx) {
  return ctx.device().l2_bytes > 0 ? uint64_t(ctx.device().l2_bytes) / 128 : 0;
}

// A level's miss penalty, at less confidence where the plateaus' steps leave it uncertain.
void report_penalty(memtopo::Context& ctx, const std::string& key, const Penalty& penalty, memtopo::ResultInfo info) {
  if (penalty.quantized) {
    info.confidence = std::min(info.confidence, 0.6);
    info.note = "the middle of the plateaus' medians' and means' differences, which differ by more than a quarter "
                "cycle: the sweep's points step between whole cycles, so the penalty is uncertain by about half a "
                "cycle; " + info.note;
  }
  ctx.result(key, penalty.cycles, info);
}

void measure_levels(memtopo::Context& ctx) {
  const uint64_t s0 = uint64_t(ctx.option<int64_t>("sweep_stride_bytes"));
  if (s0 < 64 * KiB || s0 % (64 * KiB)) throw memtopo::Error("option sweep_stride_bytes must be a multiple of 65536");
  const uint64_t limit = footprint_limit(ctx);
  const Chaser chase(ctx, MT_SPACE_GLOBAL_CG);
  const Sweep sw = sweep(ctx, chase, s0, limit);
  const std::vector<uint64_t>& grid = sw.grid;
  const std::vector<double>& cycles = sw.cycles;
  const SweepLevels lv = sweep_levels(grid, cycles);
  if (lv.cycles.empty()) throw memtopo::NotDeterminable("TLB sweep: " + lv.reason);
  // Each level's step measured again at the sweep's stride and at a wider one, so that a step
  // that is one run's disturbance, or one no other stride shows, is left out: at the last page
  // count the level below held, three quarters and half of it, and where the sweep missed.
  auto point = [&](uint64_t n, uint64_t s) {
    const uint64_t st = page_stride(s, n);
    return n * st <= kIndexedFootprint ? chase.low_cycles(n, st) : chase.cycles(n, st) - sw.average_offset;
  };
  const ConfirmedLevels confirmed = confirm_levels(lv, cycles, [&](size_t k) {
    const uint64_t held = lv.last_hit_pages[k - 1];
    // Where the sweep had (nearly) every load missing; at a wider stride a TLB whose sets are
    // indexed by page number uses fewer of its sets, so it misses there at least as much.
    const uint64_t missed = first_missing_pages(grid, cycles, held, lv.cycles[k - 1], lv.cycles[k]);
    Remeasured r;
    const uint64_t wide = wider_stride(s0, missed, limit);
    if (wide == 0) {
      r.unmeasurable = std::to_string(missed) + " pages at a stride of " + std::to_string(s0 + s0 / 8) +
                       " B pass the memory a chase may span";
      return r;
    }
    // At the wider stride the sets fill in another order (unequal sets keep hits longer): more
    // pages, where they fit, overflow every set.
    uint64_t missed_wide = 2 * missed;
    while (missed_wide > missed && missed_wide * page_stride(wide, missed_wide) > limit) --missed_wide;
    // The held count may lie on the ramp's foot (sets that overflow one by one): three
    // quarters of it and half of it are well within the level.
    r.held.push_back(point(std::max<uint64_t>(held * 3 / 4, 1), s0));
    r.held.push_back(point(std::max<uint64_t>(held / 2, 1), s0));
    r.held.push_back(point(std::max<uint64_t>(held / 2, 1), wide));
    r.missed.push_back(point(missed, s0));
    r.missed.push_back(point(missed_wide, wide));
    return r;
  });
  size_t found = std::min<size_t>(confirmed.count, 2);
  const size_t confirmed_found = found;
  const uint64_t searched = grid.back() * page_stride(s0, grid.back());
  std::string note = "sweep of 1 to " + std::to_string(grid.back()) + " pages of " + std::to_string(s0) +
                     " B (.cg, " + std::to_string(searched) + " B), levels at";
  for (double c : lv.cycles) note += " " + std::to_string(int(c + 0.5));
  note += " cycles (10th percentile per load)";
  if (!confirmed.why.empty()) note += "; not a level: " + confirmed.why;
  std::vector<double> level_rows;
  for (size_t k = 1; k <= found; ++k) {
    const std::string p = "tlb.l" + std::to_string(k) + "_";
    const uint64_t held = lv.last_hit_pages[k - 1];
    const auto at = std::find(grid.begin(), grid.end(), held);
    const uint64_t missed = at + 1 < grid.end() ? *(at + 1) : held + 1;
    ctx.progress(0.5 + 0.25 * double(k - 1), "TLB level " + std::to_string(k));
    const uint64_t stride = page_stride(s0, 2 * missed);
    // The last page count the sweep held on this level's plateau, where a further one follows.
    const uint64_t below_next = k < lv.last_hit_pages.size() ? lv.last_hit_pages[k] : 0;
    MissTest t = miss_test(chase, stride, held, missed, lv.cycles[k - 1], lv.cycles[k], limit, below_next);
    t.average_offset = sw.average_offset;
    const LevelResult r = measure_level(t, s0, stride, held, missed, limit, l2_lines(ctx));
    const std::string crowded = crowds_l2(ctx, r.entries);
    if (!r.agrees_with_sweep) {
      note += "; not a level: level " + std::to_string(k) + " " + r.note + ", fewer than half the " +
              std::to_string(held) + " pages the sweep held";
      found = k - 1;
      break;
    }
    const memtopo::ResultInfo info{crowded.empty() ? 0.9 : 0.5, memtopo::Bound::Exact,
                                   r.note + crowded + "; " + note};
    ctx.result(p + "page_bytes", int64_t(r.page), info);
    ctx.result(p + "entries", int64_t(r.entries), info);
    ctx.result(p + "reach_bytes", int64_t(r.entries * r.page), info);
    report_penalty(ctx, p + "miss_penalty_cycles", level_penalty(lv, k), info);
    for (const Window& w : t.windows)
      level_rows.insert(level_rows.end(), {double(k), double(r.page), double(r.entries), level_penalty(lv, k).cycles,
                                           double(w.slow_raw), double(w.max_raw), t.base_rate});
  }
  ctx.raw("levels", kLevelColumns, level_rows);
  const bool all_kept = found == confirmed_found && confirmed.count + 1 == lv.cycles.size();
  // A sweep that ends on a rise says a further level starts before its end; the last point is
  // timed twice more, and the rise stands only where both are as high (on an H100 one run in
  // three ended 3 % up at 59 GiB, the L2 slices of a few pages, and lost the reach's bound).
  bool ends_on_ramp = lv.ends_on_ramp && all_kept;
  for (int again = 0; again < 2 && ends_on_ramp; ++again)
    ends_on_ramp = point(grid.back(), s0) > lv.cycles.back() * (1 + kRampRise);
  if (lv.ends_on_ramp && all_kept && !ends_on_ramp)
    note += "; the last page count rose once and not when timed again";
  report_level_count(ctx, found, ends_on_ramp, searched, note);
  // No level missed (an H100 within 59 GiB): its entries and page size are a result that
  // cannot be had, said once here; tlb/sets and tlb/l1d-virtual are then skipped as expected.
  if (found == 0)
    throw memtopo::NotDeterminable("no TLB level: no chase up to " + std::to_string(searched) +
                                   " B missed a translation that the miss tests confirm, so the L1 TLB's entries and "
                                   "page size are not measured "
                                   "(its reach is at least that; tlb.level_count and tlb.l1_reach_bytes kept)");
}

}  // namespace

memtopo::Probe levels_probe() {
  memtopo::Probe p("tlb/levels");
  p.roles({{"tlb.level_count", "translation.level_count"},
           {"tlb.l1_page_bytes", "translation.page_bytes@l1"},
           {"tlb.l1_entries", "translation.entries@l1"},
           {"tlb.l1_reach_bytes", "translation.reach_bytes@l1"},
           {"tlb.l1_miss_penalty_cycles", "translation.miss_penalty_cycles@l1"},
           {"tlb.l2_reach_bytes", "translation.reach_bytes@l2"}});
  p.summary("TLB levels: page size, entries, reach and miss penalty of each, from page-strided chases")
      .provides({"tlb.level_count", "tlb.l1_page_bytes", "tlb.l1_entries", "tlb.l1_reach_bytes",
                 "tlb.l1_miss_penalty_cycles", "tlb.l2_page_bytes", "tlb.l2_entries", "tlb.l2_reach_bytes",
                 "tlb.l2_miss_penalty_cycles"})
      .not_replayed({"tlb.level_count", "tlb.l1_reach_bytes", "tlb.l2_reach_bytes"})  // entries x page_bytes
      .key("tlb.level_count", MT_VALUE_INT, "", "TLB levels whose reach a chase exceeds (at least, when bounded)",
           MT_KEY_HEADLINE | MT_KEY_STRUCTURE);
  for (const char* l : {"l1", "l2"}) {
    const std::string k = std::string("tlb.") + l + "_";
    p.key(k + "page_bytes", MT_VALUE_INT, "bytes", "bytes one entry maps")
        .key(k + "entries", MT_VALUE_INT, "", "pages the level holds")
        .key(k + "reach_bytes", MT_VALUE_INT, "bytes", "entries x page_bytes (a lower bound where no miss was seen)")
        .key(k + "miss_penalty_cycles", MT_VALUE_FLOAT, "cycles",
             "load-to-use cycles a load gains when this level misses too");
  }
  return p
      .option("sweep_stride_bytes", MT_VALUE_INT, "2097152", "page size the sweep assumes (loads a page and a line apart)")
      .range("65536", "4294967296")
      .option("max_footprint_bytes", MT_VALUE_INT, "0", "largest chase footprint (0: three quarters of the device memory)")
      .range("0", "1125899906842624")
      .budget_seconds(120)
      .run(measure_levels);
}

}  // namespace tlb
