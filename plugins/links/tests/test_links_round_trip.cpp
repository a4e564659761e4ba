// The links probes on simulated devices whose description places the GPU in its host: the
// attachment as described, a narrow link judged, copy rates as the link allows.
#include <catch2/catch.hpp>

#include <string>

#include <toml++/toml.h>

#include "cache-probes/memtopo_run.hpp"

namespace {

// Gen5 x16 at the default 85 % of its coded rate: 63.0 GB/s x 0.85.
constexpr double kGen5x16 = 32e9 * 128 / 130 / 8 * 16 * 0.85;

std::string placed(const std::string& tag, int width_lanes, int numa_nodes) {
  return probetest::write_variant("hopper-like.toml", tag, [&](toml::table& t) {
    toml::table a;
    a.insert_or_assign("numa_node", numa_nodes - 1);
    a.insert_or_assign("numa_nodes", numa_nodes);
    a.insert_or_assign("local_cpus", "16-31");
    a.insert_or_assign("pcie_generation", 5);
    a.insert_or_assign("pcie_width_lanes", width_lanes);
    a.insert_or_assign("pcie_width_max_lanes", 16);
    t.insert_or_assign("attachment", a);
  });
}

}  // namespace

TEST_CASE("the attachment as the description places the GPU, and its copies", "[links][sim]") {
  const toml::table got = probetest::run_memtopo(placed("links-x16", 16, 2), "links-x16", "links");
  CHECK(got["probes"]["links/attachment"]["status"].value_or<std::string>("") == "ok");
  CHECK(got["attachment"]["numa_node"].value_or<int64_t>(-1) == 1);
  CHECK(got["attachment"]["local_cpus"].value_or<std::string>("") == "16-31");
  CHECK(got["attachment"]["pcie_generation"].value_or<int64_t>(0) == 5);
  CHECK(got["attachment"]["pcie_width_lanes"].value_or<int64_t>(0) == 16);
  CHECK(got["attachment"]["pcie_link"].value_or<std::string>("") == "ok");
  CHECK(got["provenance"]["attachment"]["pcie_link"]["health"].value_or(false));
  CHECK_FALSE(got["attachment"]["nvlink_state"]);  // no NVLink: absent, with the reason
  const double in = got["link"]["host_to_device_bytes_per_second"].value_or(0.0);
  CHECK(in == Approx(kGen5x16).epsilon(0.01));  // the fixed latency of a 64 MiB copy: 0.2 %
  CHECK(got["link"]["host_to_device_far_bytes_per_second"].value_or(0.0) == Approx(0.8 * in).epsilon(0.01));
  CHECK(got["link"]["host_to_device_latency_s"].value_or(0.0) == Approx(2e-6).epsilon(0.01));
  CHECK(got["link"]["peers"].value_or<int64_t>(-1) == 0);
  CHECK_FALSE(got["link"]["peer_bytes_per_second"]);
}

TEST_CASE("a link trained at x8 of x16 is judged, and moves half", "[links][sim]") {
  const toml::table got = probetest::run_memtopo(placed("links-x8", 8, 1), "links-x8", "links");
  const std::string verdict = got["attachment"]["pcie_link"].value_or<std::string>("");
  CHECK(verdict.find("PCIe Gen5 x8, below its maximum Gen5 x16") == 0);
  CHECK(got["link"]["device_to_host_bytes_per_second"].value_or(0.0) == Approx(kGen5x16 / 2).epsilon(0.01));
  // One NUMA node: no far copy, and the reason.
  CHECK_FALSE(got["link"]["device_to_host_far_bytes_per_second"]);
  CHECK(got["probes"]["links/copies"]["absent"]["link.device_to_host_far_bytes_per_second"].value_or<std::string>("").find(
            "one NUMA node") != std::string::npos);
}
