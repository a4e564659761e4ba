// The latency spectrum's chase (plugins/global-throughput/spectrum_design.cpp) without a
// backend: every offset once, rounds of the five loads, warm lines where hits are meant and
// fresh lines where DRAM is, reuse distances past the L1, pages past the TLB, and the limits.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_set>
#include <vector>

#include "spectrum_design.hpp"

using global_throughput::design_spectrum;
using global_throughput::Segment;
using global_throughput::SpectrumDesign;
using global_throughput::SpectrumInputs;

namespace {

constexpr uint64_t KiB = 1024, MiB = 1024 * KiB;

// The hopper-like device as the probe sees it without measured keys.
SpectrumInputs hopper_like() {
  SpectrumInputs in;
  in.line_bytes = 128;
  in.l1_bytes = 233472 + 64 * KiB;
  in.l2_bytes = 8 * MiB;
  in.page_bytes = 2 * MiB;
  in.tlb_pages = 40;
  in.rounds = 512;
  return in;
}

Segment segment_at(const SpectrumDesign& d, uint64_t byte) {
  Segment s = Segment::L1;
  REQUIRE(d.segment_of(byte / 4, s));
  return s;
}

}  // namespace

TEST_CASE("spectrum design: every offset once, inside the footprint and a region", "[spectrum]") {
  const SpectrumDesign d = design_spectrum(hopper_like());
  REQUIRE(d.offsets.size() == d.warmup_steps + d.steps);
  std::set<uint64_t> seen;
  for (uint64_t o : d.offsets) {
    CHECK(o % 4 == 0);
    CHECK(o < d.footprint_bytes);
    CHECK(seen.insert(o).second);
    segment_at(d, o);
  }
  CHECK(d.footprint_bytes <= hopper_like().max_footprint_bytes);
}

TEST_CASE("spectrum design: each round loads two hot words, an L2 line, a TLB page, a fresh line", "[spectrum]") {
  const SpectrumInputs in = hopper_like();
  const SpectrumDesign d = design_spectrum(in);
  REQUIRE(d.steps == 5 * in.rounds);
  const std::vector<Segment> round = {Segment::L1, Segment::L1, Segment::L2, Segment::Tlb, Segment::Dram};
  for (uint64_t k = 0; k < d.steps; ++k) CHECK(segment_at(d, d.offsets[d.warmup_steps + k]) == round[k % 5]);
}

TEST_CASE("spectrum design: hits revisit warm sectors, DRAM loads touch fresh lines", "[spectrum]") {
  const SpectrumInputs in = hopper_like();
  const SpectrumDesign d = design_spectrum(in);
  std::set<uint64_t> warm_units;  // 32 B sectors the warm-up loaded
  for (uint64_t k = 0; k < d.warmup_steps; ++k) warm_units.insert(d.offsets[k] / 32);
  std::set<uint64_t> lines_before;
  for (uint64_t k = 0; k < d.warmup_steps; ++k) lines_before.insert(d.offsets[k] / in.line_bytes);
  size_t dram = 0;
  for (uint64_t k = d.warmup_steps; k < d.offsets.size(); ++k) {
    const uint64_t o = d.offsets[k];
    if (segment_at(d, o) == Segment::Dram) {
      CHECK(lines_before.count(o / in.line_bytes) == 0);
      ++dram;
    } else {
      CHECK(warm_units.count(o / 32) == 1);
    }
    lines_before.insert(o / in.line_bytes);
  }
  CHECK(dram == in.rounds);
}

TEST_CASE("spectrum design: L2 and TLB lines come back after more than an L1 of other lines", "[spectrum]") {
  const SpectrumInputs in = hopper_like();
  const SpectrumDesign d = design_spectrum(in);
  std::map<uint64_t, uint64_t> last;  // line -> step of its last load
  size_t checked = 0;
  for (uint64_t k = 0; k < d.offsets.size(); ++k) {
    const uint64_t line = d.offsets[k] / in.line_bytes;
    const Segment s = segment_at(d, d.offsets[k]);
    const auto it = last.find(line);
    if (k >= d.warmup_steps && (s == Segment::L2 || s == Segment::Tlb) && it != last.end() && k % 37 == 0) {
      std::unordered_set<uint64_t> between;
      for (uint64_t j = it->second + 1; j < k; ++j) between.insert(d.offsets[j] / in.line_bytes);
      CHECK(between.size() > 2 * in.l1_bytes / in.line_bytes);
      ++checked;
    }
    last[line] = k;
  }
  CHECK(checked > 10);
}

