// Output names and formats agree (docs/host.md, "Output names"): a command writes the format
// the file's name says where it writes that format, and refuses a name that says another,
// leaving no file behind.
#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::has;
using test::quoted;
using test::run_memtopo;

namespace {
const fs::path kH100 = fs::path(MEMTOPO_SOURCE_DIR) / "tests/report/inputs/h100/topology.toml";
}  // namespace

TEST_CASE("output names: draw writes PDF, SVG, PNG or text, and refuses other names", "[host][draw][names]") {
  test::TempDir dir("names-draw");
  for (const char* name : {"gpu.html", "gpu.jpg", "gpu.json"}) {
    const auto r = run_memtopo("draw " + quoted(kH100) + " -o " + quoted(dir / name));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "draw writes text"));
    CHECK_FALSE(fs::exists(dir / name));
  }
  const auto text = run_memtopo("draw " + quoted(kH100) + " -o " + quoted(dir / "gpu.txt"));
  CHECK(text.exit_code == 0);
  CHECK(has(test::read_file(dir / "gpu.txt"), "NVIDIA H100"));
  const auto pdf = run_memtopo("draw " + quoted(kH100) + " -o " + quoted(dir / "gpu.pdf"));
  INFO(pdf.output);
  if (pdf.exit_code == 0)  // with matplotlib: a PDF, not text in a .pdf
    CHECK(test::read_file(dir / "gpu.pdf").rfind("%PDF", 0) == 0);
  else
    CHECK(has(pdf.output, "matplotlib"));
}

TEST_CASE("output names: report writes HTML only", "[host][report][names]") {
  test::TempDir dir("names-report");
  const auto r = run_memtopo("report " + quoted(kH100) + " -o " + quoted(dir / "r.pdf"));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "name it .html"));
  CHECK_FALSE(fs::exists(dir / "r.pdf"));
}

TEST_CASE("output names: export writes the format the name says", "[host][export][names]") {
  test::TempDir dir("names-export");
  const auto config = run_memtopo("export -o " + quoted(dir / "gpgpusim.config") + " " + quoted(kH100));
  INFO(config.output);
  REQUIRE(config.exit_code == 0);
  CHECK(has(test::read_file(dir / "gpgpusim.config"), "-gpgpu_"));
  REQUIRE(run_memtopo("export -o " + quoted(dir / "t.csv") + " " + quoted(kH100)).exit_code == 0);
  CHECK(test::read_file(dir / "t.csv").rfind("{", 0) != 0);
  REQUIRE(run_memtopo("export -o " + quoted(dir / "t.json") + " " + quoted(kH100)).exit_code == 0);
  CHECK(test::read_file(dir / "t.json").rfind("{", 0) == 0);
  const auto odd = run_memtopo("export -o " + quoted(dir / "t.txt") + " " + quoted(kH100));
  CHECK(odd.exit_code == 2);
  CHECK(has(odd.output, "name it .json, .toml, .csv or .config"));
  const auto both = run_memtopo("export --format json -o " + quoted(dir / "u.csv") + " " + quoted(kH100));
  CHECK(both.exit_code == 2);
  CHECK(has(both.output, "the name says csv"));
  CHECK_FALSE(fs::exists(dir / "t.txt"));
  CHECK_FALSE(fs::exists(dir / "u.csv"));
}

TEST_CASE("output names: run writes .toml or .json, fleet --report HTML", "[host][fleet][names]") {
  test::TempDir dir("names-run");
  const auto csv = run_memtopo("run --device sim --only device-info -o " + quoted(dir / "t.csv"));
  INFO(csv.output);
  CHECK(csv.exit_code == 2);
  CHECK(has(csv.output, "run writes a topology as .toml or .json"));
  const auto both = run_memtopo("run --device sim --only device-info --format json -o " + quoted(dir / "t.toml"));
  CHECK(both.exit_code == 2);
  CHECK(has(both.output, "the name says toml"));
  CHECK_FALSE(fs::exists(dir / "t.csv"));
  const auto page = run_memtopo("fleet --report -o " + quoted(dir / "f.pdf") + " " + quoted(kH100));
  CHECK(page.exit_code == 2);
  CHECK(has(page.output, "name it .html"));
  CHECK_FALSE(fs::exists(dir / "f.pdf"));
}

TEST_CASE("output names: compare and fleet write the format the name says", "[host][compare][fleet][names]") {
  test::TempDir dir("names-compare");
  const std::string two = " " + quoted(kH100) + " " + quoted(kH100);
  REQUIRE(run_memtopo("compare -o " + quoted(dir / "c.csv") + two).exit_code == 0);
  CHECK(has(test::read_file(dir / "c.csv"), ","));
  REQUIRE(run_memtopo("compare -o " + quoted(dir / "c.md") + two).exit_code == 0);
  CHECK(has(test::read_file(dir / "c.md"), "|"));
  const auto odd = run_memtopo("compare -o " + quoted(dir / "c.pdf") + two);
  CHECK(odd.exit_code == 2);
  CHECK(has(odd.output, "the name says no format compare writes"));
  const auto both = run_memtopo("compare --format csv -o " + quoted(dir / "c.txt") + two);
  CHECK(both.exit_code == 2);
  CHECK(has(both.output, "the name says text, --format csv"));
  REQUIRE(run_memtopo("fleet -o " + quoted(dir / "f.json") + " " + quoted(kH100)).exit_code <= 1);
  CHECK(test::read_file(dir / "f.json").rfind("{", 0) == 0);
  const auto junit = run_memtopo("fleet --format junit -o " + quoted(dir / "f.txt") + " " + quoted(kH100));
  CHECK(junit.exit_code == 2);
  CHECK_FALSE(fs::exists(dir / "c.pdf"));
  CHECK_FALSE(fs::exists(dir / "f.txt"));
}
