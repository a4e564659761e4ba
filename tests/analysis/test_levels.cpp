#include <catch2/catch.hpp>

#include <cmath>

#include "memtopo/analysis.hpp"
#include "synthetic.hpp"

using namespace memtopo::analysis;

namespace {
// Integer latencies around `centre` with normal jitter `sd`, with their true level label.
void add_level(std::vector<double>& x, std::vector<uint32_t>& label, uint32_t level, double centre, double sd,
               size_t count, synthetic::Noise& n) {
  for (size_t i = 0; i < count; ++i) {
    x.push_back(std::round(centre + sd * n.normal()));
    label.push_back(level);
  }
}
void shuffle(std::vector<double>& x, std::vector<uint32_t>& label, synthetic::Noise& n) {
  for (size_t i = x.size() - 1; i > 0; --i) {
    const size_t j = n.below(i + 1);
    std::swap(x[i], x[j]);
    std::swap(label[i], label[j]);
  }
}
}  // namespace

TEST_CASE("levels: bimodal hit/miss latencies", "[analysis][levels]") {
  synthetic::Noise n(101);
  std::vector<double> x;
  std::vector<uint32_t> label;
  add_level(x, label, 0, 32, 0.7, 900, n);
  add_level(x, label, 1, 290, 10, 100, n);
  shuffle(x, label, n);
  const Levels lv = find_levels(x);
  INFO(lv.reason);
  REQUIRE(lv.found);
  REQUIRE(lv.levels.size() == 2);
  CHECK(lv.levels[0].centre == Approx(32).margin(1));
  CHECK(lv.levels[1].centre == Approx(290).margin(5));
  CHECK(lv.levels[0].count == 900);
  CHECK(lv.levels[1].count == 100);
  CHECK(lv.levels[1].spread == Approx(10).epsilon(0.3));
  REQUIRE(lv.boundaries.size() == 1);
  CHECK(lv.boundaries[0] > 40);
  CHECK(lv.boundaries[0] < 250);
  CHECK(lv.level_of == label);
  const auto miss = lv.misses();
  for (size_t i = 0; i < x.size(); ++i) CHECK(miss[i] == (label[i] == 1 ? 1 : 0));
  CHECK(lv.classify(33) == 0);
  CHECK(lv.classify(280) == 1);
  // The uint32_t overload gives the same answer.
  std::vector<uint32_t> ints(x.begin(), x.end());
  CHECK(find_levels(ints).levels.size() == 2);
}

TEST_CASE("levels: trimodal with rare outliers", "[analysis][levels]") {
  synthetic::Noise n(202);
  std::vector<double> x;
  std::vector<uint32_t> label;
  add_level(x, label, 0, 34, 1, 600, n);
  add_level(x, label, 1, 210, 8, 250, n);
  add_level(x, label, 2, 480, 25, 150, n);
  for (double o : {1500.0, 2600.0, 4100.0, 9000.0, 120.0}) {
    x.push_back(o);
    label.push_back(99);
  }
  shuffle(x, label, n);
  const Levels lv = find_levels(x);
  INFO(lv.reason);
  REQUIRE(lv.levels.size() == 3);
  CHECK(lv.levels[0].centre == Approx(34).margin(1));
  CHECK(lv.levels[1].centre == Approx(210).margin(3));
  CHECK(lv.levels[2].centre == Approx(480).margin(8));
  CHECK(lv.outlier_count == 5);
  for (size_t i = 0; i < x.size(); ++i) {
    if (label[i] == 99) {
      CHECK(lv.outlier[i] == 1);
    } else {
      CHECK(lv.outlier[i] == 0);
      CHECK(lv.level_of[i] == label[i]);
    }
  }
}

