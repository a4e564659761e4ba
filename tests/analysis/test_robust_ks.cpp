#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "memtopo/analysis.hpp"
#include "synthetic.hpp"

using namespace memtopo::analysis;

TEST_CASE("robust statistics on known values", "[analysis][robust]") {
  const std::vector<double> odd{5, 1, 4, 2, 3};
  const std::vector<double> even{4, 1, 3, 2};
  CHECK(median(odd) == 3);
  CHECK(median(even) == 2.5);
  CHECK(mean(odd) == 3);
  CHECK(percentile(odd, 0) == 1);
  CHECK(percentile(odd, 100) == 5);
  CHECK(percentile(odd, 25) == 2);
  CHECK(percentile(even, 50) == Approx(2.5));
  CHECK(percentile({10, 20}, 30) == Approx(13));
  // MAD of {1,2,3,4,100}: median 3, deviations {2,1,0,1,97} -> 1.
  CHECK(mad({1, 2, 3, 4, 100}) == 1);
  CHECK(mad({1, 2, 3, 4, 100}, true) == Approx(1.4826).epsilon(1e-4));
  // Trimmed mean drops one value at each end of 10 at 10 %: the outlier goes.
  CHECK(trimmed_mean({1, 2, 3, 4, 5, 6, 7, 8, 9, 1000}, 0.1) == Approx(5.5));
  CHECK(geometric_mean({1, 4, 16}) == Approx(4));
  CHECK(to_doubles({1u, 7u}) == std::vector<double>{1, 7});
}

TEST_CASE("robust statistics answer NaN instead of throwing", "[analysis][robust]") {
  CHECK(std::isnan(median({})));
  CHECK(std::isnan(mean({})));
  CHECK(std::isnan(percentile({1, 2}, 101)));
  CHECK(std::isnan(percentile({}, 50)));
  CHECK(std::isnan(mad({})));
  CHECK(std::isnan(trimmed_mean({1, 2}, 0.5)));
  CHECK(std::isnan(geometric_mean({1, 0, 2})));
  CHECK(std::isnan(difference_sigma({1})));
}

TEST_CASE("difference_sigma estimates the noise and ignores a step", "[analysis][robust]") {
  const auto x = synthetic::steps({0, 500, 1000}, {0, 50}, 2.0, 7);
  CHECK(difference_sigma(x) == Approx(2.0).epsilon(0.15));
}

TEST_CASE("the noise a chase carries: the samples' excess where the chases spread with their length",
          "[analysis][robust]") {
  // Samples of one hit: 30 cycles plus geometric-like noise 0, 0, 1, 2, 4, 8 (mean 2.5), and
  // an interruption above the ceiling, which is left out.
  std::vector<double> samples;
  for (int k = 0; k < 100; ++k)
    for (double n : {0.0, 0.0, 1.0, 2.0, 4.0, 8.0}) samples.push_back(30 + n);
  samples.push_back(5000);
  CHECK(noise_excess(samples, 1000) == Approx(2.5));
  CHECK(noise_excess(samples, 35) == Approx(1.4));  // the 8s above the ceiling too
  CHECK(std::isnan(noise_excess({5000}, 1000)));
  // An interruption below the ceiling (600 cycles for a 30-cycle hit) is no noise of the hits.
  std::vector<double> interrupted = samples;
  interrupted.push_back(600);
  CHECK(noise_excess(interrupted, 1000) == Approx(2.5));
  // Chases whose windows spread more the longer they are carry that noise: it is taken off.
  const std::vector<double> short_w{100, 104, 96, 102, 98, 101, 99, 103, 97, 100};
  const std::vector<double> long_w{300, 330, 270, 315, 285, 308, 292, 322, 278, 300};
  CHECK(chase_noise_excess(samples, 1000, short_w, long_w, 256) == Approx(2.5));
  // Windows that spread no more when longer (a GPU's clock reads spread its single loads):
  // nothing is taken off.
  CHECK(chase_noise_excess(samples, 1000, short_w, short_w, 256) == 0.0);
  // Samples that do not spread: nothing either.
  CHECK(chase_noise_excess(std::vector<double>(64, 30.0), 1000, short_w, long_w, 256) == 0.0);
}

