// Hostile but realistic input (issue 31): outputs that would destroy an input or a device
// node, readers given FIFOs, devices and huge files, options out of range, text that would
// break a CSV or a terminal. Each case failed before the classes behind it were fixed
// (docs/host.md, "Guarantees").
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::quoted;
using test::run_memtopo;

namespace {

using test::kGood;
const std::string kHostile = " --plugin-path " + quoted(test::plugin_set("hostile"));

using test::has;

// A topology measured on the simulated GPU (t-basic/source only).
fs::path small_topology(const test::TempDir& dir, const std::string& name = "t.toml") {
  const auto out = dir / name;
  const auto r = run_memtopo("run -q --device sim" + kGood + " --only t-basic/source -o " + quoted(out));
  REQUIRE(r.exit_code == 0);
  return out;
}

bool is_char_device(const fs::path& p) {
  struct stat st {};
  return ::stat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

TEST_CASE("hostile: report writes through a device node or a FIFO, never replaces it", "[host][faults][hostile]") {
  test::TempDir dir("hostile-report-node");
  const auto topo = small_topology(dir);
  test::ScopedEnv python("MEMTOPO_PYTHON", test::fake_report_python(dir).string());
  const auto r = run_memtopo("report " + quoted(topo) + " -o /dev/null");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(is_char_device("/dev/null"));

  const auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  std::string read_back;
  std::thread reader([&] { read_back = test::read_file(fifo); });
  const auto f = run_memtopo("report " + quoted(topo) + " -o " + quoted(fifo));
  reader.join();
  INFO(f.output);
  CHECK(f.exit_code == 0);
  CHECK(read_back == "<html>page</html>\n");
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
}

TEST_CASE("hostile: no command writes its output over one of its inputs", "[host][faults][hostile]") {
  test::TempDir dir("hostile-same-file");
  const auto topo = small_topology(dir);
  const std::string before = test::read_file(topo);
  test::ScopedEnv python("MEMTOPO_PYTHON", test::fake_report_python(dir).string());
  auto refused = [&](const std::string& args, const fs::path& input, const std::string& what) {
    const std::string kept = test::read_file(input);
    const auto r = run_memtopo(args);
    INFO(args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "is the same file as " + what));
    CHECK(test::read_file(input) == kept);
  };
  refused("report " + quoted(topo) + " -o " + quoted(topo), topo, "the topology");
  refused("export --format toml -o " + quoted(topo) + " " + quoted(topo), topo, "the topology");
  CHECK(test::read_file(topo) == before);

  test::write_file(dir / "cfg.toml", "[run]\nprobes = [\"t-basic/source\"]\n");
  refused("run --device sim" + kGood + " --config " + quoted(dir / "cfg.toml") + " -o " + quoted(dir / "cfg.toml"),
          dir / "cfg.toml", "--config");
  fs::create_symlink(dir / "cfg.toml", dir / "link.toml");
  refused("run --device sim" + kGood + " --config " + quoted(dir / "cfg.toml") + " -o " + quoted(dir / "link.toml"),
          dir / "cfg.toml", "--config");
  test::write_file(dir / "k.toml", "[device]\nsm_count = 4\n");
  refused("run --device sim:" + quoted(dir / "k.toml") + kGood + " --only t-basic/source -o " + quoted(dir / "k.toml"),
          dir / "k.toml", "the device description of --device");
}

TEST_CASE("hostile: --raw-dir that is the output, or empty, is a usage error before measuring",
          "[host][faults][hostile]") {
  test::TempDir dir("hostile-raw-dir");
  const auto same = dir / "same.toml";
  const auto r = run_memtopo("run --device sim" + kGood + " --only t-basic/source --raw-dir " + quoted(same) + " -o " +
                             quoted(same));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "--raw-dir " + same.string() + ": is the same file as -o"));
  CHECK_FALSE(fs::exists(same));
  CHECK_FALSE(has(r.output, "t-basic/source: ok"));

  const auto empty = run_memtopo("run --device sim" + kGood + " --raw-dir '' -o " + quoted(dir / "x.toml"));
  CHECK(empty.exit_code == 2);
  CHECK(has(empty.output, "--raw-dir: the folder name is empty"));
  test::write_file(dir / "cfg.toml", "[run]\nraw_dir = \"\"\n");
  const auto cfg = run_memtopo("run --device sim" + kGood + " --config " + quoted(dir / "cfg.toml") + " -o " +
                               quoted(dir / "x.toml"));
  CHECK(cfg.exit_code == 2);
  CHECK(has(cfg.output, "cfg.toml:2: [run] raw_dir is empty"));
  CHECK_FALSE(fs::exists(dir / "x.toml"));
}

