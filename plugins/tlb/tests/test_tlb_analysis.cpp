// The TLB analysis: the page grid, the levels of a sweep (modelled and the H100's recorded
// one) and Mei and Chu's set structure from misses per pass.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "hopper/fixture_csv.hpp"
#include "tlb/tlb_analysis.hpp"

namespace {

// Cycles per load of an LRU, fully associative two-level TLB model over the grid.
std::vector<double> model_sweep(const std::vector<uint64_t>& pages, uint64_t e1, uint64_t e2, double base) {
  std::vector<double> c;
  for (uint64_t n : pages) c.push_back(base + (n > e1 ? 30.0 : 0.0) + (n > e2 ? 300.0 : 0.0));
  return c;
}

// Misses per pass of LRU sets (the simulator's residue mapping) over entries + 1 + i pages.
std::vector<double> model_misses(const std::vector<int64_t>& ways, size_t points) {
  int64_t entries = 0;
  for (int64_t w : ways) entries += w;
  std::vector<double> out;
  for (size_t i = 0; i < points; ++i) {
    const int64_t extra = int64_t(i) + 1;
    double m = 0;
    for (int64_t s = 0; s < std::min<int64_t>(extra, int64_t(ways.size())); ++s) m += double(ways[size_t(s)] + 1);
    if (extra >= int64_t(ways.size())) m = double(entries + extra);
    out.push_back(m);
  }
  return out;
}

}  // namespace

TEST_CASE("tlb: the page grid counts 1 to 8, then four points per octave, to the limit", "[tlb]") {
  const auto g = tlb::page_grid(100);
  REQUIRE(g.size() > 8);
  CHECK(g[0] == 1);
  CHECK(g[7] == 8);
  CHECK(g[8] == 10);
  CHECK(g.back() == 100);
  CHECK(std::is_sorted(g.begin(), g.end()));
  CHECK(std::adjacent_find(g.begin(), g.end()) == g.end());
  CHECK(tlb::page_grid(3) == std::vector<uint64_t>{1, 2, 3});
}

TEST_CASE("tlb: a modelled sweep gives each level and the last count before its ramp", "[tlb]") {
  const auto g = tlb::page_grid(4096);
  const auto lv = tlb::sweep_levels(g, model_sweep(g, 16, 1024, 280));
  REQUIRE(lv.cycles.size() == 3);
  CHECK(lv.cycles[0] == Approx(280));
  CHECK(lv.cycles[1] == Approx(310));
  CHECK(lv.cycles[2] == Approx(610));
  REQUIRE(lv.last_hit_pages.size() == 2);
  CHECK(lv.last_hit_pages[0] == 16);
  CHECK(lv.last_hit_pages[1] == 1024);
  CHECK_FALSE(lv.ends_on_ramp);
}

TEST_CASE("tlb: a penalty between whole-cycle plateaus is the middle of medians and means", "[tlb]") {
  // Random device 56: points alternating by one cycle; the medians (203, 230) read 27 for 26.
  const std::vector<uint64_t> g{1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 13, 16, 19, 23};
  const auto a = tlb::sweep_levels(g, {203, 204, 203, 204, 203, 204, 203, 229, 230, 229, 230, 230, 229, 230});
  const tlb::Penalty pa = tlb::level_penalty(a, 1);
  CHECK(pa.cycles == Approx(26).margin(0.75));
  CHECK(pa.quantized);
  // Random device 17: points mostly on one cycle with steps up; the means read 17.4 for 18.
  const auto b = tlb::sweep_levels(g, {281, 281, 280, 281, 282, 284, 281, 299, 298, 299, 299, 298, 299, 300});
  const tlb::Penalty pb = tlb::level_penalty(b, 1);
  CHECK(pb.cycles == Approx(18).margin(0.54));
  // Plateaus without steps: the penalty as they are, not uncertain.
  const auto c = tlb::sweep_levels(g, {200, 200, 200, 200, 200, 200, 200, 230, 230, 230, 230, 230, 230, 230});
  CHECK(tlb::level_penalty(c, 1).cycles == Approx(30));
  CHECK_FALSE(tlb::level_penalty(c, 1).quantized);
}

TEST_CASE("tlb: a sweep that ends on a rise says so", "[tlb]") {
  const auto g = tlb::page_grid(1100);
  auto c = model_sweep(g, 16, 100000, 280);
  c.back() += 100;  // the last point starts a further level
  const auto lv = tlb::sweep_levels(g, c);
  REQUIRE(lv.cycles.size() == 2);
  CHECK(lv.ends_on_ramp);
}

