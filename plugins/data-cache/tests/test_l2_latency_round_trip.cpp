// The L2's hit latencies under interruptions, on a random device whose small L2 leaves the hit
// footprints few samples: the timing's cost comes from one line re-read, without them.
#include <catch2/catch.hpp>

#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

TEST_CASE("the L2's near and far hit latencies under interruptions of 5000 cycles over a small L2",
          "[cache][sim][noise]") {
  // Random device 74: 1024 fine-grained samples of the hit footprints, four interruptions of
  // 5000 cycles among them on average. The mean of those less a pointer chase's mean read both
  // latencies 9 cycles high (191.2 and 258.2 for 182 and 249).
  const auto device = probetest::test_device_file("random-74.toml");
  const toml::table got = probetest::run_memtopo(device, "l2-latency-random-74", "l2.latency_cycles");
  const toml::table ref = toml::parse_file(device.string());
  for (const char* k : {"latency_cycles", "far_latency_cycles"}) {
    INFO("l2." << k);
    const auto want = ref["l2"][k].value<double>();
    const auto have = got["l2"][k].value<double>();
    REQUIRE(want);
    REQUIRE(have);
    CHECK(*have == Approx(*want).margin(1.0));
  }
}
