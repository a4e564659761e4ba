// Every topology names its GPU, whatever probes ran: [meta] carries the backend's name, UUID
// and PCI bus id (a run of one probe has no [device] table).
#include <catch2/catch.hpp>

#include <toml++/toml.h>

#include "helpers.hpp"

using test::kGood;
using test::q;
using test::run_memtopo;
namespace fs = std::filesystem;

TEST_CASE("identity: a run of one test probe names the GPU in [meta]", "[host][identity]") {
  test::TempDir dir("identity");
  const fs::path out = dir.path / "one.toml";
  const fs::path device = fs::path(MEMTOPO_HOST_TEST_DIR) / ".." / "sim" / "measured" / "h100-sxm.toml";
  const auto r = run_memtopo("run -q --device sim:" + q(device) + kGood + " --only t-basic/source -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const toml::table t = toml::parse_file(out.string());
  CHECK_FALSE(t.contains("device"));
  CHECK(t["meta"]["device_name"].value_or(std::string()) == "NVIDIA H100 80GB HBM3");
  CHECK(t["meta"]["device_uuid"].value_or(std::string()) == "GPU-f32de587-97d8-c79e-4791-9851e4d89506");
  CHECK(t["meta"]["device_pci_bus_id"].value_or(std::string()) == "0000:00:06.0");
  CHECK(run_memtopo("validate " + q(out)).exit_code == 0);
}

TEST_CASE("identity: the simulated GPU without a description has a name and no UUID", "[host][identity]") {
  test::TempDir dir("identity-sim");
  const fs::path out = dir.path / "sim.toml";
  const auto r = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const toml::table t = toml::parse_file(out.string());
  CHECK_FALSE(t["meta"]["device_name"].value_or(std::string()).empty());
  CHECK_FALSE(t["meta"].as_table()->contains("device_uuid"));
}

TEST_CASE("identity: a key's declared class reaches the file through the worker process", "[host][identity]") {
  // The worker sends its results as JSON; every MT_KEY_* bit the host knows survives it (the
  // configuration bit of 3.4 was once masked away there).
  test::TempDir dir("identity-class");
  const fs::path out = dir.path / "partitions.toml";
  const auto r = run_memtopo("run -q --device sim --only cache-sharing/l2-partitions -o " + q(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const toml::table t = toml::parse_file(out.string());
  CHECK(t["provenance"]["l2"]["near_partition_of_sm"]["class"].value_or(std::string()) == "configuration");
  CHECK(t["provenance"]["l2"]["partition_sm_counts"]["class"].value_or(std::string()) == "configuration");
}
