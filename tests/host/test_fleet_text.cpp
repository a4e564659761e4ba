// memtopo fleet's text within 120 columns (golden/fleet/): GPUs a row each, each GPU's findings
// in a table indented below it, long cells continued on the lines below, nothing cut.
#include <algorithm>

#include "helpers.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/base/text_table.hpp"

using namespace memtopo::host;

namespace {

const fs::path kFleetGolden = fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "host" / "golden" / "fleet";

FleetMember gpu(const std::string& host, int index, double dram_read, double latency) {
  FleetMember m;
  m.file = "/srv/fleet/runs/2026-11-28/" + host + "-gpu" + std::to_string(index) + ".toml";
  m.host = host;
  m.device = "cuda:" + std::to_string(index);
  m.uuid = "GPU-" + std::to_string(index) + "f0c2e8a-" + std::to_string(1000 + index) + "-4c1b-9d2e-7a4b3c2d1e0f";
  m.model = "NVIDIA H100 80GB HBM3";
  m.group = "NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs, 80 GiB";
  KeyDeclared rated;
  rated.rated = true;
  m.values.push_back({"l2.near_hit_latency_cycles", FlatValue{latency, "exact", "", rated}});
  m.values.push_back({"throughput.dram_read_bytes_per_second", FlatValue{dram_read, "exact", "", rated}});
  return m;
}

}  // namespace

TEST_CASE("fleet text: findings under their GPU, every line within 120 columns", "[host][fleet][golden]") {
  std::vector<FleetMember> members;
  for (int i = 0; i < 6; ++i) members.push_back(gpu("node-a017.cluster.example.org", i, 3.21e12 + i * 1e9, 262.0));
  members[2].values[1].second.value = 2.40e12;  // a slow HBM stack
  members[4].state_warnings = {"2 processes held a CUDA context at the start (memtopo's is one); the SM clock was "
                               "throttled by a power cap for 31 % of the run (sw_power_cap)"};
  members[5].values[0].second.value = 301.0;
  const std::string text = render_fleet_text(compare_fleet(members, FleetOptions{}));
  INFO(text);
  size_t widest = 0;
  for (size_t begin = 0; begin < text.size();) {
    const size_t end = text.find('\n', begin);
    widest = std::max(widest, end - begin);
    begin = end + 1;
  }
  CHECK(widest <= kTextColumns);
  CHECK(text.find("FLAGGED") != std::string::npos);
  test::compare_with_golden(text, kFleetGolden, "findings.txt");
}

TEST_CASE("fleet text: files that host, device and UUID do not tell apart name their row", "[host][fleet][golden]") {
  std::vector<FleetMember> members;
  for (int i = 0; i < 3; ++i) {
    members.push_back(gpu("vm", 0, 2.0e11, 200.0));
    members.back().uuid.clear();
    members.back().device = "sim:examples/devices/hopper-like.toml";
    members.back().file = "/data/fleet/g" + std::to_string(i + 1) + ".toml";
  }
  members[1].values[1].second.value = 1.5e11;
  test::compare_with_golden(render_fleet_text(compare_fleet(members, FleetOptions{})), kFleetGolden, "by-file.txt");
}
