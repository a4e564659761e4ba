// The load types on the simulated GPU, where their chains run against the description's
// latencies: one warp's DRAM chains wait DRAM's latency at every ILP (each load a row no load
// read since the rows came round), its L2 chains the L2's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "../roofline_analysis.hpp"
#include "memtopo_run.hpp"

namespace {

// (op, ilp) -> one warp's cycles per load of one chain (the warp's cycles between its
// instructions times its chains), from the probe's raw instructions.csv.
std::map<std::pair<int, int>, double> one_warp_latencies(const std::filesystem::path& csv) {
  std::ifstream in(csv);
  REQUIRE(in.good());
  std::string line;
  std::getline(in, line);
  REQUIRE(line == "op,warps,ilp,ops_per_cycle_per_sm,cycles_per_op,sms,launches");
  std::map<std::pair<int, int>, double> out;
  while (std::getline(in, line)) {
    std::vector<double> v;
    std::stringstream s(line);
    for (std::string cell; std::getline(s, cell, ',');) v.push_back(std::stod(cell));
    REQUIRE(v.size() == 7);
    if (v[1] == 1) out[{int(v[0]), int(v[2])}] = v[4] * v[2];
  }
  return out;
}

}  // namespace

TEST_CASE("roofline: one warp's DRAM chains miss the L2 at every ILP, its L2 chains hit", "[roofline][sim]") {
  const std::filesystem::path device = probetest::device_file("hopper-like.toml");
  const std::filesystem::path raw = probetest::scratch("roofline-raw");
  std::filesystem::remove_all(raw);
  const toml::table got = probetest::run_memtopo(device, "roofline-loads", "occupancy-roofline/loads", "",
                                                 "--raw-dir " + raw.string());
  REQUIRE(got["probes"]["occupancy-roofline/loads"]["status"].value<std::string>() == "ok");
  const toml::table ref = toml::parse_file(device.string());
  const double dram = ref["dram"]["latency_cycles"].value_or(0.0);
  const double l2_far = ref["l2"]["far_latency_cycles"].value_or(0.0);
  REQUIRE(dram > l2_far);
  const auto latencies = one_warp_latencies(raw / "occupancy-roofline__loads" / "instructions.csv");
  using occupancy_roofline::Op;
  for (int ilp : {1, 2, 4, 8}) {
    INFO("ILP " << ilp);
    REQUIRE(latencies.count({int(Op::GlobalLoadDram), ilp}) == 1);
    REQUIRE(latencies.count({int(Op::GlobalLoadL2), ilp}) == 1);
    // Before each point took rows of its own, ILP 2 to 8 re-read the rows of the point before
    // in the L2 (420 cycles, the far partition's latency, for 580).
    CHECK(latencies.at({int(Op::GlobalLoadDram), ilp}) >= 0.95 * dram);
    CHECK(latencies.at({int(Op::GlobalLoadL2), ilp}) <= 1.05 * l2_far);
  }
}
