// `memtopo validate --device-description FILE`: a device description checked by the
// simulator's own reader, without running anything (docs/host.md, docs/simulator.md).
#include "helpers.hpp"

namespace fs = std::filesystem;
using test::run_memtopo;

namespace {
using test::q;
using test::has;
}  // namespace

TEST_CASE("validate --device-description accepts every shipped description", "[host][cli][validate]") {
  size_t checked = 0;
  for (const char* folder : {"examples/devices", "tests/sim/measured"})
    for (const auto& entry : fs::directory_iterator(fs::path(MEMTOPO_SOURCE_DIR) / folder)) {
      if (entry.path().extension() != ".toml") continue;
      const auto r = run_memtopo("validate --device-description " + q(entry.path()));
      INFO(r.output);
      CHECK(r.exit_code == 0);
      CHECK(has(r.output, entry.path().string() + ": valid simulated device description"));
      ++checked;
    }
  CHECK(checked >= 5);  // hopper-like, kepler-like, pascal-like, h100-sxm, hopper-like-sim
}

TEST_CASE("validate --device-description: a bad description exits 1 with file:line", "[host][cli][validate]") {
  test::TempDir dir("validate-device");
  const auto file = dir / "dev.toml";
  test::write_file(file, "[device]\nsm_count = 4\n[l1d]\nsize_bytes = 4096\nlatency_cycles = nan\n");
  const auto r = run_memtopo("validate --device-description " + q(file));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, file.string() + ":5: l1d.latency_cycles: nan is not a finite number of cycles"));
  CHECK_FALSE(has(r.output, "valid simulated device description"));

  test::write_file(file, "[device]\nsm_count = 4\n[l2]\nsize_bytes = 68719476736\n");
  const auto huge = run_memtopo("validate --device-description " + q(file));
  INFO(huge.output);
  CHECK(huge.exit_code == 1);
  CHECK(has(huge.output, file.string() + ":4: l2.size_bytes: 68719476736 B (64 GiB) is more than the simulator handles"));

  test::write_file(file, "[device]\nsm_count = = 4\n");
  CHECK(run_memtopo("validate --device-description " + q(file)).exit_code == 2);  // TOML syntax, as for topologies
  fs::create_directories(dir / "folder.toml");
  const auto folder = run_memtopo("validate --device-description " + q(dir / "folder.toml"));
  CHECK(folder.exit_code == 2);
  CHECK(has(folder.output, (dir / "folder.toml").string() + ": is a folder, not a regular file; name a TOML file"));
}

TEST_CASE("validate without --device-description points a description to it", "[host][cli][validate]") {
  const fs::path device = fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices/kepler-like.toml";
  const auto r = run_memtopo("validate " + q(device));
  INFO(r.output);
  CHECK(r.exit_code == 1);  // a description is not a topology file (no [meta])
  CHECK(has(r.output, "this looks like a simulated device description; `memtopo validate --device-description " +
                          device.string() + "` checks one"));
}
