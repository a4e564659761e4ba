// The latency spectrum's analysis (plugins/global-throughput/spectrum_analysis.cpp) on modelled
// samples: levels exact in count, latencies within 5 %, shares within 2 %, names from the
// segments, with and without noise and interrupted loads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "spectrum_analysis.hpp"

using global_throughput::analyse_spectrum;
using global_throughput::histogram;
using global_throughput::Segment;
using global_throughput::Spectrum;

namespace {

// `loads` loads of one segment at one raw latency.
struct Group {
  Segment segment;
  double cycles;
  size_t loads;
  std::string name;  // the level's expected name ("" where it joins another group's level)
};

struct Model {
  std::vector<double> cycles;
  std::vector<Segment> segment;
};

// The groups' loads shuffled, each with 0..noise extra cycles, and a share of them interrupted
// (2000 cycles more).
Model sample(const std::vector<Group>& groups, double noise, double interrupted, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0, 1);
  Model m;
  for (const Group& g : groups) {
    for (size_t i = 0; i < g.loads; ++i) {
      m.cycles.push_back(std::round(g.cycles + noise * u(gen) + (u(gen) < interrupted ? 2000 : 0)));
      m.segment.push_back(g.segment);
    }
  }
  std::vector<size_t> order(m.cycles.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::shuffle(order.begin(), order.end(), gen);
  Model out;
  for (size_t i : order) {
    out.cycles.push_back(m.cycles[i]);
    out.segment.push_back(m.segment[i]);
  }
  return out;
}

size_t total_loads(const std::vector<Group>& groups) {
  size_t n = 0;
  for (const Group& g : groups) n += g.loads;
  return n;
}

// Every named group comes back as one level, in latency order: its name, its load-to-use
// latency (its raw cycles and the noise's mean, less the timing cost) within 5 %, its share
// within 2 %.
void check_levels(const Spectrum& s, const std::vector<Group>& groups, double noise) {
  std::vector<Group> named;
  for (const Group& g : groups)
    if (!g.name.empty()) named.push_back(g);
  std::sort(named.begin(), named.end(), [](const Group& a, const Group& b) { return a.cycles < b.cycles; });
  REQUIRE(s.found);
  REQUIRE(s.levels.size() == named.size());
  const double n = double(total_loads(groups));
  for (size_t i = 0; i < named.size(); ++i) {
    INFO("level " << i << ": " << named[i].name);
    CHECK(s.levels[i].name == named[i].name);
    const double want = named[i].cycles + noise / 2 - s.timing_cost_cycles;
    CHECK(s.levels[i].latency_cycles == Approx(want).epsilon(0.05));
    size_t loads = 0;  // the named group and the groups that join its level (same latency)
    for (const Group& g : groups)
      if (g.cycles == named[i].cycles) loads += g.loads;
    CHECK(s.levels[i].share == Approx(double(loads) / n).margin(0.02));
  }
}

// The hopper-like device's spectrum: timing cost 6, L2 near and far, an L1 TLB miss of 25 cycles
// on both, DRAM near and far; shares of the design (2 L1 loads per round, 1 of each other).
std::vector<Group> hopper_like() {
  return {{Segment::L1, 39, 1024, "l1"},
          {Segment::L2, 268, 256, "l2_near"},
          {Segment::L2, 426, 256, "l2_far"},
          {Segment::Tlb, 293, 256, "tlb_miss_near"},
          {Segment::Tlb, 451, 256, "tlb_miss_far"},
          {Segment::Dram, 586, 256, "dram_near"},
          {Segment::Dram, 744, 256, "dram_far"}};
}

}  // namespace

TEST_CASE("spectrum: every level of a partitioned L2 comes back, named", "[spectrum]") {
  const auto groups = hopper_like();
  const Model m = sample(groups, 0, 0, 1);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 33);
  CHECK(s.timing_cost_cycles == Approx(6));
  check_levels(s, groups, 0);
  CHECK(s.outliers == 0);
  REQUIRE(s.first(Segment::Tlb));
  CHECK(s.first(Segment::Tlb)->name == "tlb_miss_near");
  CHECK(s.named("dram_far")->latency_cycles == Approx(738));
}

