#include "memtopo_run.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <vector>

namespace fs = std::filesystem;

namespace probetest {

fs::path device_file(const std::string& name) { return fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices" / name; }

fs::path test_device_file(const std::string& name) {
  // Each plugin folder keeps the devices its tests need (plugins/<name>/tests/devices/).
  std::vector<fs::path> plugins;
  for (const auto& d : fs::directory_iterator(fs::path(MEMTOPO_SOURCE_DIR) / "plugins")) plugins.push_back(d.path());
  std::sort(plugins.begin(), plugins.end());
  for (const fs::path& p : plugins)
    if (fs::exists(p / "tests/devices" / name)) return p / "tests/devices" / name;
  FAIL("no plugins/*/tests/devices/" << name);
  return {};
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(MEMTOPO_BINARY_DIR) / "tests" / "cache-probes-scratch";
  fs::create_directories(dir);
  return dir / name;
}

toml::table shared_run(const fs::path& device, const std::string& tag, const std::string& only) {
  const fs::path dir = scratch(tag);
  const std::string cmd = std::string(MEMTOPO_SOURCE_DIR) + "/tests/shipped/measured-run " + MEMTOPO_BINARY_DIR +
                          "/bin/memtopo " + device.string() + " " + dir.string() + " --only " + only;
  const int rc = std::system(cmd.c_str());
  INFO("command: " << cmd << " (exit status " << rc << ")");
  REQUIRE(fs::exists(dir / "topology.toml"));
  return toml::parse_file((dir / "topology.toml").string());
}

toml::table run_memtopo(const fs::path& device, const std::string& tag, const std::string& only, const std::string& skip,
                        const std::string& extra) {
  const fs::path out = scratch(tag + ".toml");
  fs::remove(out);
  const std::string cmd = std::string(MEMTOPO_BINARY_DIR) + "/bin/memtopo run -q --device sim:" + device.string() +
                          (only.empty() ? std::string() : " --only " + only) +
                          (skip.empty() ? std::string() : " --skip " + skip) + (extra.empty() ? "" : " " + extra) +
                          " -o " + out.string() + " 2>" +
                          scratch(tag + ".log").string();
  const int rc = std::system(cmd.c_str());
  INFO("command: " << cmd);
  REQUIRE(fs::exists(out));
  INFO("exit status " << rc);
  return toml::parse_file(out.string());
}

namespace {

// The name of each probe `memtopo list` shows whose line holds `marker` ("" for every one).
std::vector<std::string> listed_probes(const std::string& marker) {
  const fs::path out = scratch("list.txt");
  const std::string cmd = std::string(MEMTOPO_BINARY_DIR) + "/bin/memtopo list > " + out.string() + " 2>&1";
  REQUIRE(std::system(cmd.c_str()) == 0);
  std::ifstream in(out);
  std::vector<std::string> names;
  for (std::string line; std::getline(in, line);)
    if (!line.empty() && line[0] != ' ' && line.find('/') != std::string::npos && line.find(marker) != std::string::npos)
      names.push_back(line.substr(0, line.find(' ')));
  return names;
}

}  // namespace

std::vector<std::string> opt_in_probes() { return listed_probes("  [opt-in]  "); }
std::vector<std::string> loaded_probes() { return listed_probes(""); }

void add_noise(toml::table& t, int64_t seed) {
  toml::table& sim = *t["sim"].as_table();
  sim.insert_or_assign("noise_cycles", 2);
  sim.insert_or_assign("noise_distribution", "uniform");
  sim.insert_or_assign("outlier_probability", 0.001);
  sim.insert_or_assign("outlier_cycles", 2000);
  sim.insert_or_assign("seed", seed);
}

void check_peak_rates(const toml::table& ref, const toml::table& got) {
  for (const char* k : {"l1_read_bytes_per_cycle_per_sm", "l2_read_bytes_per_cycle", "l2_write_bytes_per_cycle",
                        "dram_read_bytes_per_second", "dram_write_bytes_per_second"}) {
    INFO("throughput." << k);
    const auto want = ref["sim"]["memory"][k].value<double>();
    const auto have = got["throughput"][k].value<double>();
    REQUIRE(want);
    REQUIRE(have);
    CHECK(*have == Approx(*want).epsilon(0.05));
  }
  const double r = ref["sim"]["memory"]["dram_read_bytes_per_second"].value_or(0.0);
  const double w = ref["sim"]["memory"]["dram_write_bytes_per_second"].value_or(0.0);
  CHECK(got["throughput"]["dram_copy_bytes_per_second"].value_or(0.0) == Approx(2 / (1 / r + 1 / w)).epsilon(0.05));
  CHECK(got["throughput"]["dram_read_min95_config"].value<std::string>());
  const double theoretical = got["throughput"]["dram_theoretical_bytes_per_second"].value_or(0.0);
  CHECK(got["throughput"]["dram_read_fraction_of_theoretical"].value_or(0.0) == Approx(r / theoretical).epsilon(0.05));
}

}  // namespace probetest
