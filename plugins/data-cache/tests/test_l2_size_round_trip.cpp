// The L2's size on simulated devices unlike the shipped ones.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

TEST_CASE("an L2 smaller than the size search's usual start is measured", "[cache][sim][l2]") {
  // 256 KiB (a random device of scripts/random-devices, seed 2; Kepler's smallest parts): the
  // search starts and its reference lie inside the L2 the device reports.
  const std::string dev = probetest::write_variant("hopper-like.toml", "l2-256k", [](toml::table& t) {
    t["device"].as_table()->insert_or_assign("l2_bytes", 262144);
    t["l2"].as_table()->insert_or_assign("size_bytes", 262144);
    t["l2"].as_table()->insert_or_assign("sets", 128);
  });
  const toml::table got = probetest::run_memtopo(dev, "l2-256k", "data-cache/l2-size,data-cache/l2-occupancy");
  CHECK(got["probes"]["data-cache/l2-size"]["status"].value_or<std::string>("") == "ok");
  CHECK(got["l2"]["size_bytes"].value_or<int64_t>(0) == 262144);
}
