// memtopo draw: the GPU's hierarchy as text (docs/host.md, "memtopo draw"), golden files of the
// committed H100 run and of a measured simulated device.
#include <toml++/toml.h>

#include "helpers.hpp"
#include "memtopo_host/draw.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kDrawGolden = fs::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "draw";

void compare_with_draw_golden(const std::string& actual, const std::string& golden_name) {
  test::compare_with_golden(actual, kDrawGolden, golden_name);
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
    compare_with_draw_golden(r.output, golden);
  }
  const auto sim = test::read_file(kDrawGolden / "hopper-like-sim.txt");
  CHECK(sim.find("[simulated: ") != std::string::npos);
  CHECK(test::read_file(kDrawGolden / "h100.txt").find("[simulated") == std::string::npos);
  // docs/host.md shows the H100 drawing: the golden file, verbatim.
  CHECK(test::read_file(src / "docs/host.md").find("```text\n" + test::read_file(kDrawGolden / "h100.txt") + "```") !=
        std::string::npos);
}

TEST_CASE("draw: no topology or a description instead of a topology: exit 2", "[host][draw]") {
  const fs::path src(MEMTOPO_SOURCE_DIR);
  CHECK(test::run_memtopo("draw").exit_code == 2);
  const auto desc = test::run_memtopo("draw '" + (src / "examples/devices/kepler-like.toml").string() + "'");
  CHECK(desc.exit_code == 2);
}

// The picture (-o F.svg / F.png, host/report/gpu_picture.py) draws this model; the browser test
// (tests/report) renders it.
TEST_CASE("draw: the model the picture is drawn from holds each level and its instances", "[host][draw]") {
  const auto doc = toml::parse_file((fs::path(MEMTOPO_SOURCE_DIR) / "tests/report/inputs/h100/topology.toml").string());
  const memtopo::host::GpuDrawing g = memtopo::host::gpu_drawing(doc);
  CHECK(g.title == "NVIDIA H100 80GB HBM3");
  CHECK(g.gpc_bound == ">= ");
  CHECK(g.gpc_sm_counts.size() == 8);
  REQUIRE(g.per_sm.size() == 6);
  CHECK(g.per_sm[1].label == "L1 data");
  REQUIRE(g.shared.size() == 3);
  CHECK(g.shared[1].label == "L2");
  CHECK(g.shared[1].instances_sm_counts == std::vector<int64_t>{66, 66});
  CHECK(g.shared[0].instances_sm_counts.size() == 8);
  const std::string json = memtopo::host::gpu_drawing_json(g);
  CHECK(json.find("\"label\" : \"L2\"") != std::string::npos);
  CHECK(json.find("\"gpc_sm_counts\" : [") != std::string::npos);
}

// The H100 run with `gpcs` GPCs of one SM each (issue 50: 20,000 GPCs took 69 s and 12 MB).
static std::string with_gpcs(size_t gpcs) {
  std::string text = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests/report/inputs/h100/topology.toml");
  const size_t at = text.find("\n[gpc]\n");
  REQUIRE(at != std::string::npos);
  std::string counts;
  for (size_t i = 0; i < gpcs; ++i) counts += (i ? ", 1" : "1");
  const size_t end = text.find("\n[", at + 1);
  return text.substr(0, at) + "\n[gpc]\ncount = " + std::to_string(gpcs) + "\nsm_counts = [" + counts + "]\n" +
         text.substr(end);
}

TEST_CASE("draw: 20,000 GPCs give bounded text: the first counts and how many there are", "[host][draw]") {
  test::TempDir dir("draw-gpcs");
  test::write_file(dir / "t.toml", with_gpcs(20000));
  const auto r = test::run_memtopo("draw '" + (dir / "t.toml").string() + "'");
  INFO(r.output.substr(0, 2000));
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("(20000 in all)") != std::string::npos);
  CHECK(r.output.size() < 8000);  // the H100's drawing is about 2 KB; 20,000 counts were 40 KB more
}
