// What the memtopo executable refuses before measuring, and how it says so (issue 18): a
// config path that is a folder, a device that is none of the allowed forms, `probes = []`, an
// unknown command, an empty --only entry, a --raw-dir that cannot be written, a simulated
// device too large to simulate (case 14).

#include "helpers.hpp"

namespace fs = std::filesystem;
using test::run_memtopo;

namespace {
using test::q;
using test::kGood;
using test::has;
}  // namespace

TEST_CASE("refusals: a config path that is a folder", "[host][cli][refusals]") {
  test::TempDir dir("refuse-config-dir");
  fs::create_directories(dir / "conf.toml");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim" + kGood + " --config " + q(dir / "conf.toml") + " -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, (dir / "conf.toml").string() + ": is a folder, not a regular file; name the config's TOML file (--config FILE)"));
  CHECK_FALSE(fs::exists(out));  // nothing ran "as if empty"
  CHECK(run_memtopo("plan" + kGood + " --config " + q(dir / "conf.toml")).exit_code == 2);
}

TEST_CASE("refusals: a device that is none of the forms names them", "[host][cli][refusals]") {
  test::TempDir dir("refuse-device");
  const auto out = dir / "t.toml";
  const std::string forms = "use auto, cuda, cuda:N (N a GPU number), sim or sim:FILE";
  SECTION("in the config: file:line and [run] device") {
    test::write_file(dir / "c.toml", "[run]\ndevice = \"gpu\"\n");
    const auto r = run_memtopo("run" + kGood + " --config " + q(dir / "c.toml") + " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "c.toml:2: [run] device: 'gpu' is not a device; " + forms));
    CHECK_FALSE(has(r.output, "regex"));
  }
  SECTION("on the command line: --device") {
    const auto r = run_memtopo("run --device gpu" + kGood + " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "--device: 'gpu' is not a device; " + forms));
    const auto p = run_memtopo("plan --device cuda:x" + kGood);
    CHECK(p.exit_code == 2);
    CHECK(has(p.output, "'cuda:x' is not a device; " + forms));
  }
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("refusals: probes = [] in the config is an error, not 'all'", "[host][cli][refusals]") {
  test::TempDir dir("refuse-empty-probes");
  const auto out = dir / "t.toml";
  test::write_file(dir / "c.toml", "[run]\n\nprobes = []\n");
  const auto r = run_memtopo("run --device sim" + kGood + " --config " + q(dir / "c.toml") + " -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "c.toml:3: [run] probes is empty; remove the key to run every probe, or name the probes to run"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("refusals: an unknown command is named, with the commands", "[host][cli][refusals]") {
  const auto r = run_memtopo("frobnicate --device sim");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "memtopo: unknown command 'frobnicate'; the commands are list, plan, run, validate"));
  CHECK_FALSE(has(r.output, "subcommand is required"));
  CHECK(run_memtopo("--version").exit_code == 0);  // options before a command still work
}

TEST_CASE("refusals: an empty --only or --skip entry is a usage error that takes nothing else", "[host][cli][refusals]") {
  test::TempDir dir("refuse-only");
  const auto out = dir / "t.toml";
  for (const std::string bad : {"--only ,", "--only ''", "--only t-basic/source,,t-fails", "--skip t-fails,"}) {
    const auto r = run_memtopo("run --device sim" + kGood + " " + bad + " -o " + q(out));
    INFO(bad << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, bad.substr(0, 6) + ": '"));
    CHECK(has(r.output, "has an empty entry; name probes, plugins or result keys separated by commas"));
    CHECK_FALSE(has(r.output, "-o,--output is required"));  // -o was not swallowed
  }
  CHECK_FALSE(fs::exists(out));
  // Comma lists and repeated options still select.
  const auto ok = run_memtopo("run --device sim -q" + kGood + " --only t-basic/source --only t-fails/broken,t-skips -o " +
                              q(out));
  INFO(ok.output);
  CHECK(ok.exit_code == 1);  // t-fails fails on purpose
  const std::string text = test::read_file(out);
  CHECK(has(text, "[probes.\"t-basic/source\"]"));
  CHECK(has(text, "[probes.\"t-fails/broken\"]"));
  CHECK(has(text, "[probes.\"t-skips/"));
  CHECK_FALSE(has(text, "[probes.\"t-basic/consumer\"]"));
}

TEST_CASE("refusals: a --raw-dir that cannot be written ends the run before measuring", "[host][cli][refusals]") {
  test::TempDir dir("refuse-raw");
  const auto out = dir / "t.toml";
  test::write_file(dir / "plain-file", "not a folder\n");
  SECTION("--raw-dir under a file") {
    const auto r = run_memtopo("run --device sim" + kGood + " --only t-basic/source --raw-dir " +
                               q(dir / "plain-file" / "raw") + " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "--raw-dir " + (dir / "plain-file" / "raw").string() + ": cannot create the folder: "));
    CHECK(has(r.output, "choose a folder you can write"));
  }
  SECTION("--raw-dir that is a file") {
    const auto r = run_memtopo("run --device sim" + kGood + " --only t-basic/source --raw-dir " + q(dir / "plain-file") +
                               " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "--raw-dir " + (dir / "plain-file").string() + ": "));
  }
  SECTION("[run] raw_dir in the config") {
    test::write_file(dir / "c.toml", "[run]\nraw_dir = \"plain-file/raw\"\n");
    const auto r = run_memtopo("run --device sim" + kGood + " --only t-basic/source --config " + q(dir / "c.toml") +
                               " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, (dir / "c.toml").string() + ": [run] raw_dir " + (dir / "plain-file" / "raw").string() +
                            ": cannot create the folder"));
  }
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(dir / "t.toml.journal"));
}

TEST_CASE("refusals: a raw series that fails to be written during the run makes the exit status 1", "[host][cli][refusals]") {
  test::TempDir dir("refuse-raw-late");
  const auto out = dir / "t.toml";
  fs::create_directories(dir / "raw");
  // The probe's own folder cannot be made: a file has its name.
  test::write_file(dir / "raw" / "t-basic__source", "in the way\n");
  const auto r = run_memtopo("run --device sim -q" + kGood + " --only t-basic/source --raw-dir " + q(dir / "raw") +
                             " -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "t-basic/source: raw series curve: cannot write " +
                          (dir / "raw" / "t-basic__source" / "curve.csv").string()));
  CHECK(has(test::read_file(out), "value_bytes = 42"));  // the results are still written
  // Without the obstacle the same run exits 0 and writes the series.
  fs::remove(dir / "raw" / "t-basic__source");
  const auto fine = run_memtopo("run --device sim -q" + kGood + " --only t-basic/source --raw-dir " + q(dir / "raw") +
                                " -o " + q(out));
  INFO(fine.output);
  CHECK(fine.exit_code == 0);
  CHECK(fs::exists(dir / "raw" / "t-basic__source" / "curve.csv"));
}