// Independent reference: ECDFs evaluated by brute force at every sample value, and the
// Kolmogorov series Q(l) = 2 sum (-1)^(k-1) exp(-2 k^2 l^2).
static double reference_d(const std::vector<double>& a, const std::vector<double>& b) {
  auto ecdf = [](const std::vector<double>& s, double x) {
    return static_cast<double>(std::count_if(s.begin(), s.end(), [&](double v) { return v <= x; })) /
           static_cast<double>(s.size());
  };
  double d = 0;
  for (const auto* s : {&a, &b})
    for (double x : *s) d = std::max(d, std::fabs(ecdf(a, x) - ecdf(b, x)));
  return d;
}
static double reference_q(double lambda) {
  double q = 0;
  for (int k = 1; k < 100; ++k) q += 2 * ((k % 2) ? 1.0 : -1.0) * std::exp(-2.0 * k * k * lambda * lambda);
  return q;
}

TEST_CASE("KS two-sample statistic and p-value match an independent reference", "[analysis][ks]") {
  const std::vector<double> a{1.1, 2.3, 2.3, 3.7, 4.0, 5.2, 6.1};
  const std::vector<double> b{3.0, 4.0, 4.4, 6.6, 7.1, 8.0, 8.2, 9.9};
  const KsResult r = ks_two_sample(a, b);
  REQUIRE(r.valid);
  const double d = reference_d(a, b);
  CHECK(r.statistic == Approx(d));
  CHECK(r.effective_n == Approx(7.0 * 8 / 15));
  CHECK(r.p_value == Approx(reference_q(std::sqrt(7.0 * 8 / 15) * d)).epsilon(1e-6));
  CHECK(r.confidence == Approx(1 - r.p_value));
  // Known value of the Kolmogorov distribution: P(K > 1.36) ~ 0.0494 (the 5 % critical value).
  CHECK(kolmogorov_survival(1.36) == Approx(0.0494).margin(5e-4));
  CHECK(kolmogorov_survival(1.0) == Approx(reference_q(1.0)).epsilon(1e-9));
}

TEST_CASE("KS handles ties exactly (integer cycle counts)", "[analysis][ks]") {
  const std::vector<double> a{30, 30, 30, 31, 31, 33};
  const std::vector<double> b{30, 31, 31, 31, 33, 33};
  CHECK(ks_two_sample(a, b).statistic == Approx(reference_d(a, b)));
  CHECK(ks_two_sample(a, a).statistic == 0);
  CHECK(ks_two_sample(a, a).p_value == 1);
}

TEST_CASE("KS p-values: same distribution large, shifted tiny", "[analysis][ks]") {
  synthetic::Noise n(11);
  std::vector<double> a, b, c;
  for (int i = 0; i < 400; ++i) {
    a.push_back(n.normal());
    b.push_back(n.normal());
    c.push_back(n.normal() + 1.0);
  }
  CHECK(ks_two_sample(a, b).p_value > 0.05);
  CHECK(ks_two_sample(a, c).p_value < 1e-10);
  CHECK(ks_two_sample(a, c).confidence > 0.999);
}

TEST_CASE("KS on an empty sample is invalid, not an exception", "[analysis][ks]") {
  const KsResult r = ks_two_sample({}, {1, 2});
  CHECK_FALSE(r.valid);
  CHECK(r.p_value == 1);
  CHECK(r.reason.find("empty") != std::string::npos);
}

TEST_CASE("confirm_change: real step confirmed, flat series and edges rejected", "[analysis][ks]") {
  const auto step = synthetic::steps({0, 30, 60}, {10, 14}, 1.0, 3);
  CHECK(confirm_change(step, 30).confirmed);
  const auto flat = synthetic::steps({0, 60}, {10}, 1.0, 4);
  CHECK_FALSE(confirm_change(flat, 30).confirmed);
  const ChangeConfirmation edge = confirm_change(step, 1);
  CHECK_FALSE(edge.confirmed);
  CHECK(edge.reason.find("fewer than") != std::string::npos);
  CHECK_FALSE(confirm_change(step, 61).confirmed);
}