TEST_CASE("hostile: every reader refuses a device, a FIFO and an oversized file at once", "[host][faults][hostile]") {
  test::TempDir dir("hostile-readers");
  const auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto big = dir / "big.toml";
  test::write_file(big, "");
  fs::resize_file(big, (64u << 20) + 1);  // sparse: costs no disk
  const auto out = quoted(dir / "o.toml");
  test::ScopedEnv python("MEMTOPO_PYTHON", test::fake_report_python(dir).string());
  for (const std::string& input : {std::string("/dev/zero"), fifo.string(), big.string()}) {
    const std::string why = input == big.string() ? "is larger than the 64 MiB an input may have"
                            : input == fifo.string() ? "is a FIFO, not a regular file"
                                                     : "is a character device, not a regular file";
    const std::string in = test::quoted(fs::path(input));
    for (const std::string& args :
         {"run --device sim:" + in + " -o " + out, "run --device sim --config " + in + " -o " + out,
          "validate " + in, "validate --device-description " + in,
          "report " + in + " -o " + quoted(dir / "r.html"), "diff " + in + " " + in,
          "export " + in}) {
      const auto r = run_memtopo(args, {}, 20);
      INFO(args << "\n" << r.output);
      CHECK(has(r.output, input + ": " + why));
      CHECK(r.exit_code == 2);
    }
  }
  CHECK_FALSE(fs::exists(dir / "o.toml"));
}

TEST_CASE("hostile: options out of their declared range are config errors naming the range", "[host][faults][hostile]") {
  test::TempDir dir("hostile-options");
  auto config_run = [&](const std::string& text, const std::string& plugins = kHostile) {
    test::write_file(dir / "cfg.toml", text);
    return run_memtopo("run --device sim" + plugins + " --config " + quoted(dir / "cfg.toml") + " -o " +
                       quoted(dir / "o.toml"));
  };
  for (const std::string& value : {"0", "11", "-3", "2000000000"}) {
    const auto r = config_run("[probes.\"t-hostile/columns\"]\ncount = " + value + "\n");
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "cfg.toml:2: [probes.\"t-hostile/columns\"] count must be between 1 and 10, got " + value));
  }
  CHECK(has(run_memtopo("list -v" + kHostile).output, "option count (integer, default \"3\", range 1..10)"));
  // The shipped probes whose options crashed a worker or were blamed on another option.
  for (const auto& [probe, option] : std::vector<std::pair<std::string, std::string>>{
           {"mlp/loads-in-flight", "max_chains = 0"},
           {"global-throughput/latency-spectrum", "rounds = 0"},
           {"global-throughput/latency-spectrum", "rounds = -3"},
           {"global-throughput/latency-spectrum", "rounds = 2000000000"},
           {"global-throughput/latency-spectrum", "max_footprint_bytes = -4096"}}) {
    const auto r = config_run("[probes.\"" + probe + "\"]\n" + option + "\n", "");
    INFO(option << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, option.substr(0, option.find(' ')) + " must be between"));
  }
  for (const std::string& table : {"[run]", "[probes.\"t-hostile/columns\"]"}) {
    const auto r = config_run(table + "\ntime_limit_s = 1e10\n");
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, "time_limit_s must be a number of seconds > 0 and at most 1e+06"));
  }
  CHECK_FALSE(fs::exists(dir / "o.toml"));
  memtopo::host::Registry reg;
  reg.load_directory(test::plugin_set("bad-range"));
  CHECK(reg.probes().empty());
  REQUIRE(reg.errors().size() == 1);
  CHECK(has(reg.errors()[0], "option rounds: the default is outside the range: rounds must be between 1 and 100, got 0"));
}

