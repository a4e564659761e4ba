// A healthy run says nothing alarming (docs/host.md, "Running"): `memtopo run -q` of every
// shipped simulated device and with every shipped config prints no warning (what a device or
// a preset leaves out by design is in the summary and the file), and progress into a file is
// one line per probe, in order.
#include <regex>
#include <set>
#include <sstream>

#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::has;
using test::quoted;
using test::run_memtopo;

TEST_CASE("quiet runs: a shipped device's default run with -q prints no warning", "[host][quiet]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const shipped::Run run = shipped::measured_run(name);
  REQUIRE(fs::exists(run.log));
  // A probe past its time limit is the finding of its own test (test_shipped_time_limits.cpp),
  // not of this one: its error line is left out here.
  std::string log;
  std::istringstream lines(test::read_file(run.log));
  for (std::string line; std::getline(lines, line);)
    if (!has(line, "exceeded its time limit")) log += line + "\n";
  INFO(log);
  CHECK_FALSE(has(log, "warning"));
  CHECK_FALSE(has(log, "error"));
}

// A healthy simulated device looks healthy: its [device] memory clock and bus state a
// theoretical rate its modelled DRAM streams fill as a GPU's do, not 6 % of it (an H100's
// bus beside a device of 8 SMs).
TEST_CASE("quiet runs: a shipped device's DRAM streams fill most of its theoretical rate", "[host][quiet]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const shipped::Run run = shipped::measured_run(name);
  REQUIRE(fs::exists(run.topology));
  const toml::table t = toml::parse_file(run.topology.string());
  for (const char* key : {"dram_read_fraction_of_theoretical", "dram_write_fraction_of_theoretical"}) {
    INFO(key);
    const double fraction = t["throughput"][key].value_or(0.0);
    CHECK(fraction > 0.6);
    CHECK(fraction <= 1.0);
  }
}

TEST_CASE("quiet runs: every shipped config runs on the simulated GPU with -q and no warning", "[host][quiet]") {
  test::TempDir dir("quiet-configs");
  for (const auto& entry : fs::directory_iterator(fs::path(MEMTOPO_SOURCE_DIR) / "configs")) {
    if (entry.path().extension() != ".toml") continue;
    INFO(entry.path());
    const auto r = run_memtopo("run -q --config " + quoted(entry.path()) + " --device sim -o " +
                               quoted(dir / (entry.path().stem().string() + ".toml")));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(has(r.output, "warning"));
  }
}

TEST_CASE("quiet runs: progress into a pipe is one line per probe, numbered as probes end", "[host][quiet]") {
  test::TempDir dir("quiet-progress");
  const auto r = run_memtopo("run --device sim --jobs 2 --only device-info,data-cache/l1d-size,constant -o " +
                             quoted(dir / "t.toml"));
  INFO(r.output);
  REQUIRE(r.exit_code <= 1);
  const std::regex line(R"(\[(\d+)/(\d+)\] ([a-z0-9_-]+/[a-z0-9_-]+): ([a-z_]+) \()");
  int last = 0, lines = 0;
  std::set<std::string> probes;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it) {
    CHECK(std::stoi((*it)[1]) == last + 1);
    last = std::stoi((*it)[1]);
    probes.insert((*it)[3]);
    ++lines;
  }
  CHECK(lines > 3);
  CHECK(probes.size() == size_t(lines));  // each probe once
  CHECK_FALSE(has(r.output, "%"));         // no stage lines
}
