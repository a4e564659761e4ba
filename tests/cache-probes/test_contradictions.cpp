// The relations between keys that the shipped plugins declare (docs/format.md,
// "Contradictions"): every shipped device's default run keeps them, and validate refuses a
// copy of one that breaks any of them, naming both keys.
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>

#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "memtopo_run.hpp"

namespace fs = std::filesystem;

namespace {

struct Validation {
  int status = -1;
  std::string output;
};

Validation validate(const fs::path& file) {
  const std::string cmd = std::string(MEMTOPO_BINARY_DIR) + "/bin/memtopo validate '" + file.string() + "' 2>&1";
  Validation v;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  REQUIRE(pipe);
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) v.output.append(buf.data(), n);
  const int rc = ::pclose(pipe);
  v.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return v;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("every shipped device's default run keeps the relations its plugins declare", "[contradictions][sim]") {
  const std::string name = GENERATE("hopper-like", "kepler-like", "pascal-like");
  INFO(name);
  const shipped::Run run = shipped::measured_run(name);
  REQUIRE(fs::exists(run.topology));
  CHECK(read_text(run.log).find("contradiction") == std::string::npos);
  const Validation v = validate(run.topology);
  INFO(v.output);
  CHECK(v.status == 0);
}

TEST_CASE("validate refuses each contradiction the shipped plugins declare, naming both keys", "[contradictions][sim]") {
  const shipped::Run run = shipped::measured_run("hopper-like");
  REQUIRE(fs::exists(run.topology));
  toml::table t = toml::parse_file(run.topology.string());
  // Every key the relations name is in the hopper-like run.
  REQUIRE(t["l2"]["partitions"].value<int64_t>());
  REQUIRE(t["l2"]["partition_sm_counts"].as_array());
  REQUIRE(t["gpc"]["sm_counts"].as_array());
  REQUIRE(t["l1d"]["latency_cycles"].value<double>());
  REQUIRE(t["dram"]["latency_cycles"].value<double>());
  const fs::path file = probetest::scratch("contradiction.toml");
  std::string want;
  SECTION("l2.partitions against l2.partition_sm_counts") {
    const size_t groups = t["l2"]["partition_sm_counts"].as_array()->size();
    t["l2"].as_table()->insert_or_assign("partitions", int64_t(groups + 1));
    want = "contradiction: l2.partitions is " + std::to_string(groups + 1) + ", but l2.partition_sm_counts has " +
           std::to_string(groups) + " elements: both count the groups of SMs that share a near L2 partition "
           "(declared by cache-sharing/l2-partitions)";
  }
  SECTION("gpc.sm_counts against device.sm_count") {
    toml::array& counts = *t["gpc"]["sm_counts"].as_array();
    const int64_t sms = t["device"]["sm_count"].value_or(int64_t(0));
    counts.get(0)->as_integer()->get() -= 1;
    want = "contradiction: gpc.sm_counts adds up to " + std::to_string(sms - 1) + ", but device.sm_count is " +
           std::to_string(sms) + ": every SM is in one GPC (declared by hopper-dsmem/clusters)";
  }
  SECTION("an L1 hit slower than DRAM") {
    t["l1d"].as_table()->insert_or_assign("latency_cycles", 2000.0);
    want = "contradiction: l1d.latency_cycles (2000) is not less than dram.latency_cycles (";
  }
  std::ofstream(file) << t;
  const Validation v = validate(file);
  INFO(v.output);
  CHECK(v.status == 1);
  CHECK(v.output.find(file.string() + ":") != std::string::npos);
  CHECK(v.output.find(want) != std::string::npos);
}