TEST_CASE("levels: a rare but real miss level is kept", "[analysis][levels]") {
  // One pass of an LRU cache overflowed by one line: a handful of misses among 1000 hits.
  synthetic::Noise n(303);
  std::vector<double> x;
  std::vector<uint32_t> label;
  add_level(x, label, 0, 30, 0.5, 1000, n);
  add_level(x, label, 1, 300, 3, 6, n);
  const Levels lv = find_levels(x);
  INFO(lv.reason);
  REQUIRE(lv.levels.size() == 2);
  CHECK(lv.levels[1].count == 6);
  CHECK(lv.outlier_count == 0);
}

TEST_CASE("levels: one level when there is only jitter", "[analysis][levels]") {
  synthetic::Noise n(404);
  std::vector<double> x;
  for (int i = 0; i < 2000; ++i) x.push_back(33 + static_cast<double>(n.below(4)));  // 33..36
  const Levels lv = find_levels(x);
  REQUIRE(lv.levels.size() == 1);
  CHECK(lv.boundaries.empty());
  const auto miss = lv.misses();
  CHECK(std::count(miss.begin(), miss.end(), 1) == 0);
  // Continuous (non-integer) values: two well separated clusters.
  std::vector<double> c;
  for (int i = 0; i < 300; ++i) c.push_back(1.0 + 0.01 * n.normal());
  for (int i = 0; i < 300; ++i) c.push_back(2.0 + 0.02 * n.normal());
  const Levels lc = find_levels(c);
  REQUIRE(lc.levels.size() == 2);
  CHECK(lc.levels[1].centre == Approx(2.0).margin(0.01));
}

TEST_CASE("levels: max_levels merges the closest, empty input gets a reason", "[analysis][levels]") {
  synthetic::Noise n(505);
  std::vector<double> x;
  std::vector<uint32_t> label;
  add_level(x, label, 0, 30, 0.5, 300, n);
  add_level(x, label, 1, 60, 0.5, 300, n);
  add_level(x, label, 2, 600, 5, 300, n);
  CHECK(find_levels(x).levels.size() == 3);
  LevelOptions o;
  o.max_levels = 2;
  const Levels two = find_levels(x, o);
  REQUIRE(two.levels.size() == 2);
  CHECK(two.levels[0].count == 600);  // 30 and 60 merged: their gap is smallest for their spread
  const Levels none = find_levels(std::vector<double>{});
  CHECK_FALSE(none.found);
  CHECK(none.reason == "no samples");
}

TEST_CASE("miss counts per window", "[analysis][levels]") {
  const std::vector<uint8_t> miss{1, 0, 0, 1, 1, 1, 0, 0, 0, 1};
  CHECK(miss_counts(miss, 4) == std::vector<size_t>{2, 2, 1});
  CHECK(miss_counts(miss, 10) == std::vector<size_t>{5});
  CHECK(miss_counts(miss, 0).empty());
}

TEST_CASE("periodicity: one miss every line/stride loads", "[analysis][periodicity]") {
  // 128-byte lines, 4-byte stride: one miss every 32 loads, first at step 5.
  std::vector<uint8_t> ev(2048, 0);
  for (size_t i = 5; i < ev.size(); i += 32) ev[i] = 1;
  const Periodicity p = periodicity(ev);
  INFO(p.reason);
  CHECK(p.found);
  CHECK(p.period == 32);
  CHECK(p.strength == Approx(1.0));
  CHECK(p.first_event == 5);
  CHECK(p.median_spacing == 32);
  CHECK(p.event_rate == Approx(64.0 / 2048));
}

TEST_CASE("periodicity: LRU pattern with several misses per period", "[analysis][periodicity]") {
  // Mei and Chu, Fig. 3: 13-word array over a 12-word cache; misses at 1, 7 and 13 of every 13.
  std::vector<uint8_t> ev(13 * 40, 0);
  for (size_t i = 0; i < ev.size(); ++i) {
    const size_t k = i % 13;
    ev[i] = (k == 0 || k == 6 || k == 12) ? 1 : 0;
  }
  const Periodicity p = periodicity(ev);
  INFO(p.reason);
  CHECK(p.found);
  CHECK(p.period == 13);
  CHECK(p.strength > 0.99);
}

