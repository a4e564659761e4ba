// The quality bars of the shared-memory plugin on the simulated GPU: on every shipped device
// the banks, their width and a conflict's cost come back (exactly, and within 5 %), also with
// measurement noise on.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

void compare_shared(const toml::table& ref, const toml::table& got) {
  CHECK(got["shared"]["banks"].value<int64_t>() == ref["shared"]["banks"].value<int64_t>());
  CHECK(got["shared"]["bank_bytes"].value<int64_t>() == ref["shared"]["bank_bytes"].value<int64_t>());
  CHECK(got["shared"]["broadcast"].value<bool>() == true);
  const double conflict = ref["shared"]["conflict_cycles"].value_or(0.0);
  CHECK(std::fabs(got["shared"]["conflict_cycles"].value_or(0.0) - conflict) <= 0.05 * conflict);
  const double latency = ref["shared"]["latency_cycles"].value_or(0.0);
  CHECK(std::fabs(got["shared"]["latency_cycles"].value_or(0.0) - latency) <= 0.05 * latency);
  const toml::array* degrees = got["shared"]["latency_by_conflict_degree_cycles"].as_array();
  REQUIRE(degrees);
  REQUIRE(degrees->size() == 32);
  const double d32 = (*degrees)[31].value_or(0.0);
  CHECK(std::fabs(d32 - (latency + 31 * conflict)) <= 0.05 * (latency + 31 * conflict));
}

}  // namespace

TEST_CASE("shared-memory probe recovers the banks of every shipped simulated device", "[shared][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "shared-" + name, "shared-memory");
  CHECK(got["probes"]["shared-memory/banks"]["status"].value<std::string>() == "ok");
  compare_shared(toml::parse_file(probetest::device_file(name).string()), got);
}

TEST_CASE("shared-memory probe with measurement noise on", "[shared][sim][noise]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev =
      probetest::write_variant(name, "shared-noisy", [](toml::table& t) { probetest::add_noise(t, 9); });
  const toml::table got = probetest::run_memtopo(dev, "shared-noisy-" + name, "shared-memory");
  compare_shared(toml::parse_file(probetest::device_file(name).string()), got);
}