TEST_CASE("spectrum design: a TLB page comes back only after every other page", "[spectrum]") {
  const SpectrumInputs in = hopper_like();
  const SpectrumDesign d = design_spectrum(in);
  REQUIRE(d.tlb_pages == in.tlb_pages);
  std::vector<uint64_t> pages;
  for (uint64_t k = d.warmup_steps; k < d.offsets.size(); ++k)
    if (segment_at(d, d.offsets[k]) == Segment::Tlb) pages.push_back(d.offsets[k] / in.page_bytes);
  REQUIRE(pages.size() == in.rounds);
  for (size_t i = 0; i < pages.size(); ++i) {
    const std::set<uint64_t> window(pages.begin() + long(i), pages.begin() + long(std::min(pages.size(), i + in.tlb_pages)));
    if (i + in.tlb_pages <= pages.size()) CHECK(window.size() == in.tlb_pages);
  }
}

TEST_CASE("spectrum design: twice the L2 follows the DRAM lines", "[spectrum]") {
  SpectrumInputs in = hopper_like();
  in.tlb_pages = 0;
  in.l2_bytes = 50 * MiB;
  const SpectrumDesign d = design_spectrum(in);
  uint64_t last_dram = 0;
  for (uint64_t o : d.offsets)
    if (segment_at(d, o) == Segment::Dram) last_dram = std::max(last_dram, o);
  CHECK(d.footprint_bytes >= last_dram + 2 * in.l2_bytes);
  CHECK(d.steps == 4 * in.rounds);
  CHECK(d.notes.empty());
}

TEST_CASE("spectrum design: the footprint limit drops the TLB segment and says so", "[spectrum]") {
  SpectrumInputs in = hopper_like();
  in.max_footprint_bytes = 32 * MiB;
  const SpectrumDesign d = design_spectrum(in);
  CHECK(d.tlb_pages == 0);
  CHECK(d.steps == 4 * in.rounds);
  REQUIRE(d.notes.size() == 1);
  CHECK(d.notes[0].find("no TLB segment") != std::string::npos);
  CHECK(d.footprint_bytes <= in.max_footprint_bytes);
  in.max_footprint_bytes = 8 * MiB;  // not even twice the L2 behind the DRAM lines
  const SpectrumDesign small = design_spectrum(in);
  CHECK(small.notes.size() == 2);
  CHECK(small.footprint_bytes <= in.max_footprint_bytes);
  for (uint64_t o : small.offsets) CHECK(o < small.footprint_bytes);
  in.max_footprint_bytes = 4 * MiB;  // not even the sets themselves
  CHECK_THROWS_AS(design_spectrum(in), std::invalid_argument);
}

TEST_CASE("spectrum design: a small L2 caps the L2 set and says so", "[spectrum]") {
  SpectrumInputs in = hopper_like();
  in.l2_bytes = 1 * MiB;
  const SpectrumDesign d = design_spectrum(in);
  CHECK(d.l2_lines * in.line_bytes <= in.l2_bytes / 4);
  REQUIRE_FALSE(d.notes.empty());
  CHECK(d.notes[0].find("quarter of the L2") != std::string::npos);
}

TEST_CASE("spectrum design: inputs without room for the chase are refused", "[spectrum]") {
  SpectrumInputs in = hopper_like();
  in.line_bytes = 96;
  CHECK_THROWS_AS(design_spectrum(in), std::invalid_argument);
  in = hopper_like();
  in.l1_bytes = 0;
  CHECK_THROWS_AS(design_spectrum(in), std::invalid_argument);
  in = hopper_like();
  in.rounds = 0;
  CHECK_THROWS_AS(design_spectrum(in), std::invalid_argument);
}

TEST_CASE("spectrum design: many small pages that cannot hold the rounds drop the TLB segment and say so",
          "[spectrum]") {
  SpectrumInputs in = hopper_like();
  in.page_bytes = 32 * 1024;  // a TLB level of 32 KiB pages with 20278 entries, as one H100 run reported
  in.tlb_pages = 20278;
  in.rounds = 512;
  const SpectrumDesign d = design_spectrum(in);
  CHECK(d.tlb_pages == 0);
  CHECK(d.steps == 4 * in.rounds);
  REQUIRE_FALSE(d.notes.empty());
  CHECK(d.notes.back().find("hold too few lines for 512 rounds") != std::string::npos);
  for (uint64_t o : d.offsets) CHECK(segment_at(d, o) != Segment::Tlb);
}
