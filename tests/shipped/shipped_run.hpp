// The default run of a shipped simulated device (examples/devices/<name>), measured once per
// build by tests/shipped/measured-run and read by every test that only reads such a run.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <toml++/toml.h>

namespace shipped {

struct Run {
  std::filesystem::path topology, raw, log;
  int status = -1;  // memtopo's exit status: 0, or 1 where a probe failed or was not determinable
};

// `name`: "hopper-like", ... Blocks while another test measures the same device.
inline Run measured_run(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(MEMTOPO_BINARY_DIR) / "tests" / "shipped" / name;
  const std::string cmd = std::string(MEMTOPO_SOURCE_DIR) + "/tests/shipped/measured-run " + MEMTOPO_BINARY_DIR +
                          "/bin/memtopo " + MEMTOPO_SOURCE_DIR + "/examples/devices/" + name + ".toml " + dir.string();
  const int rc = std::system(cmd.c_str());
  Run r{dir / "topology.toml", dir / "raw", dir / "log", -1};
  if (rc != -1 && WIFEXITED(rc)) r.status = WEXITSTATUS(rc);
  return r;
}

// The topology `measured_run(name)` wrote, parsed (REQUIREs that it wrote one).
inline toml::table measured_topology(const std::string& name) {
  const Run run = measured_run(name);
  REQUIRE(std::filesystem::exists(run.topology));
  return toml::parse_file(run.topology.string());
}

}  // namespace shipped