TEST_CASE("spectrum: noise and interrupted loads leave the levels", "[spectrum][noise]") {
  const auto groups = hopper_like();
  for (uint32_t seed : {2u, 3u, 4u}) {
    INFO("seed " << seed);
    const Model m = sample(groups, 4, 0.002, seed);
    // The pointer chase sees the noise's mean too.
    const Spectrum s = analyse_spectrum(m.cycles, m.segment, 35);
    CHECK(s.timing_cost_cycles == Approx(6).margin(1.5));
    check_levels(s, groups, 4);
    CHECK(s.outliers > 0);
    CHECK(s.outliers < m.cycles.size() / 100);
    size_t in_levels = 0;
    for (const auto& l : s.levels) in_levels += l.loads;
    CHECK(in_levels + s.outliers == m.cycles.size());
  }
}

TEST_CASE("spectrum: one L2 partition gives plain names", "[spectrum]") {
  // The kepler-like device: one partition, a 40-cycle L1 TLB miss.
  const std::vector<Group> groups = {{Segment::L1, 80, 1024, "l1"},
                                     {Segment::L2, 238, 512, "l2"},
                                     {Segment::Tlb, 278, 512, "tlb_miss"},
                                     {Segment::Dram, 361, 512, "dram"}};
  const Model m = sample(groups, 2, 0.001, 5);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 64.5);
  CHECK(s.timing_cost_cycles == Approx(16.5).margin(1));
  check_levels(s, groups, 2);
}

TEST_CASE("spectrum: pages that cost nothing more are L2 hits, not TLB misses", "[spectrum]") {
  // The H100: no TLB level within 59 GiB; DRAM in two levels while the L2 shows one, so they
  // are numbered rather than called near and far.
  const std::vector<Group> groups = {{Segment::L1, 43, 1024, "l1"},
                                     {Segment::L2, 283, 512, "l2"},
                                     {Segment::Tlb, 283, 512, ""},
                                     {Segment::Dram, 600, 256, "dram_1"},
                                     {Segment::Dram, 760, 256, "dram_2"}};
  const Model m = sample(groups, 3, 0, 6);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 39);
  CHECK(s.timing_cost_cycles == Approx(5.5).margin(1));
  check_levels(s, groups, 3);
  CHECK_FALSE(s.first(Segment::Tlb));
}

TEST_CASE("spectrum: an L1 that keeps part of the hot set", "[spectrum]") {
  // The pascal-like L1 (4 ways, non-uniform replacement): a third of the hot loads miss to
  // the L2; the L1 level keeps its name and the L2 level its own.
  const std::vector<Group> groups = {{Segment::L1, 94, 700, "l1"},
                                     {Segment::L1, 228, 324, ""},
                                     {Segment::L2, 228, 512, "l2"},
                                     {Segment::Tlb, 258, 512, "tlb_miss"},
                                     {Segment::Dram, 442, 512, "dram"}};
  const Model m = sample(groups, 2, 0, 7);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 83);
  CHECK(s.timing_cost_cycles == Approx(12).margin(1));
  check_levels(s, groups, 2);
}

TEST_CASE("spectrum: without an L1 the hot set is an L2 level", "[spectrum]") {
  // Global loads not cached in L1: the hot set's loads are L2 hits, and the pointer chase over
  // it measures the L2, so the timing cost still comes out.
  const std::vector<Group> groups = {{Segment::L1, 266, 1024, ""},
                                     {Segment::L2, 266, 512, "l2"},
                                     {Segment::Tlb, 296, 512, "tlb_miss"},
                                     {Segment::Dram, 506, 512, "dram"}};
  const Model m = sample(groups, 0, 0, 8);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 260);
  CHECK(s.timing_cost_cycles == Approx(6));
  check_levels(s, groups, 0);
  CHECK_FALSE(s.first(Segment::L1));
}