TEST_CASE("refusals: a simulated device with a huge cache ends the run before measuring, with file:line", "[host][cli][refusals]") {
  test::TempDir dir("refuse-huge-device");
  const auto out = dir / "t.toml";
  // Consistent (2^27 sets x 4 ways x 128 B) and 64 GiB: it allocated 19 GB before std::bad_alloc.
  test::write_file(dir / "huge.toml", "[device]\nsm_count = 4\n[l2]\nsize_bytes = 68719476736\nsets = 134217728\nways = 4\n");
  const auto r = run_memtopo("run --device sim:" + q(dir / "huge.toml") + kGood + " -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, (dir / "huge.toml").string() + ":4: l2.size_bytes: 68719476736 B (64 GiB) is more than the "
                                                     "simulator handles in one cache (4 GiB); check the value"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("refusals: a CSV export given for a topology says what it is and what to name", "[host][cli][refusals]") {
  test::TempDir dir("refuse-csv");
  const auto toml = dir / "t.toml", csv = dir / "t.csv";
  REQUIRE(run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + q(toml)).exit_code == 0);
  REQUIRE(run_memtopo("export --format csv " + q(toml) + " -o " + q(csv)).exit_code == 0);
  for (const char* command : {"validate ", "draw ", "export --format json "}) {
    const auto r = run_memtopo(std::string(command) + q(csv));
    INFO(command << r.output);
    CHECK(r.exit_code != 0);
    CHECK(has(r.output, "t.csv: a CSV table (`memtopo export --format csv` writes these), not a topology"));
    CHECK_FALSE(has(r.output, "TOML syntax error"));
  }
}
