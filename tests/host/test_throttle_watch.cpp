// The throttle check over every probe's timed launches (docs/measurement.md, "Start state and
// conditions"): what the violation counters' growth says, and how a run's file says it.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "topology/values/gpu_state.hpp"
#include "run/output/throttle_watch.hpp"

using namespace memtopo::host;

TEST_CASE("throttle watch: the limits whose counters grew, in ms", "[host][throttle]") {
  const ViolationSample before{1000000, 0, 5, 0}, after{13000000, 0, 5, 2500000};
  CHECK(throttle_between(before, after) == "power 12.0 ms, reliability 2.5 ms");
  CHECK(throttle_between(before, before).empty());
  CHECK(throttle_between(after, before).empty());  // counters that went back (a driver reload) say nothing
}

TEST_CASE("throttle watch: a simulated GPU is not watched", "[host][throttle]") {
  mt_device_info info{};
  std::snprintf(info.backend, sizeof info.backend, "sim");
  ThrottleWatch watch(info);
  watch.probe_started();
  watch.probe_finished("data-cache/l1d-size");
  CHECK(watch.entries().empty());
}

TEST_CASE("throttle watch: throttled probes are warned, with what held the clocks", "[host][throttle]") {
  nlohmann::json state = {{"throttled_probes", {"global-throughput/streams", "mlp/dram"}},
                          {"throttled_during", {"power 12.0 ms", "thermal 1.5 ms"}}};
  const auto w = gpu_state_warnings(state);
  REQUIRE(w.size() == 1);
  CHECK(w[0] == "clocks held back while 2 probes measured: global-throughput/streams (power 12.0 ms); mlp/dram "
                "(thermal 1.5 ms)");
  const auto order = gpu_state_key_order();
  CHECK(std::find(order.begin(), order.end(), "throttled_probes") != order.end());
  CHECK(std::find(order.begin(), order.end(), "throttled_during") != order.end());
}