TEST_CASE("periodicity: random misses (non-LRU) are not periodic", "[analysis][periodicity]") {
  synthetic::Noise n(606);
  std::vector<uint8_t> ev(4000, 0);
  for (auto& e : ev) e = n.uniform() < 0.1 ? 1 : 0;
  const Periodicity p = periodicity(ev);
  INFO(p.reason);
  CHECK_FALSE(p.found);
  CHECK(p.strength < 0.3);
  // Periodic misses with 3 % of them dropped at random (noise) still count.
  std::vector<uint8_t> noisy(4000, 0);
  for (size_t i = 0; i < noisy.size(); i += 8) noisy[i] = n.uniform() < 0.97 ? 1 : 0;
  PeriodicityOptions o;
  o.min_strength = 0.8;
  const Periodicity q = periodicity(noisy, o);
  INFO(q.reason);
  CHECK(q.found);
  CHECK(q.period == 8);
}

TEST_CASE("periodicity: too few events is a reason, not a period", "[analysis][periodicity]") {
  std::vector<uint8_t> ev(100, 0);
  ev[10] = ev[50] = 1;
  const Periodicity p = periodicity(ev);
  CHECK_FALSE(p.found);
  CHECK(p.reason.find("too few") != std::string::npos);
  CHECK_FALSE(periodicity(std::vector<uint8_t>(100, 0)).found);
}

TEST_CASE("plateaus of a footprint sweep: levels and the ramps between them", "[analysis][levels]") {
  // near L2 (with jitter), a ramp, far L2, a ramp, DRAM: the H100's shape at 8 points per octave
  const std::vector<double> x{283, 290, 286, 288, 283, 285, 294, 320, 460, 521, 538, 536, 539, 541, 550, 620, 692, 712, 708, 713};
  const auto p = plateaus(x);
  REQUIRE(p.size() == 3);
  CHECK(p[0].first == 0);
  CHECK(p[0].last == 6);
  CHECK(p[0].median == Approx(286));
  CHECK(p[1].first == 9);  // 521 is within 4 % of the far level
  CHECK(p[1].last == 14);
  CHECK(p[1].median == Approx(538.5));
  CHECK(p[2].first == 16);
  CHECK(p[2].last == 19);
}

TEST_CASE("plateaus: a spike does not split a level, a slow ramp is no level", "[analysis][levels]") {
  const auto spiked = plateaus({100, 101, 99, 100, 180, 100, 101, 100, 250, 251, 249});
  REQUIRE(spiked.size() == 2);
  CHECK(spiked[0].first == 0);
  CHECK(spiked[0].last == 7);
  CHECK(spiked[1].first == 8);
  // Rising 2.5 % per point: neighbours stay within 4 % of their median, but the halves of
  // every run differ by more.
  std::vector<double> ramp;
  for (int i = 0; i < 20; ++i) ramp.push_back(100 * std::pow(1.025, i));
  CHECK(plateaus(ramp).empty());
  CHECK(plateaus(ramp, 0.06).size() >= 2);  // a looser tolerance cuts it into steps
  CHECK(plateaus({100, 150, 225, 340}).empty());
}

TEST_CASE("plateaus: a level whose values jump between two close sublevels is one level", "[analysis][levels]") {
  // The H100's near L2 at 8 footprints per octave (run 2 of c32cd3a): 275 and 283 cycles by
  // turns, then the ramp to the far partition.
  const std::vector<double> x{283.0, 284.0, 275.1, 277.7, 283.1, 275.7, 282.9, 275.4, 275.5, 275.5, 275.2, 275.5,
                              275.6, 277.8, 283.3, 275.3, 285.5, 277.7, 279.2, 290.5, 376.1, 502.0, 528.8, 529.3,
                              531.2, 522.5, 528.5, 533.7, 605.1, 681.5, 678.7, 679.5};
  const auto p = plateaus(x);
  REQUIRE(p.size() == 3);
  CHECK(p[0].first == 0);
  CHECK(p[0].last == 18);
  CHECK(p[1].first == 22);  // 502 is 5 % below the far level: still the ramp
  CHECK(p[2].first == 29);
}