TEST_CASE("spectrum: a level no segment holds a share of is other", "[spectrum]") {
  // 100 loads of the DRAM segment (4.8 % of it, under the 5 % a segment needs to name a level,
  // 4.3 % of all, over the 4 % a level needs) answer at a latency of their own.
  const std::vector<Group> groups = {{Segment::L1, 40, 200, "l1"}, {Segment::Dram, 600, 2000, "dram"},
                                     {Segment::Dram, 1200, 100, "other"}};
  const Model m = sample(groups, 0, 0, 9);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 34);
  check_levels(s, groups, 0);
  CHECK_FALSE(s.levels.back().attributed);
}

TEST_CASE("spectrum: no timing cost without a pointer chase", "[spectrum]") {
  const std::vector<Group> groups = {{Segment::L1, 40, 100, "l1"}, {Segment::Dram, 600, 100, "dram"}};
  const Model m = sample(groups, 0, 0, 10);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, std::nan(""));
  CHECK(s.timing_cost_cycles == 0);
  check_levels(s, groups, 0);
}

TEST_CASE("spectrum: what cannot be analysed says why", "[spectrum]") {
  const Spectrum none = analyse_spectrum({}, {}, 30);
  CHECK_FALSE(none.found);
  CHECK_FALSE(none.reason.empty());
  const Spectrum mismatched = analyse_spectrum({40, 41, 40}, {Segment::L1}, 30);
  CHECK_FALSE(mismatched.found);
  CHECK(mismatched.reason.find("3 samples") != std::string::npos);
}

TEST_CASE("spectrum: the histogram counts every load once", "[spectrum]") {
  const std::vector<double> cycles = {39, 39, 40, 268, 269, 270, 586, 2586};
  const auto one = histogram(cycles);
  REQUIRE(one.size() == 7);
  CHECK(one[0].cycles == 39);
  CHECK(one[0].loads == 2);
  CHECK(one.back().cycles == 2586);
  const auto wide = histogram(cycles, 10);
  REQUIRE(wide.size() == 6);
  CHECK(wide[0].cycles == 30);
  CHECK(wide[0].loads == 2);
  CHECK(wide[1].cycles == 40);
  CHECK(wide[2].cycles == 260);
  CHECK(wide[2].loads == 2);
  CHECK(wide[3].cycles == 270);
  size_t sum = 0;
  for (const auto& b : wide) sum += b.loads;
  CHECK(sum == cycles.size());
}

namespace {

// A recorded series of plugins/global-throughput/tests/fixtures/: step, cycles and segment per sample.
void read_samples(const std::string& name, std::vector<double>& cycles, std::vector<Segment>& segment) {
  std::ifstream in(std::string(MEMTOPO_SOURCE_DIR) + "/plugins/global-throughput/tests/fixtures/" + name);
  REQUIRE(in);
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::stringstream row(line);
    std::string step, c, seg;
    std::getline(row, step, ',');
    std::getline(row, c, ',');
    std::getline(row, seg, ',');
    cycles.push_back(std::stod(c));
    segment.push_back(static_cast<Segment>(std::stoi(seg)));
  }
}

}  // namespace

TEST_CASE("spectrum: the H100's recorded spectrum keeps its levels apart", "[spectrum][h100]") {
  // plugins/global-throughput/tests/fixtures/h100_samples.csv: the 2560 samples of one run on an H100
  // (device info only, 2026-11-23); its hot-set pointer chases took 4162 and 12354 cycles for
  // 128 and 384 loads (32 a load). DRAM loads spread from 527 to 1198 cycles, which made
  // an::find_levels join every level into one; docs/results/log/h100.md has the levels' values.
  std::vector<double> cycles;
  std::vector<Segment> segment;
  read_samples("h100_samples.csv", cycles, segment);
  REQUIRE(cycles.size() == 2560);
  const Spectrum s = analyse_spectrum(cycles, segment, (12354.0 - 4162.0) / 256.0);
  REQUIRE(s.found);
  std::vector<std::string> names;
  for (const auto& l : s.levels) names.push_back(l.name);
  // One L2 level (the H100 copies far lines near their reader; its TLB shows no level), DRAM
  // near and far homes numbered.
  CHECK(names == std::vector<std::string>{"l1", "l2", "dram_1", "dram_2"});
  CHECK(s.timing_cost_cycles == Approx(3).margin(1));  // docs/measurement.md: 3 to 4 cycles
  REQUIRE(s.levels.size() == 4);
  CHECK(s.levels[0].latency_cycles == Approx(32).epsilon(0.05));
  CHECK(s.levels[1].latency_cycles == Approx(283).epsilon(0.05));   // near L2 hit, pointer chases
  CHECK(s.levels[2].latency_cycles == Approx(565).epsilon(0.05));   // DRAM, near home (530-600)
  CHECK(s.levels[3].latency_cycles == Approx(750).epsilon(0.05));   // DRAM, far home (700-800)
  CHECK(s.levels[0].share == Approx(0.4).margin(0.01));
  CHECK(s.levels[1].share == Approx(0.4).margin(0.01));
  CHECK(s.levels[2].share + s.levels[3].share == Approx(0.2).margin(0.01));
}

