// The cache-sharing probes on the simulated GPU: on every shipped device the storages of the
// texture and read-only paths ([sim.texture], [sim.readonly] storage) and the instances per SM
// of each cache (partitions_per_sm, by warp) come back, also with measurement noise on.
#include <catch2/catch.hpp>

#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

void compare_storage(const toml::table& ref, const toml::table& got) {
  const std::string tex = ref["sim"]["texture"]["storage"].value_or(std::string()),
                    ro = ref["sim"]["readonly"]["storage"].value_or(std::string());
  CHECK(got["texture"]["storage"].value<std::string>() == tex);
  CHECK(got["readonly"]["storage"].value<std::string>() == ro);
  CHECK(got["constant_l1"]["storage"].value<std::string>() == "own");  // the simulator's is always its own
  // Instances: those of the storage each path uses.
  const int64_t l1 = ref["sim"]["l1d"]["partitions_per_sm"].value_or<int64_t>(1);
  const int64_t t = tex == "l1d" ? l1 : ref["sim"]["texture"]["partitions_per_sm"].value_or<int64_t>(1);
  const int64_t r = ro == "l1d" ? l1 : ro == "texture" ? t : ref["sim"]["readonly"]["partitions_per_sm"].value_or<int64_t>(1);
  CHECK(got["l1d"]["instances_per_sm"].value<int64_t>() == l1);
  CHECK(got["texture"]["instances_per_sm"].value<int64_t>() == t);
  CHECK(got["readonly"]["instances_per_sm"].value<int64_t>() == r);
  const toml::array* warps = got["texture"]["instance_of_warp"].as_array();
  REQUIRE(warps);
  CHECK(warps->size() == 8);
}

}  // namespace

TEST_CASE("cache-sharing storage and instances recover every shipped simulated device", "[sharing][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "storage-" + name,
                                                   "cache-sharing/storage,cache-sharing/instances");
  CHECK(got["probes"]["cache-sharing/storage"]["status"].value<std::string>() == "ok");
  CHECK(got["probes"]["cache-sharing/instances"]["status"].value<std::string>() == "ok");
  compare_storage(toml::parse_file(probetest::device_file(name).string()), got);
}

TEST_CASE("cache-sharing storage and instances with measurement noise on", "[sharing][sim][noise]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev =
      probetest::write_variant(name, "storage-noisy", [](toml::table& t) { probetest::add_noise(t, 13); });
  const toml::table got = probetest::run_memtopo(dev, "storage-noisy-" + name,
                                                   "cache-sharing/storage,cache-sharing/instances");
  compare_storage(toml::parse_file(probetest::device_file(name).string()), got);
}
