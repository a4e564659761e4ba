// memtopo report: the command's own refusals (docs/report.md). The page itself is checked in a
// browser by tests/report/check_report.py.
#include <cstdlib>
#include <optional>

#include "helpers.hpp"

namespace {

// A "Python" that has no matplotlib: every `-c CODE` fails as an ImportError would.
test::fs::path fake_python_without_matplotlib(const test::TempDir& dir) {
  const auto path = dir / "python-without-matplotlib";
  test::write_file(path, "#!/bin/sh\necho \"ModuleNotFoundError: No module named 'matplotlib'\" >&2\nexit 1\n");
  test::fs::permissions(path, test::fs::perms::owner_all);
  return path;
}

const char* kTopology = "[meta]\nschema_version = 1\n\n[device]\nname = \"x\"\n";

}  // namespace

TEST_CASE("memtopo report without matplotlib says what to install and exits 2", "[report]") {
  test::TempDir dir("report-nompl");
  test::write_file(dir / "t.toml", kTopology);
  test::ScopedEnv python("MEMTOPO_PYTHON", fake_python_without_matplotlib(dir).string());
  const auto r = test::run_memtopo("report '" + (dir / "t.toml").string() + "' -o '" + (dir / "r.html").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("memtopo report needs Python 3 with matplotlib") != std::string::npos);
  CHECK(r.output.find("sudo apt-get install python3-matplotlib") != std::string::npos);
  CHECK(r.output.find("pip install matplotlib") != std::string::npos);
  CHECK(r.output.find("MEMTOPO_PYTHON") != std::string::npos);
  CHECK(r.output.find("python-without-matplotlib") != std::string::npos);  // what was tried
  CHECK_FALSE(test::fs::exists(dir / "r.html"));
}

TEST_CASE("each command that runs Python names itself when Python lacks matplotlib", "[report]") {
  test::TempDir dir("report-nompl-commands");
  const auto h100 = test::fs::path(MEMTOPO_HOST_TEST_DIR) / ".." / "report" / "inputs" / "h100" / "topology.toml";
  test::fs::create_directories(dir / "fleet");
  test::fs::copy_file(h100, dir / "fleet" / "t.toml");
  test::ScopedEnv python("MEMTOPO_PYTHON", fake_python_without_matplotlib(dir).string());
  const auto draw = test::run_memtopo("draw '" + (dir / "fleet" / "t.toml").string() + "' -o '" +
                                      (dir / "gpu.svg").string() + "'");
  CHECK(draw.exit_code == 2);
  CHECK(draw.output.find("memtopo draw needs Python 3 with matplotlib") != std::string::npos);
  CHECK(draw.output.find("memtopo report") == std::string::npos);
  const auto fleet = test::run_memtopo("fleet --report -o '" + (dir / "f.html").string() + "' '" +
                                       (dir / "fleet").string() + "'");
  CHECK(fleet.exit_code == 2);
  CHECK(fleet.output.find("memtopo fleet --report needs Python 3 with matplotlib") != std::string::npos);
  CHECK_FALSE(test::fs::exists(dir / "gpu.svg"));
  CHECK_FALSE(test::fs::exists(dir / "f.html"));
}

TEST_CASE("a TMPDIR that is not a folder is a usage error naming it, for each command that needs one",
          "[report]") {
  test::TempDir dir("report-tmpdir");
  const auto h100 = test::fs::path(MEMTOPO_HOST_TEST_DIR) / ".." / "report" / "inputs" / "h100" / "topology.toml";
  const std::string env = "TMPDIR='" + (dir / "no-such-folder").string() + "'";
  for (const std::string& args : {"draw '" + h100.string() + "' -o '" + (dir / "gpu.svg").string() + "'",
                                  "report '" + h100.string() + "' -o '" + (dir / "r.html").string() + "'"}) {
    const auto r = test::run_memtopo(args, {}, 0, env);
    INFO(args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("TMPDIR=" + (dir / "no-such-folder").string() + ": not a folder") != std::string::npos);
  }
  CHECK_FALSE(test::fs::exists(dir / "gpu.svg"));
  CHECK_FALSE(test::fs::exists(dir / "r.html"));
}

TEST_CASE("memtopo report names a missing topology file and exits 2", "[report]") {
  test::TempDir dir("report-missing");
  const auto missing = dir / "no-such-topology.toml";
  const auto r = test::run_memtopo("report '" + missing.string() + "' -o '" + (dir / "r.html").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(missing.string() + ": no such file") != std::string::npos);
  CHECK_FALSE(test::fs::exists(dir / "r.html"));
}

TEST_CASE("memtopo report shows a TOML syntax error as FILE:LINE:COL and exits 2", "[report]") {
  test::TempDir dir("report-syntax");
  const auto file = dir / "broken.toml";
  test::write_file(file, "[meta]\nschema_version = 1\n\n[device\nname = \"x\"\n");
  const auto r = test::run_memtopo("report '" + file.string() + "' -o '" + (dir / "r.html").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find(file.string() + ":4:") != std::string::npos);
  CHECK(r.output.find("TOML syntax error") != std::string::npos);
  CHECK_FALSE(test::fs::exists(dir / "r.html"));
}

TEST_CASE("memtopo report refuses a --raw-dir that is not a folder and a missing output folder", "[report]") {
  test::TempDir dir("report-paths");
  test::write_file(dir / "t.toml", kTopology);
  const std::string topo = "'" + (dir / "t.toml").string() + "'";
  auto r = test::run_memtopo("report " + topo + " --raw-dir '" + (dir / "nowhere").string() + "' -o '" +
                             (dir / "r.html").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--raw-dir " + (dir / "nowhere").string() + ": not a folder") != std::string::npos);
  r = test::run_memtopo("report " + topo + " -o '" + (dir / "no-folder" / "r.html").string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("does not exist") != std::string::npos);
}

TEST_CASE("memtopo report requires -o", "[report]") {
  const auto r = test::run_memtopo("report topology.toml");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--output") != std::string::npos);
}
