#include <catch2/catch.hpp>

#include <cmath>

#include "memtopo/analysis.hpp"
#include "synthetic.hpp"

using namespace memtopo::analysis;

namespace {
// Counts of a cache of `c` lines that loses a t^beta to other clients at t cycles per load,
// each with binomial-sized noise.
void counts(double c, double a, double beta, const std::vector<double>& t, const std::vector<double>& se,
            synthetic::Noise& n, std::vector<double>& y) {
  y.clear();
  for (size_t i = 0; i < t.size(); ++i) y.push_back(c - a * std::pow(t[i], beta) + se[i] * n.normal());
}
}  // namespace

TEST_CASE("extrapolation: counts that do not depend on the rate give their weighted mean", "[analysis][extrapolate]") {
  synthetic::Noise n(7);
  const std::vector<double> t{40, 80, 160, 330, 2700}, se{30, 40, 40, 55, 190};
  std::vector<double> y;
  counts(204800, 0, 0.5, t, se, n, y);
  const RateFit f = extrapolate_to_infinite_rate(t, y, se);
  REQUIRE(f.ok);
  CHECK_FALSE(f.rate_dependent);
  CHECK(std::fabs(f.limit - 204800) < 3 * f.standard_error);
  CHECK(f.standard_error < 25);
}

TEST_CASE("extrapolation: a loss that shrinks with the rate is extrapolated away", "[analysis][extrapolate]") {
  // Rates like the H100's L2 (docs/results/log/h100.md): a pump at about 5 cycles per load, an
  // eighth of it at 33, one stream at 600, one with a gap at 3000; about 1700 lines short at
  // one stream (beta near 0.6). A simulated loss at a constant rate is linear (beta 1).
  const std::vector<double> t{4.7, 5, 33, 600, 3000}, se{55, 100, 75, 55, 155};
  for (double beta : {0.6, 1.0}) {
    INFO("beta " << beta);
    const double a = beta == 0.6 ? 36 : 2.8;
    int inside = 0;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      synthetic::Noise n(seed);
      std::vector<double> y;
      counts(204800, a, beta, t, se, n, y);
      const RateFit f = extrapolate_to_infinite_rate(t, y, se);
      REQUIRE(f.ok);
      CHECK(f.rate_dependent);
      CHECK(f.standard_error < 160);
      inside += std::fabs(f.limit - 204800) <= 2 * f.standard_error ? 1 : 0;
    }
    CHECK(inside >= 17);  // about 95 % of the intervals hold the truth
  }
}

TEST_CASE("extrapolation: what the model adds beyond the fastest rate counts as uncertain", "[analysis][extrapolate]") {
  // Rates of timed streams on the H100 (docs/results/log/h100.md): the fastest (8 streams, 40
  // cycles per load) still lost about
  // 540 lines; the fit puts them back, but only the model's form says how many, so the
  // standard error is at least that step.
  const std::vector<double> t{40, 80, 160, 330, 2700}, se{30, 40, 40, 55, 190};
  synthetic::Noise n(3);
  std::vector<double> y;
  counts(204800, 85, 0.5, t, se, n, y);
  const RateFit f = extrapolate_to_infinite_rate(t, y, se);
  REQUIRE(f.ok);
  CHECK(f.limit > y[0]);
  CHECK(f.standard_error >= 0.8 * 85 * std::sqrt(40.0));
  CHECK(f.standard_error >= f.a * std::pow(40.0, f.beta));
  CHECK(std::fabs(f.limit - 204800) <= 2 * f.standard_error);
}

TEST_CASE("extrapolation: counts that fall towards faster rates are not extrapolated", "[analysis][extrapolate]") {
  const std::vector<double> t{40, 80, 160, 330}, y{200000, 201000, 202000, 203000}, se{30, 30, 30, 30};
  const RateFit f = extrapolate_to_infinite_rate(t, y, se);
  CHECK_FALSE(f.ok);
  CHECK(f.rate_dependent);
  CHECK(f.why.find("faster") != std::string::npos);
  const RateFit g = extrapolate_to_infinite_rate({40, 80}, {1, 2}, {0, 1});
  CHECK_FALSE(g.ok);
}