TEST_CASE("spectrum: three H100 runs split DRAM's near and far homes alike", "[spectrum][h100]") {
  // fixtures/h100_samples_run{1,2,3}.csv: three runs of one build on one H100 (2026-11-23,
  // docs/results/log/h100.md). The DRAM loads form two modes, 530-600 and 680-780 cycles, joined
  // by a few dozen loads between: the neighbour gap alone found one DRAM level in two runs and
  // two in the third; the valley split finds two in each. Its L2 hits too form two modes,
  // 250-270 and 280-300 cycles (37 % of them the upper), which the valley split parts in these
  // runs and not in others: less than a quarter apart, they are one level (the slices' spread),
  // so every run has the same levels.
  for (int run = 1; run <= 3; ++run) {
    INFO("run " << run);
    std::vector<double> cycles;
    std::vector<Segment> segment;
    read_samples("h100_samples_run" + std::to_string(run) + ".csv", cycles, segment);
    const Spectrum s = analyse_spectrum(cycles, segment, (12354.0 - 4162.0) / 256.0);
    REQUIRE(s.found);
    std::vector<std::string> names;
    for (const auto& l : s.levels) names.push_back(l.name);
    CHECK(names == std::vector<std::string>{"l1", "l2", "dram_1", "dram_2"});
  }
}

TEST_CASE("spectrum: one DRAM level whose loads form two modes is two, the same in every run", "[spectrum]") {
  // DRAM loads homed near (560 +- 15) and far (750 +- 15) joined by a bridge dense enough that
  // no valley parts them: two modes a third apart are two levels; L2 hits over two slice
  // distances (260 and 290) a tenth apart stay one.
  std::vector<double> cycles;
  std::vector<Segment> segment;
  auto add = [&](Segment s, double from, double to, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      cycles.push_back(from + (to - from) * double(i) / double(n));
      segment.push_back(s);
    }
  };
  add(Segment::L1, 34, 36, 400);
  add(Segment::L2, 255, 265, 100);
  add(Segment::L2, 285, 295, 100);
  add(Segment::Dram, 545, 575, 80);
  add(Segment::Dram, 575, 735, 120);  // the bridge
  add(Segment::Dram, 735, 765, 80);
  const Spectrum s = analyse_spectrum(cycles, segment, 32);
  REQUIRE(s.found);
  std::vector<std::string> names;
  for (const auto& l : s.levels) names.push_back(l.name);
  CHECK(names == std::vector<std::string>{"l1", "l2", "dram_1", "dram_2"});
}

TEST_CASE("spectrum: a run too short for any level still gives every sample its (no) level", "[spectrum]") {
  // One round (the option's smallest value) gives a handful of samples, each its own outlier:
  // the raw series writer reads level_of for every sample.
  const std::vector<double> cycles = {30, 280, 600, 900, 1500};
  const std::vector<Segment> segment(cycles.size(), Segment::Dram);
  const Spectrum s = analyse_spectrum(cycles, segment, 30);
  CHECK(s.levels.empty());
  CHECK_FALSE(s.reason.empty());
  CHECK(s.level_of == std::vector<int32_t>(cycles.size(), -1));
}

