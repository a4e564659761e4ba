// Names are data, never markup or commands (docs/host.md, "Guarantees"): a device name, a
// driver string or a file name with a line break, ESC, BEL, CR, a pipe, HTML or U+202E reaches
// each output escaped for its format (terminal, CSV, Markdown, Accel-Sim config; the SVG and
// HTML of draw, report and fleet --report: tests/report/check_hostile_figures.py).
#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::has;
using test::quoted;
using test::run_memtopo;

namespace {

const fs::path kMeasured = fs::path(MEMTOPO_SOURCE_DIR) / "tests/sim/measured/h100-sxm.toml";
// In TOML escapes: a line break that would start an Accel-Sim option line, a colour and a
// bell, a carriage return, HTML, a Markdown pipe, and a right-to-left override.
const std::string kHostileName =
    "H100\\n-gpgpu_ptx_force_max_capability 99\\u001b[31mRED\\u0007\\r<script>x</script>|pipe\\u202eexe.toml";
const std::string kHostileDriver = "580\\u001b]0;title\\u0007\\u001b[2J<b>bold</b>&";

void replace_once(std::string& text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  REQUIRE(at != std::string::npos);
  text.replace(at, from.size(), to);
}

// The committed H100 run with the hostile device name (in [meta] and [device]) and driver.
fs::path hostile_topology(const test::TempDir& dir) {
  std::string text = test::read_file(kMeasured);
  replace_once(text, "device_name = \"NVIDIA H100 80GB HBM3\"", "device_name = \"" + kHostileName + "\"");
  replace_once(text, "\nname = \"NVIDIA H100 80GB HBM3\"", "\nname = \"" + kHostileName + "\"");
  for (size_t at; (at = text.find("GPU-f32de587")) != std::string::npos;) text[at + 11] = '8';  // another GPU
  replace_once(text, "nvidia_driver_version = \"580.159.04\"", "nvidia_driver_version = \"" + kHostileDriver + "\"");
  test::write_file(dir / "hostile.toml", text);
  return dir / "hostile.toml";
}

// A control character other than a line break, or U+202E as UTF-8.
bool has_raw_control(const std::string& text) {
  for (unsigned char c : text)
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
  return has(text, "\xE2\x80\xAE");
}

size_t lines_of(const std::string& text) { return size_t(std::count(text.begin(), text.end(), '\n')); }

}  // namespace

TEST_CASE("hostile names: the Accel-Sim export keeps a name inside its comment", "[host][hostile][export]") {
  test::TempDir dir("names-accel");
  const fs::path bad = hostile_topology(dir);
  REQUIRE(run_memtopo("export -o " + quoted(dir / "good.config") + " " + quoted(kMeasured)).exit_code == 0);
  const auto r = run_memtopo("export -o " + quoted(dir / "bad.config") + " " + quoted(bad));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const std::string config = test::read_file(dir / "bad.config");
  CHECK_FALSE(has(config, "\n-gpgpu_ptx_force_max_capability"));
  CHECK(has(config, "H100\\x0a-gpgpu_ptx_force_max_capability 99\\x1b[31mRED\\x07\\x0d"));
  CHECK_FALSE(has_raw_control(config));
  CHECK(lines_of(config) == lines_of(test::read_file(dir / "good.config")));
}

TEST_CASE("hostile names: CSV fields carry no control character", "[host][hostile][export][compare]") {
  test::TempDir dir("names-csv");
  const fs::path bad = hostile_topology(dir);
  REQUIRE(run_memtopo("export -o " + quoted(dir / "good.csv") + " " + quoted(kMeasured)).exit_code == 0);
  REQUIRE(run_memtopo("export -o " + quoted(dir / "bad.csv") + " " + quoted(bad)).exit_code == 0);
  const std::string csv = test::read_file(dir / "bad.csv");
  CHECK_FALSE(has_raw_control(csv));
  CHECK(has(csv, "device,name,H100\\x0a-gpgpu_ptx_force_max_capability"));
  CHECK(lines_of(csv) == lines_of(test::read_file(dir / "good.csv")));
  const auto good = run_memtopo("compare --format csv " + quoted(kMeasured) + " " + quoted(kMeasured));
  const auto r = run_memtopo("compare --format csv " + quoted(kMeasured) + " " + quoted(bad));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK_FALSE(has_raw_control(r.output));
  CHECK(lines_of(r.output) == lines_of(good.output));
}

TEST_CASE("hostile names: a Markdown cell is text, never a column, HTML or a bidi override",
          "[host][hostile][compare]") {
  test::TempDir dir("names-markdown");
  const fs::path bad = hostile_topology(dir);
  const auto r = run_memtopo("compare --format markdown " + quoted(kMeasured) + " " + quoted(bad));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.output, "&lt;script&gt;x&lt;/script&gt;\\|pipe\\\\u202eexe.toml"));
  CHECK_FALSE(has(r.output, "<script>"));
  CHECK_FALSE(has(r.output, "\\\\|"));
  CHECK_FALSE(has_raw_control(r.output));
}

TEST_CASE("hostile names: the terminal gets no control character and no bidi override",
          "[host][hostile][draw][diff]") {
  test::TempDir dir("names-terminal");
  const fs::path bad = hostile_topology(dir);
  for (const std::string& command :
       {"draw " + quoted(bad), "diff " + quoted(kMeasured) + " " + quoted(bad),
        "compare " + quoted(kMeasured) + " " + quoted(bad), "fleet " + quoted(kMeasured) + " " + quoted(bad)}) {
    const auto r = run_memtopo(command);
    INFO(command << "\n" << r.output);
    CHECK(r.exit_code <= 1);
    CHECK_FALSE(has_raw_control(r.output));
    CHECK(has(r.output, "\\u202e"));
  }
  const auto drawn = run_memtopo("draw " + quoted(bad));
  CHECK(has(drawn.output, "driver 580\\x1b]0;title\\x07\\x1b[2J<b>bold</b>&"));
}

TEST_CASE("hostile names: a config's error quotes a probe name escaped", "[host][hostile][config]") {
  test::TempDir dir("names-config");
  test::write_file(dir / "c.toml", "[probes.\"x\\u001b[2Jy\\u0007\"]\nsamples = 1\n");
  const auto r = run_memtopo("run --device sim --config " + quoted(dir / "c.toml") + " -o " + quoted(dir / "t.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "x\\x1b[2Jy\\x07"));
  CHECK_FALSE(has_raw_control(r.output));
}
