// The framework's stopping criterion: stops on low noise, at the most samples, or at the time
// budget, never before the least.
#include <catch2/catch.hpp>

#include <cmath>

#include "memtopo/analysis/stopping.hpp"

using namespace memtopo::analysis;

TEST_CASE("stopping: steady samples stop at the least count, converged", "[analysis][stopping]") {
  StopRule rule;
  rule.min_samples = 5;
  int calls = 0;
  const StopResult r = repeat_until_stable([&] { ++calls; return 100.0 + (calls % 2) * 0.01; }, rule, [] { return 0.0; });
  CHECK(r.converged);
  CHECK(r.samples.size() == 5);
  CHECK(r.median == Approx(100.0).margin(0.01));
  CHECK(r.why.find("after 5 samples") != std::string::npos);
}

TEST_CASE("stopping: noisy samples run to the most, not converged", "[analysis][stopping]") {
  StopRule rule;
  rule.min_samples = 3;
  rule.max_samples = 20;
  rule.max_relative_noise = 1e-6;
  int calls = 0;
  const StopResult r = repeat_until_stable([&] { return 100.0 + 10.0 * ((++calls * 7) % 5); }, rule, [] { return 0.0; });
  CHECK_FALSE(r.converged);
  CHECK(r.samples.size() == 20);
  CHECK(r.why.find("20 samples (the most)") != std::string::npos);
  CHECK(r.relative_noise > 0.01);
}

TEST_CASE("stopping: the time budget ends a noisy measurement after the least samples", "[analysis][stopping]") {
  StopRule rule;
  rule.min_samples = 4;
  rule.max_relative_noise = 1e-9;
  rule.max_seconds = 0.5;
  double t = 0;
  int calls = 0;
  const StopResult r = repeat_until_stable([&] { t += 0.1; return double(++calls % 3); }, rule, [&] { return t; });
  CHECK_FALSE(r.converged);
  CHECK(r.samples.size() == 5);  // 0.5 s reached at the fifth sample
  CHECK(r.why.find("time budget") != std::string::npos);
}

TEST_CASE("stopping: relative noise shrinks with the square root of the samples", "[analysis][stopping]") {
  const std::vector<double> four{99, 101, 99, 101}, sixteen{99, 101, 99, 101, 99, 101, 99, 101,
                                                            99, 101, 99, 101, 99, 101, 99, 101};
  CHECK(relative_noise(sixteen) == Approx(relative_noise(four) / 2));
  CHECK(std::isnan(relative_noise({5.0})));
  CHECK(std::isnan(relative_noise({0.0, 0.0})));
}
