// The storage-sharing probe on the simulated GPU: on every shipped device the storages of the
// texture and read-only paths ([sim.texture], [sim.readonly] storage) come back, also with
// measurement noise on.
#include <catch2/catch.hpp>

#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

void compare_storage(const toml::table& ref, const toml::table& got) {
  CHECK(got["texture"]["storage"].value<std::string>() == ref["sim"]["texture"]["storage"].value<std::string>());
  CHECK(got["readonly"]["storage"].value<std::string>() == ref["sim"]["readonly"]["storage"].value<std::string>());
}

}  // namespace

TEST_CASE("cache-sharing storage recovers every shipped simulated device", "[sharing][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "storage-" + name, "cache-sharing/storage");
  CHECK(got["probes"]["cache-sharing/storage"]["status"].value<std::string>() == "ok");
  compare_storage(toml::parse_file(probetest::device_file(name).string()), got);
}

TEST_CASE("cache-sharing storage with measurement noise on", "[sharing][sim][noise]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev =
      probetest::write_variant(name, "storage-noisy", [](toml::table& t) { probetest::add_noise(t, 13); });
  const toml::table got = probetest::run_memtopo(dev, "storage-noisy-" + name, "cache-sharing/storage");
  compare_storage(toml::parse_file(probetest::device_file(name).string()), got);
}
