// memtopo draw: the GPU's hierarchy as text (docs/host.md, "memtopo draw"), golden files of the
// committed H100 run and of a measured simulated device.
#include <algorithm>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "helpers.hpp"
#include "tools/draw/draw.hpp"
#include "topology/base/text_encoding.hpp"

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
  CHECK(g.gpc_sm_counts.size() == 8);
  // One SRAM (texture.storage = readonly.storage = "l1d", the carveout) with its four paths.
  // Then the constant L1, a cache of its own, and what each SM can run (CUDA's limits).
  REQUIRE(g.per_sm.size() == 3);
  CHECK(g.per_sm[0].label == "SRAM");
  CHECK(g.per_sm[0].kind == "storage");
  std::vector<std::string> paths;
  for (const auto& n : g.per_sm[0].children) paths.push_back(n.label);
  CHECK(paths == std::vector<std::string>{"L1 data", "texture", "read-only", "shared memory"});
  CHECK(g.per_sm[1].label == "constant L1");
  CHECK(g.per_sm[2].label == "CUDA limits");
  CHECK(g.per_sm[2].parts.front() == "65536 registers (256 KiB)");
  REQUIRE(g.shared.size() == 4);
  CHECK(g.shared[1].label == "L2");
  REQUIRE(g.shared[1].children.size() == 2);
  CHECK(g.shared[1].children[0].parts == std::vector<std::string>{"25 MiB", "66 SMs near"});
  // The SM map: a cell per SM; the L1.5 groups split the SMs as the GPCs do.
  REQUIRE(g.strips.size() == 3);
  CHECK(g.strips[0].cells.size() == 132);
  CHECK(g.strips[1].label == "L2 partition");
  CHECK(g.strips[2].same_as == "GPC");
  CHECK(g.sm_clock_mhz == 1980);
  REQUIRE(g.ladder.size() == 6);
  CHECK(g.ladder.front().label == "shared memory");
  CHECK(g.ladder.back().label == "DRAM");
  // The bandwidth ladder, nearest first: shared memory as the SMs times one SM's rate.
  REQUIRE(g.rates.size() >= 5);
  CHECK(g.rates.front().label == "shared memory");
  CHECK(g.rates.front().note.rfind("132 SMs x ", 0) == 0);
  CHECK(g.rates.back().label == "DRAM write");
  std::vector<std::string> extras;
  for (const auto& n : g.extras) extras.push_back(n.label);
  CHECK(extras == std::vector<std::string>{"loads in flight", "compute peaks", "clusters, TMA"});
  const std::string json = memtopo::host::gpu_drawing_json(g);
  CHECK(json.find("\"label\" : \"L2\"") != std::string::npos);
  CHECK(json.find("\"strips\" : [") != std::string::npos);
}

// The done-when list of issue 53, item 4, on the committed H100 run.
TEST_CASE("draw: the H100 text shows rates, the ladder in ns, TLB, MLP, identity and a legend", "[host][draw]") {
  const auto r = test::run_memtopo("draw '" + (fs::path(MEMTOPO_SOURCE_DIR) / "tests/report/inputs/h100/topology.toml").string() + "'");
  REQUIRE(r.exit_code == 0);
  for (const char* s :
       {"├── SRAM", "L1 data", "texture", "read-only", "shared memory", "carveout 9 settings",  // one SRAM, its paths
        "2 partitions, API 50 MiB in all", "partition 0  25 MiB, 66 SMs near",                  // L2 per partition, total
        "29.45 TB/s in all", "read 12.33 TB/s, write 3.92 TB/s", "read 3.20 TB/s = 95 % of 3.35 TB/s",  // rates
        "32.0 cyc     16.2 ns", "280.4 cyc    141.6 ns", "~524.2 cyc    264.7 ns", "576.5 cyc    291.2 ns",  // ladder
        "page 2 MiB", "reach 65.2 GiB", "per SM 434 to L2", "DSMEM",                           // TLB, MLP, DSMEM
        "0011223344 5566770011", "L1.5 group    the GPCs' split",                               // the SM map
        "UUID GPU-2de06feb-a3d5-24a0-88a9-70e856c87a05", "PCI bus 0000:00:06.0", "CUDA driver 13.0",
        "2026-11-23 05:22 UTC", "55 probes: 41 ok", "└── legend", "API ", "├── bandwidths", "├── compute peaks",
        "├── clusters, TMA", "CUDA limits"})
    CHECK(r.output.find(s) != std::string::npos);
}

