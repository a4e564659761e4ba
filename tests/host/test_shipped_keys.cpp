// Every key a probe declares is in a shipped device's default run, or recorded absent by its
// probe with the reason (docs/format.md, "Keys without a value"): none is left out unsaid.
#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "helpers.hpp"
#include "run/running/result_check.hpp"

TEST_CASE("keys: a shipped device's default run leaves no declared key out without its reason", "[host][keys]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const toml::table topology = shipped::measured_topology(name);
  const toml::table* probes = topology["probes"].as_table();
  REQUIRE(probes);
  size_t absent = 0;
  for (const auto& [probe, entry] : *probes) {
    const toml::table* keys = entry.as_table() ? (*entry.as_table())["absent"].as_table() : nullptr;
    if (!keys) continue;
    for (const auto& [key, why] : *keys) {
      const std::string reason = why.value_or(std::string());
      INFO(probe.str() << ": " << key.str() << ": " << reason);
      CHECK(reason != memtopo::host::kNoReasonGiven);
      // Absent is never also written.
      const std::string k(key.str());
      const auto dot = k.find('.');
      CHECK_FALSE(topology[k.substr(0, dot)][k.substr(dot + 1)]);
      ++absent;
    }
  }
  CHECK(absent > 0);  // the simulated GPU has no UUID, to name one
}