TEST_CASE("level_starts: a level begins where the ramp has gone 1/8 of the way", "[analysis][levels]") {
  // The H100's L2 sweep at 8 footprints per octave from 8.61 MB (build 0868b91, three runs on
  // one GPU). The near plateau ends at 20.48, 22.34 or 24.36 MB from run to run (its last
  // footprints creep up by a few cycles); 1/8 of the way to the far level is 26.56 MB in all
  // three, and 1/8 of the way to DRAM is 53.12 MB.
  const std::vector<std::vector<double>> runs{
      {284.6, 283.0, 278.0, 278.0, 283.0, 283.0, 280.2, 278.0, 283.0, 283.0, 278.0, 289.5, 296.6,
       345.8, 491.7, 530.6, 530.6, 530.5, 523.5, 523.5, 533.0, 610.4, 683.8, 688.4, 686.4},
      {280.2, 283.0, 282.9, 280.2, 280.2, 285.2, 285.2, 278.0, 285.1, 283.0, 283.0, 284.1, 295.3,
       342.9, 463.3, 528.5, 523.5, 530.6, 528.6, 526.0, 527.8, 585.0, 687.4, 684.4, 681.5},
      {285.2, 285.1, 283.0, 280.2, 278.1, 282.9, 283.0, 280.2, 280.2, 282.9, 283.1, 278.3, 283.3,
       366.1, 469.2, 508.3, 525.0, 530.1, 530.7, 523.6, 531.9, 579.2, 689.3, 684.3, 684.4}};
  for (const auto& x : runs) {
    const auto p = plateaus(x);
    REQUIRE(p.size() == 3);
    const auto s = level_starts(x, p);
    REQUIRE(s.size() == 3);
    CHECK(s[0] == 0);
    CHECK(s[1] == 13);
    CHECK(s[2] == 21);
  }
  // Falling levels work the same way; a plateau right after the previous one starts there.
  const std::vector<double> down{500, 502, 498, 480, 300, 200, 201, 199};
  const auto pd = plateaus(down);
  REQUIRE(pd.size() == 2);
  CHECK(level_starts(down, pd)[1] == 4);
  const std::vector<double> step{100, 101, 99, 200, 201, 199};
  CHECK(level_starts(step, plateaus(step))[1] == 3);
}

TEST_CASE("level_start_positions: where the ramp crosses the mark, between grid points", "[analysis][levels]") {
  // The end of an H100 sweep (H100 #80, 769eef7): the near DRAM level, then the next at 676
  // cycles. 48.7 MB read 531.9 here and, in another run of the same GPU, enough more to leave
  // the plateau and pass 1/8 of the way: the first footprint past the mark moved a whole grid
  // step (53.1 to 48.7 MB, -8.3 %). The crossings lie between the footprints either side.
  const std::vector<double> mb{31.588352, 37.565056, 44.672640, 48.715776, 53.124992, 57.933184, 63.176704, 75.130112};
  const std::vector<double> a{517.2, 519.0, 522.5, 531.9, 590.4, 675.6, 677.7, 675.1};
  std::vector<double> b = a;
  b[3] = 542.0;
  const auto pa = plateaus(a), pb = plateaus(b);
  REQUIRE(pa.size() == 2);
  REQUIRE(pb.size() == 2);
  CHECK(level_starts(a, pa)[1] == 4);
  CHECK(level_starts(b, pb)[1] == 3);
  const auto xa = level_start_positions(a, mb, pa), xb = level_start_positions(b, mb, pb);
  REQUIRE(xa.size() == 2);
  REQUIRE(xb.size() == 2);
  CHECK(xa[0] == Approx(mb[0]));
  CHECK(xa[1] > mb[3]);
  CHECK(xa[1] < mb[4]);
  CHECK(xb[1] > mb[2]);
  CHECK(xb[1] < mb[3]);
  CHECK(std::fabs(xb[1] / xa[1] - 1) < 0.03);
  // A sharp step: 1/8 of the way (in log position) from the last point below.
  const std::vector<double> step{100, 101, 99, 200, 201, 199};
  const std::vector<double> at{1, 2, 4, 8, 16, 32};
  const auto xs = level_start_positions(step, at, plateaus(step));
  REQUIRE(xs.size() == 2);
  CHECK(xs[1] == Approx(4 * std::pow(2.0, 13.5 / 101)).epsilon(0.01));
  CHECK(level_start_positions(step, {1, 2}, plateaus(step)).empty());  // one position per value
}