TEST_CASE("draw: text lines are at most 120 display columns, a wide device name included", "[host][draw]") {
  using memtopo::host::display_columns;
  CHECK(display_columns("├── L2") == 6);
  CHECK(display_columns("\xe6\xbc\xa2\xe5\xad\x97") == 4);  // two CJK characters, 2 columns each
  CHECK(display_columns("e\xcc\x81") == 1);                    // e and a combining acute accent
  const fs::path src(MEMTOPO_SOURCE_DIR);
  std::string h100 = test::read_file(src / "tests/report/inputs/h100/topology.toml");
  const std::string name = "name = \"NVIDIA H100 80GB HBM3\"";
  std::string wide;
  for (int i = 0; i < 90; ++i) wide += "\xe6\xbc\xa2";  // 180 columns of one name
  h100.replace(h100.find(name), name.size(), "name = \"" + wide + "\"");
  test::TempDir dir("draw-columns");
  test::write_file(dir / "wide.toml", h100);
  // Wide characters in every name the drawing shows, and a latency of 1e308 (an exponent).
  std::string measured = test::read_file(src / "tests/sim/measured/h100-sxm.toml");
  for (const std::string& from : {"NVIDIA H100 80GB HBM3\"", "host = \"vm\"", "580.159.04"}) {
    const size_t at = measured.find(from);
    REQUIRE(at != std::string::npos);
    measured.insert(at + (from[0] == 'h' ? 8 : 0), wide);
  }
  const size_t l1 = measured.find("latency_cycles = 32.0", measured.find("\n[l1d]"));
  REQUIRE(l1 != std::string::npos);
  measured.replace(l1, 21, "latency_cycles = 1e308");
  test::write_file(dir / "wide-measured.toml", measured);
  for (const fs::path& topology : {src / "tests/report/inputs/h100/topology.toml", src / "tests/sim/measured/hopper-like-sim.toml",
                                   src / "tests/sim/measured/h100-sxm.toml", dir / "wide.toml", dir / "wide-measured.toml"}) {
    const auto r = test::run_memtopo("draw '" + topology.string() + "'");
    REQUIRE(r.exit_code == 0);
    std::istringstream lines(r.output);
    size_t n = 0;
    for (std::string line; std::getline(lines, line); ++n) {
      INFO(topology << ": " << line);
      CHECK(display_columns(line) <= memtopo::host::kDrawColumns);
    }
    CHECK(n > 20);
  }
  const auto big = test::run_memtopo("draw '" + (dir / "wide-measured.toml").string() + "'");
  CHECK(test::has(big.output, "1e+308 cyc"));
  CHECK_FALSE(test::has(big.output, "inf ns"));
}

// An acceptance run (configs/acceptance.toml) measures a few values: the drawing names its
// probes and says what they did not measure, not a GPU without caches.
TEST_CASE("draw: a run of few probes names them and what was not measured", "[host][draw]") {
  std::string h100 = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests/report/inputs/h100/topology.toml");
  // Keep [meta], [device] and the probe table of device-info only.
  const std::string probe = "\n[probes.\"device-info/properties\"]";
  const size_t cut = h100.find("\n[constant_l1]");
  const size_t at = h100.find(probe);
  REQUIRE((cut != std::string::npos && at != std::string::npos));
  const std::string small = h100.substr(0, cut) + h100.substr(at, h100.find("\n[", at + 1) - at) + "\n";
  test::TempDir dir("draw-few");
  test::write_file(dir / "few.toml", small);
  const auto r = test::run_memtopo("draw '" + (dir / "few.toml").string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("├── probes run    device-info/properties\n") != std::string::npos);
  CHECK(r.output.find("├── not measured  GPCs, SM map, L1 data, texture, read-only") != std::string::npos);
  CHECK(r.output.find("(the one probe this run selected does not measure them)") != std::string::npos);
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

// Issue 54, item 2: the L2 slice map on the SM strip and its gap under the L2, from the keys
// with their roles, on the H100 run with a slice map added.
TEST_CASE("draw: the L2 slice classes are a strip of the SM map, their gap a value of the L2", "[host][draw]") {
  toml::table doc = toml::parse_file((fs::path(MEMTOPO_SOURCE_DIR) / "tests/report/inputs/h100/topology.toml").string());
  toml::array classes;
  for (int s = 0; s < 132; ++s) classes.push_back(int64_t((s / 2) % 2));
  toml::table* l2 = doc["l2"].as_table();
  REQUIRE(l2);
  l2->insert_or_assign("slice_class_of_sm", classes);
  l2->insert_or_assign("slice_class_sm_counts", toml::array{int64_t(66), int64_t(66)});
  l2->insert_or_assign("slice_class_gap_cycles", 28.0);
  l2->insert_or_assign("slice_line_granule_bytes", int64_t(256));
  const memtopo::host::GpuDrawing g = memtopo::host::gpu_drawing(doc);
  REQUIRE(g.strips.size() == 4);
  CHECK(g.strips[3].label == "L2 slice class");
  CHECK(g.strips[3].cells.size() == 132);
  CHECK(g.strips[3].cells[2] == 1);
  CHECK(g.strips[3].same_as.empty());  // pairs alternating: not the GPCs' split nor the partitions'
  const auto& parts = g.shared[1].parts;
  CHECK(std::find(parts.begin(), parts.end(), "slice classes of 66/66 SMs, +28.0 cyc across (lines by 256 B)") !=
        parts.end());
  test::TempDir dir("draw-slices");
  std::ofstream(dir / "t.toml") << doc;
  const auto r = test::run_memtopo("draw '" + (dir / "t.toml").string() + "'");
  INFO(r.output);
  CHECK(r.output.find("L2 slice class  0011001100 1100110011") != std::string::npos);
}

TEST_CASE("draw: a wrongly typed GPU state says so, never on or off", "[host][draw][hostile]") {
  std::string text = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests/sim/measured/h100-sxm.toml");
  const std::string from = "ecc_enabled = true";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "ecc_enabled = 1");
  test::TempDir dir("draw-state-types");
  test::write_file(dir / "t.toml", text);
  const auto r = test::run_memtopo("draw '" + (dir / "t.toml").string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK_FALSE(test::has(r.output, "ECC on"));
  CHECK(test::has(r.output, "ECC unknown (ecc_enabled is not true or false)"));
}
