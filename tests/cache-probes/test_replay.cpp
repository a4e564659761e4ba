// A topology file is a simulated device: what the probes write replays, and a topology
// measured on a simulated device measures back to itself (docs/simulator.md, "Replaying a
// measured topology"). Every run here is the real memtopo executable with the real plugins.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "memtopo_run.hpp"
#include "replay_compare.hpp"
#include "replay_rules.hpp"

namespace fs = std::filesystem;
using probetest::compare_replay;
using probetest::ReplayCheck;

namespace {

void check(const ReplayCheck& r) {
  for (const std::string& n : r.not_compared) WARN("not compared: " << n);
  for (const std::string& m : r.mismatches) FAIL_CHECK(m);
  CHECK(r.mismatches.empty());
}

}  // namespace

// Every plugin runs, not only the cache plugins: a key some probe writes and the simulator
// refuses must fail here, and device-info writes the [device] table a replay needs. Both
// runs take about 15-30 s a device on one core; the first is the default run other tests read
// too (tests/shipped/measured-run).
TEST_CASE("each shipped device, measured, replays and measures back to itself", "[cache][sim][replay]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const shipped::Run measured = shipped::measured_run(name);
  INFO("the measured run's messages: " << measured.log.string());
  REQUIRE(fs::exists(measured.topology));
  const toml::table a = toml::parse_file(measured.topology.string());
  const toml::table b = probetest::run_memtopo(measured.topology, "replay-B-" + name, "");
  check(compare_replay(a, b));
}

// tests/sim/measured/ holds topologies measured by the real binary (on the simulator or on a
// GPU, README.md there); each one found replays, with the probes that measured it.
TEST_CASE("every committed measured topology replays and measures back to itself", "[cache][sim][replay]") {
  const fs::path dir = fs::path(MEMTOPO_SOURCE_DIR) / "tests/sim/measured";
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().extension() == ".toml") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  REQUIRE(!files.empty());
  const std::vector<std::string> loaded = probetest::loaded_probes();  // once: memtopo list
  for (const fs::path& f : files) {
    DYNAMIC_SECTION(f.filename().string()) {
      toml::table a = toml::parse_file(f.string());
      // An opt-in probe that A's build skipped by itself (before ABI 3.7 it was in every default
      // run): B would run it when named, so it is left out of the replay and of A.
      std::vector<std::string> opted;
      for (const std::string& p : probetest::opt_in_probes())
        if (a["probes"][p]["status"].value_or(std::string()) == "skipped") opted.push_back(p);
      probetest::drop_probes(a, opted);
      // A probe of a plugin this build lacks (a build without CUDA has no Hopper plugins): left
      // out of the replay and of A, said.
      std::vector<std::string> absent;
      if (const toml::table* probes = a["probes"].as_table())
        for (const auto& [name, entry] : *probes)
          if (std::find(loaded.begin(), loaded.end(), std::string(name.str())) == loaded.end())
            absent.push_back(std::string(name.str()));
      for (const std::string& p : absent) WARN("not in this build: " << p);
      probetest::drop_probes(a, absent);
      std::string only = probetest::probes_of(a);
      // A probe a plugin runs beside another (tests/replay.toml's also_run), where A predates it.
      for (const auto& [probe, with] : probetest::replay_rules().also_run)
        if (only.find(probe) != std::string::npos && only.find(with) == std::string::npos) only += "," + with;
      INFO("the probes that measured it, from its [probes] table: " << only);
      REQUIRE(!only.empty());
      // A GPU's topology replays its structure; the probes the plugins leave out of a GPU's
      // replay (tests/replay.toml's skip_on_gpu: kernels of every resident thread, queues the
      // simulator does not price as a GPU's, what it cannot run) are left out, with their keys.
      std::string skip;
      if (a["meta"]["backend"].value_or(std::string()) == "cuda") {
        const probetest::ReplayRules& rules = probetest::replay_rules();
        for (size_t i = 0; i < rules.skip_on_gpu.size(); ++i) {
          const std::string& p = rules.skip_on_gpu[i];
          const bool in_build = std::any_of(loaded.begin(), loaded.end(), [&](const std::string& l) {
            return p.back() == '/' ? l.rfind(p, 0) == 0 : l == p;
          });
          if (!in_build) continue;  // --skip refuses a name this build does not load
          // --skip takes a plugin by its name: "mlp/" (every probe of mlp) is "mlp".
          skip += (skip.empty() ? "" : ",") + (p.back() == '/' ? p.substr(0, p.size() - 1) : p);
          UNSCOPED_INFO("left out of the replay: " << p << ": " << rules.skip_on_gpu_why[i]);
        }
        probetest::drop_probes(a, rules.skip_on_gpu);
      }
      const toml::table b = probetest::run_memtopo(f, "replay-measured-" + f.stem().string(), only, skip);
      check(compare_replay(a, b));
    }
  }
}
