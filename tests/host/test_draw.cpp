// memtopo draw: the GPU's hierarchy as text (docs/host.md, "memtopo draw"), golden files of the
// committed H100 run and of a measured simulated device.
#include "helpers.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kGolden = fs::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "draw";

void compare_with_golden(const std::string& actual, const std::string& golden_name) {
  test::compare_with_golden(actual, kGolden, golden_name);
}

}  // namespace

TEST_CASE("draw: the H100 run and a simulated device drawn as text match the golden files", "[host][draw]") {
  const fs::path src(MEMTOPO_SOURCE_DIR);
  for (const auto& [topology, golden] :
       {std::pair{src / "tests/report/inputs/h100/topology.toml", "h100.txt"},
        std::pair{src / "tests/sim/measured/hopper-like-sim.toml", "hopper-like-sim.txt"}}) {
    const auto r = test::run_memtopo("draw '" + topology.string() + "'");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    compare_with_golden(r.output, golden);
  }
  const auto sim = test::read_file(kGolden / "hopper-like-sim.txt");
  CHECK(sim.find("[simulated: ") != std::string::npos);
  CHECK(test::read_file(kGolden / "h100.txt").find("[simulated") == std::string::npos);
  // docs/host.md shows the H100 drawing: the golden file, verbatim.
  CHECK(test::read_file(src / "docs/host.md").find("```text\n" + test::read_file(kGolden / "h100.txt") + "```") !=
        std::string::npos);
}

TEST_CASE("draw: no topology, a description instead of a topology, an SVG asked for: exit 2", "[host][draw]") {
  const fs::path src(MEMTOPO_SOURCE_DIR);
  CHECK(test::run_memtopo("draw").exit_code == 2);
  const auto desc = test::run_memtopo("draw '" + (src / "examples/devices/kepler-like.toml").string() + "'");
  CHECK(desc.exit_code == 2);
  test::TempDir dir("draw-svg");
  const auto svg = test::run_memtopo("draw '" + (src / "tests/sim/measured/hopper-like-sim.toml").string() + "' -o '" +
                                     (dir / "gpu.svg").string() + "'");
  INFO(svg.output);
  CHECK(svg.exit_code == 2);
  CHECK(svg.output.find("not built yet") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "gpu.svg"));
}