TEST_CASE("tlb: the H100's sweep to 64 GB is one level", "[tlb][h100]") {
  const auto t = hopper_fixture::read("h100/tlb_sweep.csv");
  std::vector<uint64_t> pages;
  std::vector<double> cycles;
  for (const auto& r : t.rows) {
    pages.push_back(uint64_t(r[t.column("loads")]));
    cycles.push_back(r[t.column("cycles")]);
  }
  REQUIRE(t.rows.back()[t.column("footprint_bytes")] > 60e9);
  const auto lv = tlb::sweep_levels(pages, cycles);
  REQUIRE(lv.cycles.size() == 1);
  CHECK(lv.cycles[0] == Approx(259).margin(5));
  CHECK_FALSE(lv.ends_on_ramp);
}

TEST_CASE("tlb: a sweep whose first points are a lower level is not taken for scatter", "[tlb]") {
  const std::vector<uint64_t> g{1, 2, 3, 4, 5, 6};
  const auto lv = tlb::sweep_levels(g, {200, 200, 300, 300, 300, 300});
  REQUIRE(lv.cycles.size() == 2);
  CHECK(lv.last_hit_pages[0] == 2);
  // One point 10 % below the level is one line's slice (H200 run, docs/results/log/h200.md); one
  // 20 % below may be a level of its own: nothing is made up.
  const auto slice = tlb::sweep_levels(g, {270, 300, 300, 300, 300, 300});
  REQUIRE(slice.cycles.size() == 1);
  CHECK(slice.cycles[0] == Approx(300));
  CHECK(tlb::sweep_levels(g, {240, 300, 300, 300, 300, 300}).cycles.empty());
  // The first points alternating between two slice classes (about 11 % apart) before the level.
  const auto grid = tlb::page_grid(64);
  std::vector<double> alternating;
  for (size_t i = 0; i < grid.size(); ++i) alternating.push_back(i < 9 ? (i % 2 ? 300.0 : 271.0) : 285.0);
  const auto mixed = tlb::sweep_levels(grid, alternating);
  REQUIRE(mixed.cycles.size() == 1);
  CHECK(mixed.cycles[0] == Approx(285));
}

TEST_CASE("tlb: Mei and Chu's unequal L2 TLB sets come back from the misses per pass", "[tlb]") {
  const std::vector<int64_t> ways{17, 8, 8, 8, 8, 8, 8};
  const auto s = tlb::set_structure(65, model_misses(ways, 20));
  REQUIRE(s.complete);
  CHECK(s.ways == ways);
  CHECK_FALSE(tlb::equal_ways(s.ways));
}

TEST_CASE("tlb: the first set's count, off by a base rate set too high, comes from the entries", "[tlb]") {
  // A simulated Kepler-like L2 TLB of 24 entries (9, 5, 5, 5) under long-tailed noise: the
  // counts all 0.6 low, which only the first step, counted from zero, keeps.
  const auto s = tlb::set_structure(24, {9.38, 15.77, 21.88, 28.0});
  REQUIRE(s.complete);
  CHECK(s.ways == std::vector<int64_t>{9, 5, 5, 5});
  // Two ways off is no base rate: the count stays as measured.
  CHECK(tlb::set_structure(26, {9.38, 15.77, 21.88, 28.0}).ways == std::vector<int64_t>{8, 5, 5, 5});
}

TEST_CASE("tlb: equal sets and a fully associative level", "[tlb]") {
  const std::vector<int64_t> equal(8, 4);
  const auto s = tlb::set_structure(32, model_misses(equal, 16));
  REQUIRE(s.complete);
  CHECK(s.ways == equal);
  CHECK(tlb::equal_ways(s.ways));
  const auto full = tlb::set_structure(16, {17.0});
  REQUIRE(full.complete);
  CHECK(full.ways == std::vector<int64_t>{16});
}

TEST_CASE("tlb: misses that grow by one page at a time are not LRU sets", "[tlb]") {
  // Random replacement: a few more misses per page, never the ways + 1 steps.
  const auto s = tlb::set_structure(16, {1.0, 2.0, 3.1, 4.0});
  CHECK_FALSE(s.complete);
  CHECK(s.ways.empty());
  CHECK_FALSE(s.reason.empty());
}

TEST_CASE("tlb: a curve cut short is incomplete", "[tlb]") {
  const auto s = tlb::set_structure(65, model_misses({17, 8, 8, 8, 8, 8, 8}, 3));
  CHECK_FALSE(s.complete);
  CHECK(s.reason.find("not every load misses") != std::string::npos);
}

