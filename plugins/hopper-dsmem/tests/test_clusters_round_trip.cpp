// The GPC map from cluster placement alone, on the replayed H100: 8 SMs that only ever ran
// clusters of one TPC stay unplaced without the constant L1.5 groups, and the keys say so
// without contradicting each other.
#include <catch2/catch.hpp>

#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

TEST_CASE("clusters alone: the SMs left unplaced and why the groups placed none", "[hopper][dsmem][sim]") {
  // examples/devices/<name> lies two folders below the source root.
  const auto root = probetest::device_file("hopper-like.toml").parent_path().parent_path().parent_path();
  const toml::table got =
      probetest::run_memtopo(root / "tests/sim/measured/h100-sxm.toml", "clusters-alone", "hopper-dsmem/clusters");
  CHECK(got["provenance"]["gpc"]["count"]["bound"].value_or<std::string>("") == "at_least");
  CHECK(probetest::ints(got["gpc"]["unresolved_sms"]).size() == 8);
  const std::string why =
      got["probes"]["hopper-dsmem/clusters"]["absent"]["gpc.sms_placed_by_constant_l15"].value_or<std::string>("");
  CHECK_THAT(why, Catch::Contains("constant_l15.group_of_sm was not measured"));
  CHECK_THAT(why, !Catch::Contains("every SM placed"));
}
