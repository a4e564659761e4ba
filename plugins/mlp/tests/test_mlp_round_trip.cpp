// The quality bars of the mlp plugin on the simulated GPU, where its kernel runs against the
// description's miss queues: on every shipped device the loads one SM keeps in flight ([sim.memory])
// come back within 5 % (Little's law over the measured latency, which the TLB and the L2's two
// partitions spread), within 15 % with measurement noise on (a warp away for an interruption
// leaves its share of the queues to the others, whose loads then look faster: pascal-like's L2
// reads 9 % high built with g++ and 12 % with the sanitized clang build, which meets other
// interruptions); one warp of 32 lanes in lockstep keeps at most the smaller of the two in flight.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

void compare_mlp(const toml::table& ref, const toml::table& got, double tolerance, double dram_tolerance) {
  for (const char* level : {"l2", "dram"}) {
    const std::string k = std::string("sm_") + level + "_loads_in_flight";
    INFO("mlp." << k);
    const auto want = ref["sim"]["memory"][std::string("sm_") + level + "_requests_in_flight"].value<int64_t>();
    const auto have = got["mlp"][k].value<int64_t>();
    REQUIRE(want);
    REQUIRE(have);
    CHECK(double(*have) == Approx(double(*want)).epsilon(std::string(level) == "dram" ? dram_tolerance : tolerance));
  }
  // One warp's 32 lanes wait for all of a step's loads: under a limit of fewer than 32 the
  // last lanes' loads wait a latency more (kepler-like: 24 of 32 at once, 16 on average).
  const int64_t sm = *ref["sim"]["memory"]["sm_l2_requests_in_flight"].value<int64_t>();
  const auto warp = got["mlp"]["warp_l2_loads_in_flight"].value<int64_t>();
  REQUIRE(warp);
  CHECK(*warp <= std::min<int64_t>(sm, 32) * (1 + tolerance));
  CHECK(*warp >= std::min<int64_t>(sm, 32) / 2);
  // One thread's 8 chains stay under every shipped limit: a bound near 8 (the slowest of a
  // step's 8 lines sets the step).
  const auto thread = got["mlp"]["thread_l2_loads_in_flight"].value<int64_t>();
  REQUIRE(thread);
  CHECK(*thread >= 5);
  CHECK(*thread <= 8);
  CHECK(got["provenance"]["mlp"]["thread_l2_loads_in_flight"]["bound"].value<std::string>() == "at_least");
  CHECK(got["mlp"]["sm_dram_latency_cycles"].value_or(0.0) > got["mlp"]["sm_l2_latency_cycles"].value_or(0.0));
}

}  // namespace

TEST_CASE("mlp probe recovers the loads in flight of every shipped simulated device", "[mlp][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "mlp-" + name, "mlp");
  CHECK(got["probes"]["mlp/loads-in-flight"]["status"].value<std::string>() == "ok");
  const toml::table ref = toml::parse_file(probetest::device_file(name).string());
  // Kepler-like's first TLB level maps 32 MiB of the 96 MiB its DRAM chains spread over: one
  // chain's unqueued latency (366 cycles) carries a TLB miss on two loads of three, but a warp's
  // 256 loads of a step share pages and their misses, so that the queued loads take the DRAM
  // latency alone (345) and Little's law reads 26 for 24 (docs/mlp.md, "What it does not measure yet").
  compare_mlp(ref, got, 0.05, name == "kepler-like.toml" ? 0.10 : 0.05);
  // L2 hits level off at the limit. Past DRAM's, a device whose TLB cannot map every chain's
  // page (kepler-like) loses a little of the plateau to TLB misses: a bound there.
  CHECK(got["provenance"]["mlp"]["sm_l2_loads_in_flight"]["bound"].value<std::string>() == "exact");
}

TEST_CASE("mlp probe with measurement noise on", "[mlp][sim][noise]") {
  // The noise's jitter (0 to 2 cycles) queues with the loads; interruptions (one load in 1000
  // by 2000 cycles) are left out of the latency.
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev = probetest::write_variant(name, "mlp-noisy", [](toml::table& t) { probetest::add_noise(t, 5); });
  const toml::table got = probetest::run_memtopo(dev, "mlp-noisy-" + name, "mlp");
  compare_mlp(toml::parse_file(probetest::device_file(name).string()), got, 0.15, 0.15);
}

// Devices unlike the shipped ones (devices/ beside this file): loads queued under noise with
// rare long interruptions, and SM queues that serve the chains unevenly. A lane that an
// interruption kept away counts as away, and every chain loads, untimed, until the last one's
// timed steps end: before, the first read 146 L2 and at least 140 DRAM loads for 128, the
// second 115 (a bound) for 96 and 170 for 160.
TEST_CASE("mlp probe: noisy and uneven queues", "[mlp][sim]") {
  const std::string name = GENERATE("noisy-queues.toml", "uneven-queues.toml");
  INFO(name);
  const auto dev = probetest::test_device_file(name);
  const toml::table got = probetest::run_memtopo(dev, "mlp-" + name, "mlp");
  const toml::table ref = toml::parse_file(dev.string());
  for (const char* level : {"l2", "dram"}) {
    const std::string k = std::string("sm_") + level + "_loads_in_flight";
    INFO("mlp." << k);
    const auto want = ref["sim"]["memory"][std::string("sm_") + level + "_requests_in_flight"].value<int64_t>();
    REQUIRE(want);
    CHECK(double(got["mlp"][k].value_or<int64_t>(0)) == Approx(double(*want)).epsilon(0.03));
    CHECK(got["provenance"]["mlp"][k]["bound"].value<std::string>() == "exact");
  }
}

// A small L2 (random device 79): the random loads spread over 512 lines, and a warp's lanes that
// drew one line made one request. Little's law over the loads read 136 L2 loads in flight for
// 128; over the requests, within 5 %.
TEST_CASE("mlp probe: loads in flight of a small L2 count requests, not loads", "[mlp][sim]") {
  const auto dev = probetest::test_device_file("small-l2-random-79.toml");
  const toml::table got = probetest::run_memtopo(dev, "mlp-small-l2", "mlp");
  const toml::table ref = toml::parse_file(dev.string());
  const auto want = ref["sim"]["memory"]["sm_l2_requests_in_flight"].value<int64_t>();
  REQUIRE(want);
  CHECK(double(got["mlp"]["sm_l2_loads_in_flight"].value_or<int64_t>(0)) == Approx(double(*want)).epsilon(0.05));
  CHECK(got["provenance"]["mlp"]["sm_l2_loads_in_flight"]["bound"].value<std::string>() == "exact");
}
