// The quality bars of the mlp plugin on the simulated GPU: on every shipped device the loads
// one SM keeps in flight ([mlp]) come back exactly, also with measurement noise on; a
// warp of 32 lanes under a larger limit is a bound.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

void compare_mlp(const toml::table& ref, const toml::table& got) {
  for (const char* k : {"sm_l2_loads_in_flight", "sm_dram_loads_in_flight"}) {
    INFO("mlp." << k);
    const auto want = ref["mlp"][k].value<int64_t>();
    const auto have = got["mlp"][k].value<int64_t>();
    REQUIRE(want);
    REQUIRE(have);
    CHECK(*have == *want);
    CHECK(got["provenance"]["mlp"][k]["bound"].value<std::string>() == "exact");
  }
  // One warp's 32 lanes stay under every shipped SM limit but the smallest.
  const int64_t sm = *ref["mlp"]["sm_l2_loads_in_flight"].value<int64_t>();
  const auto warp = got["mlp"]["warp_l2_loads_in_flight"].value<int64_t>();
  REQUIRE(warp);
  CHECK(*warp == std::min<int64_t>(sm, 32));
  // One thread's 8 chains stay under every shipped limit: a bound of 8.
  CHECK(got["mlp"]["thread_l2_loads_in_flight"].value<int64_t>() == 8);
  CHECK(got["provenance"]["mlp"]["thread_l2_loads_in_flight"]["bound"].value<std::string>() == "at_least");
  CHECK(got["provenance"]["mlp"]["warp_l2_loads_in_flight"]["bound"].value<std::string>() == "at_least");
  CHECK(got["mlp"]["sm_dram_latency_cycles"].value_or(0.0) > got["mlp"]["sm_l2_latency_cycles"].value_or(0.0));
}

}  // namespace

TEST_CASE("mlp probe recovers the loads in flight of every shipped simulated device", "[mlp][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "mlp-" + name, "mlp");
  CHECK(got["probes"]["mlp/loads-in-flight"]["status"].value<std::string>() == "ok");
  compare_mlp(toml::parse_file(probetest::device_file(name).string()), got);
}

TEST_CASE("mlp probe with measurement noise on", "[mlp][sim][noise]") {
  // The noise's jitter (0 to 2 cycles) queues with the loads and Little's law holds exactly;
  // interruptions (one load in 1000 by 2000 cycles) are left out.
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev = probetest::write_variant(name, "mlp-noisy", [](toml::table& t) { probetest::add_noise(t, 5); });
  const toml::table got = probetest::run_memtopo(dev, "mlp-noisy-" + name, "mlp");
  compare_mlp(toml::parse_file(probetest::device_file(name).string()), got);
}
