#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>

#include "memtopo/analysis.hpp"
#include "synthetic.hpp"

using namespace memtopo::analysis;

static const Cost kAllCosts[] = {Cost::SquaredError, Cost::AbsoluteDeviation, Cost::NormalMeanVar, Cost::Linear};

static long distance(size_t a, size_t b) { return std::labs(static_cast<long>(a) - static_cast<long>(b)); }

TEST_CASE("segment costs on known values", "[analysis][changepoint]") {
  const std::vector<double> x{1, 2, 3, 10, 10};
  CHECK(segment_cost(x, 0, 3, Cost::SquaredError) == Approx(2.0));       // mean 2: 1 + 0 + 1
  CHECK(segment_cost(x, 0, 3, Cost::AbsoluteDeviation) == Approx(2.0));  // median 2
  CHECK(segment_cost(x, 3, 5, Cost::SquaredError) == Approx(0.0));
  CHECK(segment_cost(x, 0, 3, Cost::NormalMeanVar) == Approx(3 * std::log(2.0 / 3)));
  CHECK(segment_cost(x, 2, 2, Cost::SquaredError) == 0);
}

TEST_CASE("single change point: clean step found exactly with every cost", "[analysis][changepoint]") {
  const auto x = synthetic::steps({0, 23, 60}, {5, 9}, 0.0, 1);
  for (Cost c : kAllCosts) {
    SingleChangeOptions o;
    o.cost = c;
    const SingleChange r = single_change_point(x, o);
    INFO(r.reason);
    CHECK(r.found);
    CHECK(r.index == 23);
    CHECK(r.left_level == Approx(5));
    CHECK(r.right_level == Approx(9));
    CHECK(r.confidence > 0.99);
  }
}

TEST_CASE("single change point: noisy step found within one", "[analysis][changepoint]") {
  for (uint64_t seed : {1, 2, 3, 4, 5}) {
    const auto x = synthetic::steps({0, 37, 100}, {100, 104}, 1.0, seed);
    for (Cost c : kAllCosts) {
      SingleChangeOptions o;
      o.cost = c;
      const SingleChange r = single_change_point(x, o);
      INFO("seed " << seed << ": " << r.reason);
      CHECK(r.found);
      CHECK(distance(r.index, 37) <= 1);
      CHECK(r.permutation_p < 0.01);
      CHECK(r.ks_p < 0.01);
    }
  }
}

TEST_CASE("single change point: the L1 cost resists outliers", "[analysis][changepoint]") {
  auto x = synthetic::steps({0, 45, 90}, {30, 36}, 1.0, 9);
  // Large outliers on the low side pull the squared-error optimum; the median cost ignores them.
  for (size_t i : {3, 8, 15, 22, 30}) x[i] = 400;
  SingleChangeOptions o;
  o.cost = Cost::AbsoluteDeviation;
  const SingleChange r = single_change_point(x, o);
  INFO(r.reason);
  CHECK(r.found);
  CHECK(distance(r.index, 45) <= 1);
  CHECK(r.left_level == Approx(30).margin(1));
}

TEST_CASE("single change point: flat series are rejected", "[analysis][changepoint]") {
  for (uint64_t seed : {21, 22, 23, 24, 25, 26}) {
    const auto x = synthetic::steps({0, 80}, {50}, 2.0, seed);
    for (Cost c : kAllCosts) {
      SingleChangeOptions o;
      o.cost = c;
      const SingleChange r = single_change_point(x, o);
      INFO("seed " << seed << ": " << r.reason);
      CHECK_FALSE(r.found);
      CHECK(r.reason.find("no significant change") != std::string::npos);
    }
  }
  const SingleChange constant = single_change_point(std::vector<double>(20, 3.0));
  CHECK_FALSE(constant.found);
  CHECK(constant.reason.find("constant") != std::string::npos);
}

TEST_CASE("single change point: bad input gets a reason", "[analysis][changepoint]") {
  CHECK_FALSE(single_change_point({1, 2, 3}).found);  // shorter than two segments of 2
  CHECK(single_change_point({1, 2, 3}).reason.find("too short") != std::string::npos);
  const SingleChange nan = single_change_point({1, 2, NAN, 4, 5});
  CHECK_FALSE(nan.found);
  CHECK(nan.reason.find("NaN") != std::string::npos);
}

TEST_CASE("single change point: the thesis' example and min_shift", "[analysis][changepoint]") {
  // Paper 003, 3.3.4: (1,1,1,1,4,5,6,7) changes after the fourth value.
  const SingleChange r = single_change_point({1, 1, 1, 1, 4, 5, 6, 7});
  CHECK(r.index == 4);
  CHECK(r.p_value < 0.1);  // 8 values cannot reach 1 %; the location is still right
  // A real but small shift is refused when the caller asks for a minimum effect.
  const auto x = synthetic::steps({0, 40, 80}, {10, 10.6}, 0.05, 5);
  SingleChangeOptions o;
  CHECK(single_change_point(x, o).found);
  o.min_shift = 1.0;
  const SingleChange small = single_change_point(x, o);
  CHECK_FALSE(small.found);
  CHECK(small.reason.find("too small") != std::string::npos);
}

TEST_CASE("multiple change points: noisy staircase", "[analysis][changepoint]") {
  const std::vector<size_t> truth{40, 80, 130};
  for (uint64_t seed : {31, 32, 33}) {
    const auto x = synthetic::steps({0, 40, 80, 130, 200}, {10, 16, 12, 25}, 1.0, seed);
    for (Cost c : {Cost::SquaredError, Cost::AbsoluteDeviation}) {
      MultiChangeOptions o;
      o.cost = c;
      const MultiChange r = multiple_change_points(x, o);
      INFO("seed " << seed << ": " << r.reason);
      REQUIRE(r.changes.size() == truth.size());
      for (size_t k = 0; k < truth.size(); ++k) {
        CHECK(distance(r.changes[k].index, truth[k]) <= 1);
        CHECK(r.changes[k].confirmed);
      }
      CHECK(r.segment_begin.size() == 4);
      CHECK(r.segment_begin[0] == 0);
    }
  }
}

