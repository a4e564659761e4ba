// The levels of l2-levels' footprint sweep (l2_levels_analysis.cpp) on a recorded H100 series.
#include <catch2/catch.hpp>

#include <vector>

#include "l2_levels_analysis.hpp"

namespace {

// An H100's sweep (docs/results/log/h100.md, run #114 t1): the first three footprints past the L1
// read 282 cycles, the rest of the near L2 270 to 274; far L2 about 520, DRAM about 680.
const std::vector<double> kFootprints{
    493568, 586880, 697984, 829952, 987136, 1173888, 1395968, 1660032, 1974272, 2347776, 2791936, 3320192,
    3948544, 4695552, 5584000, 6640512, 7897088, 9391232, 11168128, 13281152, 15794176, 18782464, 22336256,
    24357888, 26562432, 28966528, 31588352, 37565056, 44672640, 48715776, 53124992, 57933184, 63176704,
    75130112};
const std::vector<double> kCycles{
    282.7, 281.8, 274.7, 270.0, 273.8, 274.9, 273.9, 269.7, 269.7, 274.0, 274.1, 269.7, 269.7, 269.7, 274.0,
    269.7, 269.7, 269.7, 273.3, 269.6, 269.7, 273.3, 277.4, 291.3, 395.0, 474.9, 515.5, 521.4, 520.8, 532.2,
    598.3, 673.8, 685.1, 679.7};

}  // namespace

TEST_CASE("l2 levels: a short plateau creeping above the next one is the same level", "[l2][levels]") {
  const auto found = data_cache::footprint_levels(kFootprints, kCycles);
  REQUIRE(found.latencies_cycles.size() == 3);
  CHECK(found.latencies_cycles[0] == Approx(273).margin(4));
  CHECK(found.latencies_cycles[1] == Approx(520).margin(10));
  CHECK(found.latencies_cycles[2] == Approx(680).margin(10));
  REQUIRE(found.start_bytes.size() == 3);
  CHECK(found.start_bytes[0] == kFootprints.front());
  CHECK(found.start_bytes[1] > 22e6);
  CHECK(found.start_bytes[1] < 27e6);
  CHECK(found.start_bytes[2] > 44e6);
}

TEST_CASE("l2 levels: every level is slower than the one before", "[l2][levels]") {
  // A series that falls back after its first level (a warm-up artefact): one level, not two.
  const std::vector<double> falls{100, 300, 301, 299, 280, 279, 281, 280, 282};
  std::vector<double> at;
  for (size_t i = 0; i < falls.size(); ++i) at.push_back(double(1u << (10 + i)));
  const auto found = data_cache::footprint_levels(at, falls);
  REQUIRE(found.latencies_cycles.size() == 1);
  CHECK(found.latencies_cycles[0] == Approx(281).margin(2));
  CHECK(data_cache::footprint_levels({}, {}).latencies_cycles.empty());
}

TEST_CASE("l2 levels: a glitch of three footprints between two spans of one level is that level", "[l2][levels]") {
  // An H200's sweep (docs/results/h200.md, run log): 761 to 905 KB read 285 cycles between 273
  // and 273; the span after the glitch stood as a level of its own (273.06, 273.33, then 285).
  const std::vector<double> at{493568,  586880,  697984,  761088,  829952,  905088,  987136,  1173888, 1395968,
                               1660032, 1974272, 2347776, 2791936, 3320192, 3948544, 4695552, 5584000};
  const std::vector<double> cycles{276.8, 273.1, 272.6, 284.8, 284.8, 285.3, 272.8, 273.0, 273.3,
                                   273.6, 273.6, 273.3, 273.3, 273.3, 273.4, 273.3, 273.3};
  const auto found = data_cache::footprint_levels(at, cycles);
  REQUIRE(found.latencies_cycles.size() == 1);
  CHECK(found.latencies_cycles[0] == Approx(273.3).margin(0.2));
}
