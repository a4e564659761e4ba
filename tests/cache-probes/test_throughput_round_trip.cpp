// The quality bar of global-throughput/streams on the simulated GPU: on every shipped device the
// peak rates of [sim.memory] come back within 5 % (the model gives them exactly once enough is
// in flight), and the smallest configuration within 95 % of the best keeps fewer bytes in flight
// than the best one or as many.
#include <catch2/catch.hpp>

#include <fstream>
#include <iterator>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

TEST_CASE("streams probe recovers the peak rates of every shipped simulated device", "[throughput][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table ref = toml::parse_file(probetest::device_file(name).string());
  const toml::table got =
      probetest::run_memtopo(probetest::device_file(name), "streams-" + name, "global-throughput");
  CHECK(got["probes"]["global-throughput/streams"]["status"].value<std::string>() == "ok");
  CHECK(got["probes"]["global-throughput/l1-streams"]["status"].value<std::string>() == "ok");
  for (const char* k : {"l1_read_bytes_per_cycle_per_sm", "l2_read_bytes_per_cycle", "l2_write_bytes_per_cycle",
                        "dram_read_bytes_per_second", "dram_write_bytes_per_second"}) {
    INFO("throughput." << k);
    const auto want = ref["sim"]["memory"][k].value<double>();
    const auto have = got["throughput"][k].value<double>();
    REQUIRE(want);
    REQUIRE(have);
    CHECK(*have == Approx(*want).epsilon(0.05));
  }
  // A copy moves read and write bytes through one port: the harmonic mean of the two peaks.
  const double r = *ref["sim"]["memory"]["dram_read_bytes_per_second"].value<double>();
  const double w = *ref["sim"]["memory"]["dram_write_bytes_per_second"].value<double>();
  CHECK(got["throughput"]["dram_copy_bytes_per_second"].value_or(0.0) == Approx(2 / (1 / r + 1 / w)).epsilon(0.05));
  CHECK(got["throughput"]["dram_read_min95_config"].value<std::string>());
  const double theoretical = got["throughput"]["dram_theoretical_bytes_per_second"].value_or(0.0);
  CHECK(got["throughput"]["dram_read_fraction_of_theoretical"].value_or(0.0) == Approx(r / theoretical).epsilon(0.05));
}

// A description whose memory clock and bus width give a peak below the rate the simulated
// memory streams at: the rate is kept, its fraction of that peak refused with the reason.
TEST_CASE("a DRAM rate above the theoretical peak is not reported as a fraction of it", "[throughput][sim]") {
  const std::string file = probetest::write_variant("hopper-like.toml", "narrow-bus", [](toml::table& t) {
    t["device"].as_table()->insert_or_assign("memory_bus_width_bits", 32);  // 21 GB/s
  });
  const toml::table got = probetest::run_memtopo(file, "streams-narrow-bus", "global-throughput/streams");
  CHECK(got["probes"]["global-throughput/streams"]["status"].value<std::string>() == "ok");
  CHECK(got["throughput"]["dram_read_bytes_per_second"].value_or(0.0) > 1e11);
  CHECK_FALSE(got["throughput"]["dram_read_fraction_of_theoretical"]);
  CHECK_FALSE(got["throughput"]["dram_write_fraction_of_theoretical"]);
  std::ifstream log(probetest::scratch("streams-narrow-bus.log"));
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("dram_read_fraction_of_theoretical not reported") &&
                       Catch::Contains("check the device's memory clock and bus width"));
}
