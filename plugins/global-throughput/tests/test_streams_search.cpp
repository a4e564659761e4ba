// The bandwidth search against a model of the GPU's response: rate = min(peak, Little's law of
// the bytes in flight, a per-SM issue limit), with and without noise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>

#include "streams_search.hpp"
#include "streams_windows.hpp"

using namespace global_throughput;

namespace {

struct Model {
  double peak = 3000;           // bytes per cycle of the whole GPU
  double latency = 800;         // cycles
  double sms = 100;
  double width_penalty = 1.0;   // 4-byte accesses issue 4 times as many instructions
  double noise = 0;             // relative, alternating sign
  mutable int calls = 0;
  double operator()(const StreamConfig& c) const {
    const double little = sms * double(c.bytes_in_flight_per_sm()) / latency;
    const double issue = sms * 32.0 * c.width_bytes * 2;  // two access instructions per cycle
    const double wiggle = 1 + ((calls++ % 2) ? noise : -noise);
    return std::min({peak, little, issue}) * wiggle;
  }
};

}  // namespace

TEST_CASE("streams search: the peak, found without the full grid", "[throughput]") {
  Model m;
  int points = 0;
  const auto found = search_surface(SearchSpace{}, [&](const StreamConfig& c) {
    ++points;
    return m(c);
  });
  REQUIRE(!found.empty());
  CHECK(found[best_point(found)].rate == Approx(m.peak));
  // The full grid is 5 warp counts x 4 ILPs x 3 widths x 4 block sizes.
  CHECK(points < 40);
  CHECK(points == int(found.size()));
  // The smallest within 95 %: Little's law needs peak x latency / SMs = 24000 bytes per SM.
  const StreamConfig small = found[smallest_within(found, 0.95)].config;
  CHECK(double(small.bytes_in_flight_per_sm()) >= 0.95 * m.peak * m.latency / m.sms);
  CHECK(small.bytes_in_flight_per_sm() <= found[best_point(found)].config.bytes_in_flight_per_sm());
}

TEST_CASE("streams search: a peak that needs ILP is reached, and noise of 1 % does not stop it early", "[throughput]") {
  Model m;
  m.peak = 5000;  // 50000 bytes in flight per SM: 16 warps need ILP 8
  m.latency = 1000;
  m.noise = 0.01;
  SearchSpace s;
  s.max_warps_per_sm = 16;  // few warps: only ILP reaches the peak
  const auto found = search_surface(s, [&](const StreamConfig& c) { return m(c); });
  const StreamConfig best = found[best_point(found)].config;
  CHECK(found[best_point(found)].rate == Approx(m.peak).epsilon(0.015));
  CHECK(best.ilp == 8);
  CHECK(best.warps_per_sm() <= 16);
}

TEST_CASE("streams search: configurations the footprint cannot take are never measured", "[throughput]") {
  Model m;
  SearchSpace s;
  s.allowed = [](const StreamConfig& c) { return c.bytes_in_flight_per_sm() <= 65536; };
  const auto found = search_surface(s, [&](const StreamConfig& c) { return m(c); });
  for (const StreamPoint& p : found) CHECK(p.config.bytes_in_flight_per_sm() <= 65536);
  CHECK(found[best_point(found)].config.text().find("blocks per SM") != std::string::npos);
}

TEST_CASE("streams search: the best point is the median of its windows, not one window's luck", "[throughput]") {
  // Eight points on a plateau of 100; point 3's search window read 104 (a lucky window), its
  // repeats 100 and 99. Point 5 is truly best (102 in every window).
  std::vector<StreamPoint> points(8);
  for (size_t i = 0; i < points.size(); ++i) points[i].rate = 100 - 0.1 * double(i);
  points[3].rate = 104;
  points[5].rate = 102;
  const std::vector<std::vector<double>> repeats = {{100, 99}, {102, 102}, {100, 100}};
  std::vector<size_t> remeasured, kept(points.size(), 99);
  std::vector<size_t> next(points.size(), 0);
  auto remeasure = [&](size_t i) {
    remeasured.push_back(i);
    const size_t row = i == 3 ? 0 : i == 5 ? 1 : 2;
    return repeats[row][next[i]++];
  };
  confirm_best(points, 3, 2, remeasure, [&](size_t i, size_t w) { kept[i] = w; });
  CHECK(remeasured.size() == 6);  // the three highest, twice each
  CHECK(best_point(points) == 5);
  CHECK(points[3].rate == 100);
  CHECK(points[5].rate == 102);
  CHECK(kept[3] == 1);  // the window that read 100
  CHECK(kept[2] == 99);  // not among the three highest: untouched
}

TEST_CASE("streams windows: runs of two windows keep the quickest long less the quickest short", "[throughput]") {
  // Passes alone 48000 ns; every window costs 20000 besides them. Run 1's short window was held
  // up 5000 ns at its end (its difference alone reads 10 % high), run 2's long one 4000.
  auto run = [](double long_ns, double short_ns) {
    StreamRun r;
    r.long_elapsed_ns = long_ns, r.short_elapsed_ns = short_ns;
    r.long_cycles = uint64_t(long_ns), r.short_cycles = uint64_t(short_ns);
    r.elapsed_ns = long_ns - short_ns, r.cycles = r.long_cycles - r.short_cycles;
    return r;
  };
  const StreamRun got = quickest_windows({run(68500, 25500), run(72500, 20600), run(69000, 20900)});
  CHECK(got.elapsed_ns == Approx(68500 - 20600));
  CHECK(got.cycles == 68500 - 20600);
  // A run of one window (no short one) leaves the first as it was.
  StreamRun one = run(70000, 20000);
  one.short_elapsed_ns = 0;
  CHECK(quickest_windows({run(60000, 30000), one}).elapsed_ns == Approx(30000));
}