// The H100's DRAM reads: near and far homes 190 cycles apart, each spread by 25 cycles, with
// the valley between them filled and a slow tail (what find_levels joins into one level).
TEST_CASE("two modes: near and far homes with a filled valley", "[analysis][levels]") {
  synthetic::Noise n(7);
  std::vector<double> x;
  std::vector<uint32_t> label;
  add_level(x, label, 0, 560, 25, 1800, n);
  add_level(x, label, 1, 750, 30, 2000, n);
  add_level(x, label, 2, 1000, 80, 200, n);
  shuffle(x, label, n);
  CHECK(find_levels(x).levels.size() < 2);  // why two_modes exists
  const TwoModes m = two_modes(x, 1.15, 0.1);
  REQUIRE(m.found());
  CHECK(m.low == Approx(560).margin(8));
  CHECK(m.high == Approx(755).margin(12));
  CHECK(m.low_count + m.high_count == x.size());
  CHECK(m.split() == Approx((m.low + m.high) / 2));
}

TEST_CASE("two modes: one level, a rare side or too few samples are not two", "[analysis][levels]") {
  synthetic::Noise n(8);
  std::vector<double> x;
  std::vector<uint32_t> label;
  add_level(x, label, 0, 560, 25, 4000, n);
  CHECK_FALSE(two_modes(x).found());  // one level's spread: within 15 %
  add_level(x, label, 1, 900, 10, 100, n);
  CHECK_FALSE(two_modes(x, 1.15, 0.1).found());  // 100 of 4100: below a tenth
  add_level(x, label, 1, 900, 10, 900, n);
  CHECK(two_modes(x, 1.15, 0.1).found());
  CHECK_FALSE(two_modes({1, 2, 3}).found());
}

// First reads from DRAM of a device whose far partition adds 47 cycles to 560 (8 %): within
// 15 %, but each level spread by 2 cycles. A single level spread as widely is not two.
TEST_CASE("two modes: levels closer than the ratio but many spreads apart", "[analysis][levels]") {
  synthetic::Noise n(9);
  auto reads = [&](double spread, size_t far_reads) {
    std::vector<double> x;
    std::vector<uint32_t> label;
    add_level(x, label, 0, 560, spread, 1000, n);
    if (far_reads) add_level(x, label, 1, 607, spread, far_reads, n);
    shuffle(x, label, n);
    return x;
  };
  const std::vector<double> x = reads(2, 3000);
  CHECK_FALSE(two_modes(x, 1.15, 0.1).found());
  const TwoModes m = two_modes_or_separated(x, 1.15, 0.1);
  REQUIRE(m.found());
  CHECK(m.low == Approx(560).margin(2));
  CHECK(m.high == Approx(607).margin(2));
  // The same gap with spreads of 10 cycles each: no longer ten spreads apart.
  CHECK_FALSE(two_modes_or_separated(reads(10, 3000), 1.15, 0.1).found());
  // One level: never two.
  CHECK_FALSE(two_modes_or_separated(reads(2, 0), 1.15, 0.1).found());
}