TEST_CASE("spectrum: runs of one GPU give the same levels, their latencies within 2 %", "[spectrum][h100]") {
  // fixtures/h100_b_samples_run{1,2,3}.csv (an H100, three default runs of one build,
  // 2026-11-26) and h200_samples_run{1,2,3}.csv (an H200, --only latency-spectrum three times):
  // docs/results/log/h100.md and h200.md, "Run to run".
  for (const std::string gpu : {"h100_b", "h200"}) {
    std::vector<std::vector<double>> latencies;
    std::vector<std::vector<std::string>> names;
    for (int run = 1; run <= 3; ++run) {
      std::vector<double> cycles;
      std::vector<Segment> segment;
      read_samples(gpu + "_samples_run" + std::to_string(run) + ".csv", cycles, segment);
      const Spectrum s = analyse_spectrum(cycles, segment, 32.0);
      REQUIRE(s.found);
      latencies.emplace_back();
      names.emplace_back();
      for (const auto& l : s.levels) {
        latencies.back().push_back(l.latency_cycles);
        names.back().push_back(l.name);
      }
    }
    INFO(gpu);
    CHECK(names[0] == std::vector<std::string>{"l1", "l2", "dram_1", "dram_2"});
    for (int run = 1; run < 3; ++run) {
      REQUIRE(names[run] == names[0]);
      for (size_t k = 0; k < names[0].size(); ++k) CHECK(latencies[run][k] == Approx(latencies[0][k]).epsilon(0.02));
    }
  }
}

TEST_CASE("spectrum: a DRAM tail of 2 % of the loads is no level", "[spectrum][h100]") {
  // An H100's run once had 43 of its 2048 loads (its 512 DRAM-segment loads' slowest) near 1017
  // cycles, named dram_3, which the runs beside it did not have: the same recorded run with
  // its slowest DRAM loads moved there keeps its four levels and counts them as outliers.
  std::vector<double> cycles;
  std::vector<Segment> segment;
  read_samples("h100_b_samples_run1.csv", cycles, segment);
  std::vector<size_t> dram;
  for (size_t i = 0; i < cycles.size(); ++i)
    if (segment[i] == Segment::Dram) dram.push_back(i);
  std::sort(dram.begin(), dram.end(), [&](size_t a, size_t b) { return cycles[a] > cycles[b]; });
  const size_t tail = cycles.size() * 21 / 1000;
  REQUIRE(dram.size() > tail);
  for (size_t k = 0; k < tail; ++k) cycles[dram[k]] = 1005 + double(k % 25);
  const Spectrum s = analyse_spectrum(cycles, segment, 32.0);
  REQUIRE(s.found);
  std::vector<std::string> names;
  for (const auto& l : s.levels) names.push_back(l.name);
  CHECK(names == std::vector<std::string>{"l1", "l2", "dram_1", "dram_2"});
  CHECK(s.outliers >= tail);
}

// An H200's spectrum in one run of three: DRAM's loads at 536 and 713 cycles and a tail of 2.9 %
// of the loads near 902, loads between them filling the valleys. The tail formed two modes with
// the 713 level (each a fifth of it) and became a fifth level; a level holds a level's share.
TEST_CASE("spectrum: a DRAM tail of a few per cent of the loads is no level of its own", "[spectrum]") {
  std::vector<Group> groups = {{Segment::L1, 35, 1024, "l1"},
                               {Segment::L2, 282, 512, "l2"},
                               {Segment::Dram, 540, 216, "dram_1"},
                               {Segment::Dram, 717, 212, "dram_2"},
                               {Segment::Dram, 906, 59, ""}};
  for (double c = 727; c < 900; c += 9) groups.push_back({Segment::Dram, c, 1, ""});
  const Model m = sample(groups, 0, 0, 3);
  const Spectrum s = analyse_spectrum(m.cycles, m.segment, 33);
  REQUIRE(s.found);
  CHECK(s.levels.size() == 4);
  for (const auto& l : s.levels) {
    INFO(l.name << " at " << l.latency_cycles);
    CHECK(l.share >= 0.04);
  }
}
