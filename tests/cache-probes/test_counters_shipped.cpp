// Every rate and cache size a default run of a shipped simulated device writes is checked
// against the simulated GPU's counts of the same events (docs/measurement.md, "Counters"): the
// model counts what each level served, as CUPTI's counters do on a GPU.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "memtopo_run.hpp"

TEST_CASE("a shipped device's default run verifies its rates and its L1 and L2 sizes by the model's counts",
          "[cache][sim][counters]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const shipped::Run run = shipped::measured_run(name);
  INFO("the measured run's messages: " << run.log.string());
  REQUIRE(std::filesystem::exists(run.topology));
  const toml::table t = toml::parse_file(run.topology.string());
  auto verified = [&](const std::string& element, const std::string& key) {
    INFO(element << "." << key);
    REQUIRE(t[element][key]);
    const auto p = t["provenance"][element][key];
    CHECK(p["verified"].value_or(std::string("(absent)")) == "counters");
    CHECK(p["counted_bytes"].value_or(0.0) > 0);
  };
  for (const char* s : {"dram_read", "dram_write", "dram_copy", "dram_update", "l2_read", "l2_write", "l1_read",
                        "l2_shared_read"})
    verified("throughput", std::string(s) + "_bytes_per_second");
  verified("throughput", "l2_read_bytes_per_cycle");
  verified("l1d", "size_bytes");
  verified("l2", "size_bytes");
  // A size's counted bytes are what the counted hits say the cache holds: within 5 % of it.
  for (const char* e : {"l1d", "l2"}) {
    INFO(e);
    const double size = double(t[e]["size_bytes"].value_or(int64_t{0}));
    CHECK(t["provenance"][e]["size_bytes"]["counted_bytes"].value_or(0.0) == Approx(size).epsilon(0.05));
  }
}

// The quality bar of the stream probes on the shipped devices, read from their default runs: the
// peak rates of [sim.memory] within 5 % (the model gives them once enough is in flight), a copy
// at the harmonic mean of read and write, the DRAM read's fraction of the theoretical peak.
// (plugins/global-throughput/tests round-trips the probes themselves on one device.)
TEST_CASE("a shipped device's default run streams at the peak rates of its description", "[throughput][sim]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const toml::table got = shipped::measured_topology(name);
  const toml::table ref = toml::parse_file(std::string(MEMTOPO_SOURCE_DIR) + "/examples/devices/" + name + ".toml");
  for (const char* p : {"global-throughput/streams", "global-throughput/l1-streams"}) {
    INFO(p);
    CHECK(got["probes"][p]["status"].value<std::string>() == "ok");
  }
  probetest::check_peak_rates(ref, got);
}
