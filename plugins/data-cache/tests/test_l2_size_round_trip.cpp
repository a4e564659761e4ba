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

namespace {

// hopper-like with an L2 of `partitions` whose homes a hash spreads, `sets` over all of them.
std::string hashed_homes(const std::string& name, int64_t partitions, int64_t sets, int64_t ways, const char* policy,
                         int64_t granule) {
  return probetest::write_variant("hopper-like.toml", name, [&](toml::table& t) {
    const int64_t size = sets * ways * 128;
    t["device"].as_table()->insert_or_assign("l2_bytes", size);
    toml::table& l2 = *t["l2"].as_table();
    l2.insert_or_assign("size_bytes", size);
    l2.insert_or_assign("sets", sets);
    l2.insert_or_assign("ways", ways);
    l2.insert_or_assign("replacement_policy", policy);
    l2.insert_or_assign("partitions", partitions);
    toml::table& sim_l2 = *t["sim"]["l2"].as_table();
    sim_l2.insert_or_assign("interleave_bytes", granule);
    sim_l2.insert_or_assign("interleave", "hashed");
  });
}

const char* kHashedProbes = "cache-sharing/l2-partitions,data-cache/l2-line,data-cache/l2-geometry,data-cache/l2-policy";

}  // namespace

// Lines a stride apart spread over every partition where a hash picks their homes; the lines
// homed in the measuring SM's own partition, found by their hit latency, are one partition's
// address space, where strides single out its sets (docs/cache-probes.md). Before: the line
// 256 B for 128 at 0.6, sets, ways and policy not determinable (random devices 3, 17).
TEST_CASE("an L2 of hashed homes: line, sets, ways and policy over the own partition's lines", "[cache][sim][l2]") {
  const std::string dev = hashed_homes("l2-hashed-4", 4, 1024, 8, "lru", 2048);
  const toml::table got = probetest::run_memtopo(dev, "l2-hashed-4", kHashedProbes);
  CHECK(got["l2"]["partition_interleave"].value_or<std::string>("") == "hashed");
  CHECK(got["l2"]["line_bytes"].value_or<int64_t>(0) == 128);
  CHECK(got["l2"]["sets"].value_or<int64_t>(0) == 1024);
  CHECK(got["l2"]["ways"].value_or<int64_t>(0) == 8);
  CHECK(got["l2"]["set_mapping"].value_or<std::string>("") == "modulo");
  CHECK(got["l2"]["replacement_policy"].value_or<std::string>("") == "lru");
  const std::string note = got["provenance"]["l2"]["sets"]["note"].value_or<std::string>("");
  CHECK(note.find("own partition") != std::string::npos);
}

TEST_CASE("an L2 of hashed homes replaced at random: sets, ways and policy of one partition", "[cache][sim][l2]") {
  const std::string dev = hashed_homes("l2-hashed-random", 2, 512, 16, "random", 4096);
  const toml::table got = probetest::run_memtopo(dev, "l2-hashed-random", kHashedProbes);
  CHECK(got["l2"]["sets"].value_or<int64_t>(0) == 512);
  CHECK(got["l2"]["ways"].value_or<int64_t>(0) == 16);
  CHECK(got["l2"]["replacement_policy"].value_or<std::string>("") == "random");
}
