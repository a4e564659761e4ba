// The counting statistics of the cache procedure (memtopo/analysis/counts.hpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "memtopo/analysis.hpp"

namespace an = memtopo::analysis;

TEST_CASE("counts: a count is beyond chance only past the Poisson noise of what chance gives", "[analysis][counts]") {
  CHECK_FALSE(an::beyond_chance(1, 0));  // one stray event is never enough
  CHECK(an::beyond_chance(2, 0));
  // Expected 100: 100 + 4 * 10 + 2 = 142.
  CHECK_FALSE(an::beyond_chance(141, 100));
  CHECK(an::beyond_chance(142, 100));
  // Counts drawn from the expected rate itself stay below the bar.
  std::mt19937 rng(5);
  std::poisson_distribution<int> poisson(30.0);
  int beyond = 0;
  for (int i = 0; i < 2000; ++i) beyond += an::beyond_chance(poisson(rng), 30.0) ? 1 : 0;
  CHECK(beyond == 0);
}

TEST_CASE("counts: the mode is the most frequent value, the smallest of a tie", "[analysis][counts]") {
  const an::Mode m = an::mode({64, 32, 32, 96, 32, 64});
  CHECK(m.value == 32);
  CHECK(m.share == Approx(0.5));
  CHECK(an::mode({128, 64, 64, 128}).value == 64);
  CHECK(an::mode({}).share == 0);
}

TEST_CASE("counts: chi-square separates uniform victims from skewed ones", "[analysis][counts]") {
  // 4 cells, 400 events: uniform fits; one cell with half of them does not.
  const an::UniformityTest uniform = an::chi_square_uniform({98, 103, 101, 98}, 4);
  CHECK(uniform.p_value > 0.5);
  CHECK(uniform.binned.size() == 4);
  const an::UniformityTest skewed = an::chi_square_uniform({200, 70, 65, 65}, 4);
  CHECK(skewed.p_value < 1e-6);
  CHECK(skewed.chi2 == Approx((100.0 * 100 + 30 * 30 + 35 * 35 + 35 * 35) / 100));
  // Many cells into few bins: the groups add up, and the expected count per group follows
  // the cells in it (10 cells into 3 bins: 4, 3, 3).
  std::vector<double> cells(10, 10.0);
  const an::UniformityTest grouped = an::chi_square_uniform(cells, 3);
  REQUIRE(grouped.binned.size() == 3);
  CHECK(grouped.binned[0] + grouped.binned[1] + grouped.binned[2] == 100);
  CHECK(grouped.chi2 == Approx(0).margin(1e-9));
}

TEST_CASE("counts: the standard error of a proportion", "[analysis][counts]") {
  CHECK(an::proportion_standard_error(0.25, 10000) == Approx(std::sqrt(0.25 * 0.75 / 10000)));
  // Never below one event in n, so a proportion of 0 or 1 still has an error.
  CHECK(an::proportion_standard_error(0.0, 100) == Approx(std::sqrt(1.0 / 100 / 100)));
  CHECK(an::proportion_standard_error(1.0, 0) > 0);
}
