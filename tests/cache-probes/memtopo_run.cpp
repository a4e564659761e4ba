#include "memtopo_run.hpp"

#include <catch2/catch.hpp>

#include <cstdlib>

namespace fs = std::filesystem;

namespace probetest {

fs::path device_file(const std::string& name) { return fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices" / name; }

fs::path test_device_file(const std::string& name) {
  return fs::path(MEMTOPO_SOURCE_DIR) / "tests/cache-probes/devices" / name;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(MEMTOPO_BINARY_DIR) / "tests" / "cache-probes-scratch";
  fs::create_directories(dir);
  return dir / name;
}

toml::table run_memtopo(const fs::path& device, const std::string& tag, const std::string& only, const std::string& skip) {
  const fs::path out = scratch(tag + ".toml");
  fs::remove(out);
  const std::string cmd = std::string(MEMTOPO_BINARY_DIR) + "/bin/memtopo run -q --device sim:" + device.string() +
                          (only.empty() ? std::string() : " --only " + only) +
                          (skip.empty() ? std::string() : " --skip " + skip) + " -o " + out.string() + " 2>" +
                          scratch(tag + ".log").string();
  const int rc = std::system(cmd.c_str());
  INFO("command: " << cmd);
  REQUIRE(fs::exists(out));
  INFO("exit status " << rc);
  return toml::parse_file(out.string());
}

void add_noise(toml::table& t, int64_t seed) {
  toml::table& sim = *t["sim"].as_table();
  sim.insert_or_assign("noise_cycles", 2);
  sim.insert_or_assign("noise_distribution", "uniform");
  sim.insert_or_assign("outlier_probability", 0.001);
  sim.insert_or_assign("outlier_cycles", 2000);
  sim.insert_or_assign("seed", seed);
}

}  // namespace probetest