TEST_CASE("hostile: raw-series columns are quoted CSV, spreadsheet formulas defused, bad names fail the run",
          "[host][faults][hostile]") {
  test::TempDir dir("hostile-csv");
  const auto r = run_memtopo("run --device sim" + kHostile + " --only t-hostile --raw-dir " + quoted(dir / "raw") +
                             " -o " + quoted(dir / "o.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 1);  // the refused series name
  CHECK(has(r.output, "t-hostile/escape: raw series name '../../x' refused"));
  CHECK(test::read_file(dir / "raw" / "t-hostile__columns" / "curve.csv") ==
        "'=cmd|' /C calc'!A0,\"x,y\\x0a\"\"z\",'@sum,plain\n1.0,2.0,3.0,4.0\n");
  CHECK_FALSE(fs::exists(dir / "x.csv"));
  CHECK(has(test::read_file(dir / "o.toml"), "escape_bytes = 1"));  // the results are kept
}

TEST_CASE("hostile: control characters of a device name reach no terminal raw", "[host][faults][hostile]") {
  test::TempDir dir("hostile-terminal");
  test::write_file(dir / "dev.toml",
                   "[device]\nsm_count = 4\nname = \"\\u001b[2J\\u001b[31mPWN\\r\\nfake line\\u009b\"\n");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim:" + quoted(dir / "dev.toml") + " --only device-info -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(has(r.output, "\\x1b[2J\\x1b[31mPWN\\x0d\\x0afake line\\u009b"));
  CHECK_FALSE(has(r.output, "\x1b[2J"));
  CHECK_FALSE(has(r.output, "\r\nfake"));
  const auto d = run_memtopo("diff " + quoted(out) + " " + quoted(out));
  INFO(d.output);
  CHECK(d.exit_code == 0);
  CHECK(has(d.output, "\\x1b[2J"));
  CHECK_FALSE(has(d.output, "\x1b"));
}

TEST_CASE("hostile: validate and export give one verdict on a NaN", "[host][faults][hostile]") {
  test::TempDir dir("hostile-nan");
  const auto topo = small_topology(dir);
  std::string text = test::read_file(topo);
  text.replace(text.find("latency_cycles = 12.5"), 21, "latency_cycles = nan");
  test::write_file(topo, text);
  const auto v = run_memtopo("validate " + quoted(topo));
  INFO(v.output);
  CHECK(v.exit_code == 1);
  CHECK(has(v.output, "/t/latency_cycles: is nan: a topology holds finite numbers only"));
  const auto e = run_memtopo("export --format json " + quoted(topo));
  CHECK(e.exit_code == 1);
  CHECK(has(e.output, "/t/latency_cycles: is nan"));
}

TEST_CASE("hostile: report refuses a file with nothing to report and a folder as -o before plotting",
          "[host][faults][hostile]") {
  test::TempDir dir("hostile-report-empty");
  test::ScopedEnv python("MEMTOPO_PYTHON", test::fake_report_python(dir).string());
  const std::string meta = "[meta]\nschema_version = 1\n";
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"", "no [meta] table"},
           {meta, "holds no measured values"},
           {meta + "[l1d]\n", "holds no measured values"},
           {"[device]\nsm_count = 4\n", "this looks like a simulated device description"}}) {
    test::write_file(dir / "in.toml", text);
    const auto r = run_memtopo("report " + quoted(dir / "in.toml") + " -o " + quoted(dir / "r.html"));
    INFO(text << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, why));
    CHECK_FALSE(fs::exists(dir / "r.html"));
  }
  const auto topo = small_topology(dir);
  fs::create_directory(dir / "folder");
  const auto r = run_memtopo("report " + quoted(topo) + " -o " + quoted(dir / "folder"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "is a folder; name the output file"));
  CHECK_FALSE(has(r.output, "wrote page"));
}

TEST_CASE("hostile: messages name the problem, not a library's internals", "[host][faults][hostile]") {
  test::TempDir dir("hostile-messages");
  const std::string long_name(255, 'a');
  const auto n = run_memtopo("run --device sim" + kGood + " --only t-basic/source -o " + quoted(dir / long_name));
  CHECK(n.exit_code == 2);
  CHECK(has(n.output, "the file name is 255 bytes long"));
  CHECK_FALSE(has(n.output, "must be writable"));

  const auto g = run_memtopo("run --device cuda:99999999999999999999" + kGood + " -o " + quoted(dir / "o.toml"));
  CHECK(g.exit_code == 2);
  CHECK(has(g.output, "there is no GPU 99999999999999999999"));
  CHECK_FALSE(has(g.output, "stoi"));

  const auto topo = small_topology(dir);
  const auto t = run_memtopo("diff --tolerance-percent -1 " + quoted(topo) + " " + quoted(topo));
  CHECK(t.exit_code == 2);
  CHECK(has(t.output, "'-1' is not a percentage from 0 to 100"));
  CHECK(t.output.size() < 300);

  test::write_file(dir / "cfg.toml", "[run]\nprobes = [1, 2]\n");
  const auto p = run_memtopo("run --device sim" + kGood + " --config " + quoted(dir / "cfg.toml") + " -o " +
                             quoted(dir / "o.toml"));
  CHECK(p.exit_code == 2);
  CHECK(has(p.output, "[run] probes entries must be strings"));
  CHECK_FALSE(has(p.output, "probes is empty"));
}
