// No probe of a shipped simulated device's default run reaches its time limit: where one does,
// this test names it (docs/testing.md, "Time limits"). On the simulated GPU a probe's declared
// budget is a limit of the worker's CPU time (docs/host.md, "Isolation"), which a busy machine
// does not use up; a probe that reaches it needs a smaller simulated workload or a budget.
#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "helpers.hpp"

TEST_CASE("time limits: no probe of a shipped device's default run reaches its time limit", "[host][quiet]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const toml::table topology = shipped::measured_topology(name);
  const toml::table* probes = topology["probes"].as_table();
  REQUIRE(probes);
  size_t checked = 0;
  for (const auto& [probe, entry] : *probes) {
    const std::string reason = entry.at_path("reason").value_or(std::string());
    INFO(probe.str() << ": " << reason);
    CHECK(reason.find("exceeded its time limit") == std::string::npos);
    ++checked;
  }
  CHECK(checked > 40);
}
