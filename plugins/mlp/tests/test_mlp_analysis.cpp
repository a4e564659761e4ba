// Little's law over latency against chains: the limit where throughput levels off, a bound
// where it does not, and the shapes of the sweeps.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
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

TEST_CASE("mlp: a lower bound takes the fastest point's latency, not the pooled one", "[mlp]") {
  // Near and far lines: the points within 10 % of the fastest pool to a latency above the
  // fastest, and a bound from it could claim more than the limit (random device 102: at least
  // 262 for 256).
  auto c = model(300, 4096, 256);
  c[1].latency = 320;  // a point whose chains drew more far lines
  c[2].latency = 325;
  const auto f = mlp::loads_in_flight(c);
  CHECK_FALSE(f.saturated);
  CHECK(f.latency > 300);
  CHECK(f.least_loads == Approx(f.per_cycle * 300));
  CHECK(f.least_loads < f.loads);
  CHECK_THAT(f.note, Catch::Contains("fastest point's 300 cycles"));
}

TEST_CASE("mlp: a limit reached only at the last point is not yet a plateau", "[mlp]") {
  // 32 chains against a limit of 24: throughput still rose from 16 to 32 chains.
  const auto f = mlp::loads_in_flight(model(300, 24, 32));
  CHECK_FALSE(f.saturated);
  CHECK(f.loads == Approx(24));
}

TEST_CASE("mlp: a throughput that falls past its most is a limit reached", "[mlp]") {
  // An H100 whose chains all load until the last one's timed steps end (H100 GPU-c33520c6):
  // 1406 loads per 1000 cycles at 512 chains, 1123 at 1024, at 364 and 912 cycles a load.
  auto c = model(276, 388, 512);
  mlp::Point past;
  past.chains = 1024;
  past.latency = 912;
  past.per_cycle = 1024 / 912.0;
  past.loads = 65536;
  c.push_back(past);
  const auto f = mlp::loads_in_flight(c);
  CHECK(f.saturated);
  CHECK(f.loads == Approx(388).epsilon(0.02));
  CHECK_THAT(f.note, Catch::Contains("fell past its most"));
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

TEST_CASE("mlp: a lane an interruption kept away counts as away, the time between steps does not", "[mlp]") {
  // 64 steps of 300 cycles and 40 cycles between steps each: every lane present.
  std::vector<mlp::LaneTally> lanes(4, mlp::LaneTally{64 * 300, 0, 64 * 340});
  CHECK(mlp::present_chains(lanes, 64) == Approx(4.0));
  // One lane's step took 2300 cycles (above the ceiling): 2000 of its 21760 cycles away.
  lanes[3] = mlp::LaneTally{63 * 300, 1, 63 * 300 + 2300 + 64 * 40};
  CHECK(mlp::present_chains(lanes, 64) == Approx(3.0 + (1 - 2000.0 / lanes[3].window_cycles)));
  // Every lane interrupted, once or twice: the time between steps from the line over them.
  std::vector<mlp::LaneTally> all(4, lanes[3]);
  all[0] = all[1] = mlp::LaneTally{62 * 300, 2, 62 * 300 + 2 * 2300 + 64 * 40};
  const double away_once = 2000.0 / lanes[3].window_cycles, away_twice = 4000.0 / all[0].window_cycles;
  CHECK(mlp::present_chains(all, 64) == Approx(2 * (1 - away_once) + 2 * (1 - away_twice)));
  // Each interrupted as often: what lies between steps is not known, every lane counts as present.
  const std::vector<mlp::LaneTally> same(2, lanes[3]);
  CHECK(mlp::present_chains(same, 64) == Approx(2.0));
  CHECK(mlp::present_chains({}, 64) == 0);
}

TEST_CASE("mlp: lanes that drew one line make one request of the queues", "[mlp]") {
  CHECK(mlp::requests_per_load(1, 512) == 1);
  // 32 lanes over 512 lines: 31.05 distinct lines on average; over an H100's 100 000, all but 0.02 %.
  CHECK(mlp::requests_per_load(32, 512) == Approx(512 * (1 - std::pow(511.0 / 512, 32)) / 32));
  CHECK(mlp::requests_per_load(32, 512) == Approx(0.970).margin(0.001));
  CHECK(mlp::requests_per_load(32, 1e5) > 0.9998);
  CHECK(mlp::requests_per_load(2, 1) == Approx(0.5));
  // The plateau's loads per cycle stay loads; the loads in flight count requests.
  std::vector<mlp::Point> curve;
  for (double c : {1.0, 2.0, 4.0, 8.0}) curve.push_back({c, 100, c / 100, 1000});
  curve.push_back({16, 200, 0.08, 1000});
  curve.push_back({32, 400, 0.08, 1000});
  for (mlp::Point& p : curve) p.requests_per_load = 0.9;
  const mlp::InFlight f = mlp::loads_in_flight(curve);
  CHECK(f.per_cycle == Approx(0.08));
  CHECK(f.loads == Approx(0.9 * 0.08 * 100));
}
