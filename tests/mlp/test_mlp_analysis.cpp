// Little's law over latency against chains: the limit where throughput levels off, a bound
// where it does not, and the shapes of the sweeps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "mlp/mlp_analysis.hpp"

namespace {

// Chains 1, 2, 4, ... `most`, each load `latency` cycles until `limit` loads are in flight,
// then queued: latency x chains / limit.
std::vector<mlp::Point> model(double latency, double limit, double most) {
  std::vector<mlp::Point> c;
  for (double n = 1; n <= most; n *= 2) {
    mlp::Point p;
    p.chains = n;
    p.latency = latency * std::max(1.0, n / limit);
    p.per_cycle = n / p.latency;
    p.loads = std::max(8192.0, 64 * n);
    c.push_back(p);
  }
  return c;
}

}  // namespace

TEST_CASE("mlp: Little's law gives the loads in flight where throughput levels off", "[mlp]") {
  const auto f = mlp::loads_in_flight(model(400, 96, 1024));
  CHECK(f.saturated);
  CHECK(f.latency == Approx(400));
  CHECK(f.loads == Approx(96));
  CHECK(f.per_cycle == Approx(96.0 / 400));
}

TEST_CASE("mlp: a curve that still climbs gives a lower bound", "[mlp]") {
  const auto f = mlp::loads_in_flight(model(400, 4096, 1024));
  CHECK_FALSE(f.saturated);
  CHECK(f.loads == Approx(1024));
  CHECK_THAT(f.note, Catch::Contains("limit lies beyond"));
}

TEST_CASE("mlp: a limit reached only at the last point is not yet a plateau", "[mlp]") {
  // 32 chains against a limit of 24: throughput still rose from 16 to 32 chains.
  const auto f = mlp::loads_in_flight(model(300, 24, 32));
  CHECK_FALSE(f.saturated);
  CHECK(f.loads == Approx(24));
}

TEST_CASE("mlp: the unqueued latency pools the fast points, the throughput the plateau", "[mlp]") {
  auto c = model(400, 64, 1024);
  c[0].latency = 420;  // one chain of few lines came out slow
  c[0].per_cycle = 1 / 420.0;
  c.back().per_cycle *= 1.02;  // the last point fluctuated up
  const auto f = mlp::loads_in_flight(c);
  CHECK(f.saturated);
  // The first point times the highest throughput would give 68.5.
  CHECK(f.loads == Approx(64).epsilon(0.025));
  CHECK(f.latency == Approx(400).epsilon(0.01));
}

TEST_CASE("mlp: the shapes grow by warps to 32, then by lanes, then by chains per lane", "[mlp]") {
  const auto s = mlp::sm_shapes(32, 1024);
  REQUIRE(s.size() == 11);
  CHECK(s[5].warps == 32);
  CHECK(s[5].lanes == 1);
  CHECK(s.back().warps == 32);
  CHECK(s.back().lanes == 32);
  const auto w = mlp::warp_shapes();
  REQUIRE(w.size() == 6);
  CHECK(std::all_of(w.begin(), w.end(), [](const mlp::Shape& x) { return x.warps == 1; }));
  CHECK(w.back().lanes == 32);
  CHECK(mlp::sm_shapes(8, 64).back().lanes == 8);
  // past 32 x 32, chains per lane: 2048, 4096, 8192
  const auto deep = mlp::sm_shapes(32, 8192, 8);
  REQUIRE(deep.size() == 14);
  CHECK(deep.back().lane_chains == 8);
  CHECK(deep.back().chains() == 8192);
  CHECK(mlp::sm_shapes(32, 8192, 1).size() == 11);  // a backend without chains per lane stops at 1024
  const auto t = mlp::thread_shapes(8);
  REQUIRE(t.size() == 4);
  CHECK(t.back().lanes == 1);
  CHECK(t.back().chains() == 8);
}
