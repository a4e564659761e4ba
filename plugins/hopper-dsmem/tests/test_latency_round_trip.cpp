// The DSMEM latency on the simulated Hopper-like device under long-tailed noise, as random
// devices of scripts/random-devices have it (seed 35: 12 % high before).
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

TEST_CASE("the DSMEM latency under interruptions and jitter", "[hopper][dsmem][sim]") {
  // 0.4 % of loads interrupted for 5000 cycles: a chase of 512 loads carried two of them, 20
  // cycles a load, and each load a few cycles of jitter. Runs of 64 loads, each chase its median
  // run's, and the excess of the block's own shared::cta chase over shared.latency_cycles
  // leave both out.
  const std::string dev = probetest::write_variant("hopper-like.toml", "dsmem-noise", [](toml::table& t) {
    toml::table& sim = *t["sim"].as_table();
    sim.insert_or_assign("noise_cycles", 6);
    sim.insert_or_assign("noise_distribution", "geometric");
    sim.insert_or_assign("outlier_probability", 0.004);
    sim.insert_or_assign("outlier_cycles", 5000);
  });
  const toml::table got =
      probetest::run_memtopo(dev, "dsmem-noise", "shared-memory/banks,hopper-dsmem/latency");
  const double shared = got["shared"]["latency_cycles"].value_or(0.0);
  REQUIRE(shared > 0);
  // [sim.cluster] remote_latency_cycles: six times the shared latency by default.
  const double remote = got["dsmem"]["remote_latency_cycles"].value_or(0.0);
  CHECK(remote == Approx(6 * 29.0).epsilon(0.03));
  CHECK(got["dsmem"]["local_cluster_latency_cycles"].value_or(0.0) == Approx(29.0).epsilon(0.05));
}

TEST_CASE("the DSMEM bandwidth where a block may have less than 64 KiB of shared memory", "[hopper][dsmem][sim]") {
  // 48 KiB a block (random devices 4 and 10): the sweeps' 64 KiB launch was refused and the
  // probe failed the run; each block now sweeps 16 KiB.
  const std::string dev = probetest::write_variant("hopper-like.toml", "dsmem-48k", [](toml::table& t) {
    t["device"].as_table()->insert_or_assign("shared_per_block_optin_bytes", 49152);
  });
  const toml::table got = probetest::run_memtopo(dev, "dsmem-48k", "hopper-dsmem/bandwidth");
  CHECK(got["probes"]["hopper-dsmem/bandwidth"]["status"].value_or<std::string>("") == "ok");
  const auto own = got["dsmem"]["local_shared_gbps"].as_array();
  REQUIRE(own);
  CHECK(own->size() == 3);
  CHECK_THAT(got["provenance"]["dsmem"]["local_shared_gbps"]["note"].value_or<std::string>(""),
             Catch::Contains("sweeping 16 KiB"));
}