TEST_CASE("tlb: a level is kept only where its step stands out and comes back", "[tlb]") {
  std::vector<uint64_t> g;
  std::vector<double> c;
  for (uint64_t p = 1; p <= 24; ++p) {
    g.push_back(p);
    // A level at 260 cycles with +-1 cycle of scatter, then a step of 30 after 12 pages.
    c.push_back((p <= 12 ? 260.0 : 290.0) + (p % 2 ? 1.0 : -1.0));
  }
  const auto lv = tlb::sweep_levels(g, c);
  REQUIRE(lv.cycles.size() == 2);
  CHECK(tlb::step_stands_out(c, lv.cycles[0], lv.cycles[1]));
  // Measured again: the step comes back, the level is kept.
  const auto kept = tlb::confirm_levels(lv, c, [](size_t) {
    return tlb::Remeasured{{259, 261, 260}, {289, 291}, ""};
  });
  CHECK(kept.count == 1);
  CHECK(kept.why.empty());
  // Measured again: no step (a passing disturbance in the sweep), no level.
  const auto gone = tlb::confirm_levels(lv, c, [](size_t) {
    return tlb::Remeasured{{259, 261, 260}, {262, 261}, ""};
  });
  CHECK(gone.count == 0);
  CHECK_THAT(gone.why, Catch::Contains("did not come back"));
  // A step that cannot be measured again (its chases pass the memory) is not kept either.
  const auto unchecked = tlb::confirm_levels(lv, c, [](size_t) {
    return tlb::Remeasured{{}, {}, "too far"};
  });
  CHECK(unchecked.count == 0);
  CHECK_THAT(unchecked.why, Catch::Contains("cannot be measured again: too far"));
  // A step of 10 cycles on a sweep scattering by +-3: within the sweep's own spread.
  std::vector<double> noisy;
  for (uint64_t p = 1; p <= 24; ++p) noisy.push_back((p <= 12 ? 300.0 : 310.0) + double(int(p % 3) * 3 - 3));
  CHECK_FALSE(tlb::step_stands_out(noisy, 300, 310));
  // A step below 3 % of the level never stands out, however quiet the sweep.
  CHECK_FALSE(tlb::step_stands_out(std::vector<double>(24, 300.0), 300, 305));
}

TEST_CASE("tlb: a level's entries that miss far sooner than the sweep did are no level", "[tlb]") {
  // An H100 run (docs/results/fleet.md): the sweep's first miss at 6890 pages of 2 MiB, the
  // miss test then missing from 3 pages of 4 KiB on (a step of 13 cycles, within its noise).
  CHECK_FALSE(tlb::entries_agree_with_sweep(2, 6890));
  CHECK(tlb::entries_agree_with_sweep(47, 49));    // the same TLB at a smaller page
  CHECK(tlb::entries_agree_with_sweep(767, 49));   // sets indexed by page number: more at a smaller stride
  CHECK(tlb::entries_agree_with_sweep(24, 49));    // half: still the sweep's level
  CHECK_FALSE(tlb::entries_agree_with_sweep(22, 49));
}

TEST_CASE("tlb: a chase's low cycles are its lowest level's, however few its near hits", "[tlb]") {
  // A tenth of the loads near (251 and a geometric tail of mean 4), the rest far (417): the
  // 10th percentile of all lay at the near hits' top, half way to a miss of 28 cycles.
  std::vector<uint32_t> s;
  uint32_t x = 12345;
  auto tail = [&] {
    uint32_t n = 0;
    for (x = x * 1103515245u + 12345u; (x >> 16) % 5 != 0; x = x * 1103515245u + 12345u) ++n;
    return n;
  };
  for (int i = 0; i < 512; ++i) s.push_back((i % 10 == 0 ? 251u : 417u) + tail());
  std::vector<uint32_t> sorted = s;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted[sorted.size() / 10] > 258);  // what the 10th percentile of all read
  CHECK(tlb::low_level_cycles(s) <= 252);
  // All near loads missing: the lowest level moves by the penalty.
  for (size_t i = 0; i < s.size(); i += 10) s[i] += 28;
  CHECK(tlb::low_level_cycles(s) >= 279);
  // A level of under a twentieth is passed over; no levels: the 10th percentile of all.
  std::vector<uint32_t> rare(500, 300);
  for (int i = 0; i < 20; ++i) rare.push_back(100);
  CHECK(tlb::low_level_cycles(rare) == 300);
  CHECK(tlb::low_level_cycles({}) == 0);
}