TEST_CASE("multiple change points: clean steps, L1 cost with outliers, variance change", "[analysis][changepoint]") {
  const auto clean = synthetic::steps({0, 10, 25, 40}, {1, 3, 2}, 0.0, 1);
  const MultiChange rc = multiple_change_points(clean);
  REQUIRE(rc.changes.size() == 2);
  CHECK(rc.changes[0].index == 10);
  CHECK(rc.changes[1].index == 25);
  CHECK(rc.changes[0].right_level == Approx(3));

  auto x = synthetic::steps({0, 60, 120}, {100, 110}, 1.0, 41);
  for (size_t i : {5, 17, 29, 70, 95}) x[i] += 300;
  MultiChangeOptions o;
  o.cost = Cost::AbsoluteDeviation;
  const MultiChange rl = multiple_change_points(x, o);
  INFO(rl.reason);
  REQUIRE(rl.changes.size() == 1);
  CHECK(distance(rl.changes[0].index, 60) <= 1);

  // Same mean, the noise grows tenfold at 100 (an L2 hit/miss mix beginning, say).
  std::vector<double> v = synthetic::steps({0, 100}, {0}, 1.0, 42);
  const auto loud = synthetic::steps({0, 100}, {0}, 10.0, 43);
  v.insert(v.end(), loud.begin(), loud.end());
  MultiChangeOptions ov;
  ov.cost = Cost::NormalMeanVar;
  ov.sigma = 1.0;
  const MultiChange rv = multiple_change_points(v, ov);
  INFO(rv.reason);
  REQUIRE(rv.changes.size() >= 1);
  CHECK(distance(rv.changes[0].index, 100) <= 3);
}

TEST_CASE("multiple change points: flat series give none", "[analysis][changepoint]") {
  for (uint64_t seed : {51, 52, 53, 54}) {
    const auto x = synthetic::steps({0, 300}, {7}, 1.5, seed);
    for (Cost c : {Cost::SquaredError, Cost::AbsoluteDeviation}) {
      MultiChangeOptions o;
      o.cost = c;
      const MultiChange r = multiple_change_points(x, o);
      INFO("seed " << seed << ": " << r.reason);
      CHECK_FALSE(r.found);
      CHECK(r.changes.empty());
    }
  }
  CHECK_FALSE(multiple_change_points(std::vector<double>(50, 1.0)).found);
}

TEST_CASE("geometric reduction on known vectors", "[analysis][reduction]") {
  const GeometricReduction g = geometric_reduction({{2, 2, 2}, {1, 0}, {3, 3}});
  CHECK(g.distance[0] == Approx(std::sqrt(3.0)));
  CHECK(g.angle_rad[0] == Approx(0).margin(1e-12));
  CHECK(g.distance[1] == Approx(1.0));
  CHECK(g.angle_rad[1] == Approx(M_PI / 4));
  const GeometricReduction rms = geometric_reduction({{3, 3, 3, 3}}, {}, true);
  CHECK(rms.distance[0] == Approx(2.0));
  const GeometricReduction ref = geometric_reduction({{3, 4}}, {3, 0});
  CHECK(ref.distance[0] == Approx(4.0));
}

TEST_CASE("reductions to one value per size", "[analysis][reduction]") {
  const std::vector<std::vector<double>> v{{30, 30, 31, 300}, {30, 300, 300, 310}};
  CHECK(reduce(v, Reduction::Mean) == std::vector<double>{97.75, 235});
  CHECK(reduce(v, Reduction::Median) == std::vector<double>{30.5, 300});
  ReduceOptions o;
  o.miss_threshold = 100;
  CHECK(reduce(v, Reduction::MissFraction, o) == std::vector<double>{0.25, 0.75});
  // Automatic threshold: the boundary above the lowest level of the pooled samples.
  CHECK(reduce(v, Reduction::MissFraction) == std::vector<double>{0.25, 0.75});
  o.trim_fraction = 0.25;
  CHECK(reduce(v, Reduction::TrimmedMean, o)[0] == Approx(30.5));
  CHECK(std::isnan(reduce({{}}, Reduction::Mean)[0]));
}

TEST_CASE("thesis pipeline: per-size latencies -> geometric distance -> size", "[analysis][changepoint]") {
  // 40 footprints; from footprint 25 on a growing share of loads miss (hit 32 cycles, miss
  // ~290), with jitter and a rare slow outlier everywhere.
  synthetic::Noise n(77);
  std::vector<std::vector<double>> per_size;
  for (size_t s = 0; s < 40; ++s) {
    std::vector<double> lat;
    for (size_t i = 0; i < 256; ++i) {
      const bool miss = s >= 25 && n.uniform() < 0.05 + 0.02 * static_cast<double>(s - 25);
      double v = miss ? 290 + 10 * n.normal() : 32 + std::round(n.uniform() * 2);
      if (n.uniform() < 0.002) v = 2000;  // interrupt-like outlier
      lat.push_back(v);
    }
    per_size.push_back(lat);
  }
  for (Reduction how : {Reduction::GeometricDistance, Reduction::MissFraction, Reduction::Mean}) {
    SingleChangeOptions o;
    o.cost = Cost::Linear;  // flat, then a ramp of misses
    const SingleChange r = single_change_point(reduce(per_size, how), o);
    INFO(r.reason);
    CHECK(r.found);
    CHECK(distance(r.index, 25) <= 1);
  }
}
