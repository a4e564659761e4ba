// Hostile and careless input to fleets (issue 50): files nested 50,000 levels deep, names that
// are not UTF-8, launcher variables that are no ranks, a GPU counted twice, NaN where a range
// or a number belongs, text XML does not allow, a missing TMPDIR. Each case crashed, aborted
// or misled before the class behind it was fixed (docs/host.md, "Guarantees").
#include <atomic>
#include <cmath>
#include <new>
#include <regex>
#include <set>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "cli/cli_internal.hpp"
#include "../common/xml_characters.hpp"
#include "helpers.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/values/nesting.hpp"
#include "run/running/probe_executor.hpp"
#include "run/running/runner.hpp"
#include "topology/document/summary.hpp"
#include "topology/base/text_encoding.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using test::has;
using test::quoted;
using test::run_memtopo;

namespace {

// One topology of the simulated GPU (device-info only), as text.
std::string sim_topology_text(const test::TempDir& dir) {
  const auto out = dir / "measured.toml";
  const auto r = run_memtopo("run -q --device sim --only device-info -o " + quoted(out));
  REQUIRE(r.exit_code == 0);
  const std::string text = test::read_file(out);
  fs::remove(out);
  return text;
}

// `text` with [device] given `uuid` (an identity, as device-info records it) and `l2_bytes`
// (the value one GPU may get wrong).
std::string gpu_file(std::string text, const std::string& uuid, const std::string& l2_bytes = "2097152") {
  text = std::regex_replace(text, std::regex("\\[device\\]\n"), "[device]\nuuid = \"" + uuid + "\"\n");
  text = std::regex_replace(text, std::regex("\\[provenance.device\\]\n"),
                            "[provenance.device]\nuuid = { probe = \"device-info/properties\", confidence = 1.0, "
                            "bound = \"exact\", class = \"identity\" }\n");
  return std::regex_replace(text, std::regex("\nl2_bytes = [0-9]+"), "\nl2_bytes = " + l2_bytes);
}


}  // namespace

TEST_CASE("hostile fleet: files nested 50,000 levels deep are named, the rest compared", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-fleet-deep");
  const std::string base = sim_topology_text(dir);
  test::write_file(dir / "a.toml", gpu_file(base, "GPU-a"));
  test::write_file(dir / "b.toml", gpu_file(base, "GPU-b"));
  std::string deep_json;
  for (int i = 0; i < 50000; ++i) deep_json += "{\"a\":";
  deep_json += "1" + std::string(50000, '}');
  REQUIRE(deep_json.size() > 300000);
  test::write_file(dir / "deep.json", deep_json);
  std::string header = "[a";
  for (int i = 0; i < 50000; ++i) header += ".a";
  test::write_file(dir / "deep-header.toml", header + "]\nx = 1\n");
  std::string dotted = "a";
  for (int i = 0; i < 50000; ++i) dotted += " . a";
  test::write_file(dir / "deep-key.toml", dotted + " = 1\n");
  test::write_file(dir / "deep-array.toml", "x = " + std::string(50000, '[') + std::string(50000, ']') + "\n");
  const auto r = run_memtopo("fleet " + quoted(dir.path));
  INFO(r.output);
  CHECK(r.exit_code == 2);  // inputs that are no topology: named, the others compared
  for (const char* name : {"deep.json: nested deeper than 64", "deep-header.toml:1: nested deeper than 64",
                           "deep-key.toml:1: nested deeper than 64", "deep-array.toml:1: nested deeper than 64"})
    CHECK(has(r.output, name));
  CHECK(has(r.output, "2 GPUs in 1 group, 0 flagged"));
  // Every other reader of TOML meets the same bound: validate, diff, a config, a profile, and
  // the simulated-device description's reader (in the worker that opens the device).
  const std::string deep_key = quoted(dir / "deep-key.toml"), deep_header = quoted(dir / "deep-header.toml");
  const struct {
    std::string args, file;
  } readers[] = {{"validate " + deep_key, "deep-key.toml"},
                 {"diff " + quoted(dir / "a.toml") + " " + deep_header, "deep-header.toml"},
                 {"plan --device sim --config " + deep_key, "deep-key.toml"},
                 {"fleet --profile " + deep_header + " " + quoted(dir / "a.toml"), "deep-header.toml"},
                 {"run --device sim:" + deep_key + " -o " + quoted(dir / "o.toml"), "deep-key.toml"}};
  for (const auto& reader : readers) {
    const auto out = run_memtopo(reader.args);
    INFO(reader.args << "\n" << out.output);
    CHECK(out.exit_code == 2);
    CHECK(has(out.output, reader.file + ":1: nested deeper than 64"));
    CHECK_FALSE(has(out.output, "SIGSEGV"));
  }
}

TEST_CASE("hostile fleet: the nesting bound counts what the parser would nest", "[host][hostile][fleet]") {
  using memtopo::host::toml_too_deep_at;
  auto chain = [](size_t n, const std::string& sep) {
    std::string s = "a";
    for (size_t i = 1; i < n; ++i) s += sep + "a";
    return s;
  };
  CHECK_FALSE(toml_too_deep_at("[" + chain(30, ".") + "]\n" + chain(30, ".") + " = 1\n"));
  CHECK(toml_too_deep_at("[" + chain(40, ".") + "]\n" + chain(40, ".") + " = 1\n") == 2u);
  CHECK(toml_too_deep_at("x = 1\n\n" + chain(70, " . ") + " = 1\n") == 3u);
  // Dots and brackets in strings, comments and numbers nest nothing.
  std::string floats = "x = [";
  for (int i = 0; i < 1000; ++i) floats += "1.5, ";
  CHECK_FALSE(toml_too_deep_at(floats + "2.5]\ny = \"" + chain(100, ".") + "[[[[\"\n# " + chain(100, ".") +
                               "\nz = '''\n" + chain(100, ".") + "\n'''\n"));
  CHECK(toml_too_deep_at("x = " + std::string(65, '[') + std::string(65, ']')));
  CHECK_THROWS_WITH(memtopo::host::parse_json_bounded(std::string(65, '[') + std::string(65, ']'), "f.json"),
                    Catch::Contains("f.json: nested deeper than 64 levels"));
  CHECK(memtopo::host::parse_json_bounded(std::string(60, '[') + std::string(60, ']'), "f.json").is_array());
}

TEST_CASE("hostile fleet: a file name that is not UTF-8 is shown escaped in JSON and the page", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-fleet-name");
  const std::string base = sim_topology_text(dir);
  test::write_file(dir / "a.toml", gpu_file(base, "GPU-a"));
  test::write_file(dir / "gpu-\xff\xfe.toml", gpu_file(base, "GPU-b"));
  const auto json = run_memtopo("fleet --format json -o " + quoted(dir / "fleet.json") + " " + quoted(dir.path));
  INFO(json.output);
  CHECK(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(test::read_file(dir / "fleet.json"));
  std::set<std::string> files;
  for (const auto& g : doc["gpus"]) files.insert(g["file"].get<std::string>());
  CHECK(files.count((dir / "gpu-\\xff\\xfe.toml").string()) == 1);
  test::ScopedEnv python("MEMTOPO_PYTHON", test::fake_report_python(dir).string());
  const auto page = run_memtopo("fleet --report -o " + quoted(dir / "fleet.html") + " " + quoted(dir.path));
  INFO(page.output);
  CHECK(page.exit_code == 0);
  CHECK(fs::exists(dir / "fleet.html"));
}

TEST_CASE("hostile fleet: a TMPDIR that does not exist gives a message, never an abort", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-fleet-tmpdir");
  const std::string base = sim_topology_text(dir);
  test::write_file(dir / "a.toml", gpu_file(base, "GPU-a"));
  test::ScopedEnv python("MEMTOPO_PYTHON", test::fake_report_python(dir).string());
  const std::string env = "TMPDIR=" + (dir / "no-such-folder").string();
  for (const std::string& command : {"draw " + quoted(dir / "a.toml") + " -o " + quoted(dir / "x.svg"),
                                     "report " + quoted(dir / "a.toml") + " -o " + quoted(dir / "x.html"),
                                     "fleet --report -o " + quoted(dir / "f.html") + " " + quoted(dir / "a.toml")}) {
    const auto r = run_memtopo(command, {}, 0, env);
    INFO(command << "\n" << r.output);
    // A clear message naming TMPDIR (exit 2), or a fallback to /tmp with a note (exit 0).
    CHECK((r.exit_code == 2 || r.exit_code == 0));
    CHECK(has(r.output, "TMPDIR"));
    CHECK_FALSE(has(r.output, "terminate called"));
  }
}

TEST_CASE("hostile: every exception reaching the top level gets a message and an exit status",
          "[host][hostile][cli]") {
  using memtopo::host::cli::report_unexpected_error;
  namespace c = memtopo::host;  // the exit statuses (topology/base/usage_error.hpp)
  CHECK(report_unexpected_error(std::make_exception_ptr(std::bad_alloc())) == c::kExitIncomplete);
  CHECK(report_unexpected_error(std::make_exception_ptr(std::out_of_range("stoi"))) == c::kExitIncomplete);
  CHECK(report_unexpected_error(std::make_exception_ptr(
            fs::filesystem_error("temp_directory_path", std::make_error_code(std::errc::no_such_file_or_directory)))) ==
        c::kExitUsage);
  try {
    (void)nlohmann::json("\xff").dump();
  } catch (...) {
    CHECK(report_unexpected_error(std::current_exception()) == c::kExitIncomplete);
  }
  CHECK(report_unexpected_error(std::make_exception_ptr(42)) == c::kExitIncomplete);
}

TEST_CASE("hostile: launcher variables that are no ranks stop the run naming them", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-ranks");
  const std::string run = "run -q --device sim --only device-info -o " + quoted(dir / "o.toml");
  const std::string slurm = "SLURM_STEP_ID=0 SLURM_NODEID=0 ";
  for (const auto& [env, shown] : std::vector<std::pair<std::string, std::string>>{
           {slurm + "SLURM_LOCALID=0 SLURM_STEP_TASKS_PER_NODE=99999999999999",
            "SLURM_STEP_TASKS_PER_NODE=99999999999999: not a list of task counts"},
           {slurm + "SLURM_LOCALID=0 'SLURM_STEP_TASKS_PER_NODE=2(x99999999999)'",
            "SLURM_STEP_TASKS_PER_NODE=2(x99999999999): not a list of task counts"},
           {slurm + "SLURM_STEP_TASKS_PER_NODE=2 SLURM_LOCALID=abc", "SLURM_LOCALID=abc: not a whole number"},
           {slurm + "SLURM_STEP_TASKS_PER_NODE=2 SLURM_LOCALID=-1", "SLURM_LOCALID=-1: not a whole number"},
           {slurm + "SLURM_STEP_TASKS_PER_NODE=2 SLURM_LOCALID=99999999999999999999",
            "SLURM_LOCALID=99999999999999999999: not a whole number"},
           {slurm + "SLURM_STEP_TASKS_PER_NODE=2 SLURM_LOCALID=5", "SLURM_LOCALID=5: beyond the 2 tasks"},
           {"OMPI_COMM_WORLD_LOCAL_RANK=abc OMPI_COMM_WORLD_LOCAL_SIZE=2", "OMPI_COMM_WORLD_LOCAL_RANK=abc: not a whole"},
           {"OMPI_COMM_WORLD_SIZE=abc", "OMPI_COMM_WORLD_SIZE=abc: not a whole"}}) {
    const auto r = run_memtopo(run, {}, 0, env);
    INFO(env << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, shown));
    CHECK_FALSE(fs::exists(dir / "o.toml"));
  }
  // A one-GPU run without a launcher's variables is unaffected.
  const auto plain = run_memtopo(run, {}, 0,
                                 "-u SLURM_STEP_ID -u SLURM_LOCALID -u SLURM_STEP_TASKS_PER_NODE -u "
                                 "OMPI_COMM_WORLD_LOCAL_RANK -u OMPI_COMM_WORLD_SIZE");
  INFO(plain.output);
  CHECK(plain.exit_code == 0);
  CHECK(fs::exists(dir / "o.toml"));
}

TEST_CASE("hostile fleet: each GPU counts once, so a duplicate cannot move the majority", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-fleet-dup");
  const std::string base = sim_topology_text(dir);
  fs::create_directories(dir / "runs");
  test::write_file(dir / "runs" / "good1.toml", gpu_file(base, "GPU-good-1"));
  test::write_file(dir / "runs" / "good2.toml", gpu_file(base, "GPU-good-2"));
  const std::string slow = gpu_file(base, "GPU-slow", "1572864");
  test::write_file(dir / "runs" / "slow.toml", slow);
  // The slow GPU's rerun, copied beside the first: the same UUID, a later time.
  test::write_file(dir / "slow-rerun.toml",
                   std::regex_replace(slow, std::regex("created_utc = [0-9T:Z-]+"), "created_utc = 2099-01-01T00:00:00Z"));
  // The folder, its slow file named again, and the rerun: five files, three GPUs.
  const auto r = run_memtopo("fleet " + quoted(dir / "runs") + " " + quoted(dir / "runs" / "slow.toml") + " " +
                             quoted(dir / "slow-rerun.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(has(r.output, "3 GPUs in 1 group, 1 flagged"));
  CHECK(has(r.output, "slow.toml: named twice; counted once"));
  CHECK(has(r.output, "GPU-slow: 2 files of one GPU"));
  CHECK(has(r.output, "counted once, from " + (dir / "slow-rerun.toml").string()));
  CHECK(run_memtopo("fleet --format json -o " + quoted(dir / "f.json") + " " + quoted(dir / "runs") + " " +
                    quoted(dir / "slow-rerun.toml"))
            .exit_code == 1);
  const auto json = nlohmann::json::parse(test::read_file(dir / "f.json"));
  CHECK(json["gpus"].size() == 3);
  for (const auto& gpu : json["gpus"]) CHECK(gpu["flagged"] == (gpu["uuid"] == "GPU-slow"));
}

// A host named fleetnode01 names its GPUs' files fleetnode01-*.toml; the report a fleet wrote
// into the folder is known by what it holds and skipped, named, when the folder is read again.
TEST_CASE("hostile fleet: files named fleet* are read, a fleet report in the folder is skipped", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-fleet-names");
  for (const char* gpu : {"0", "1"})
    test::write_file(dir / ("fleetnode01-gpu" + std::string(gpu) + ".toml"),
                     gpu_file(sim_topology_text(dir), "GPU-fleet-" + std::string(gpu)));
  REQUIRE(run_memtopo("fleet --format json -o " + quoted(dir / "fleet.json") + " " + quoted(dir.path)).exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(dir / "fleet.json"))["gpus"].size() == 2);
  const auto again = run_memtopo("fleet " + quoted(dir.path));
  INFO(again.output);
  CHECK(again.exit_code == 0);
  CHECK(has(again.output, "2 GPUs in 1 group, 0 flagged"));
  CHECK(has(again.output, "fleet.json: a fleet report (`memtopo fleet --format json`), not a topology file: skipped"));
  // Named on the command line, a report is no topology: an error naming it.
  const auto named = run_memtopo("fleet " + quoted(dir / "fleet.json") + " " + quoted(dir / "fleetnode01-gpu0.toml"));
  CHECK(named.exit_code != 0);
  CHECK(has(named.output, "not a topology file"));
}

TEST_CASE("hostile fleet: NaN passes no range check", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-nan-range");
  const auto fleet = run_memtopo("fleet --spread-factor nan " + quoted(dir.path));
  CHECK(fleet.exit_code == 2);
  CHECK(has(fleet.output, "'nan' is not a spread factor from 1 to 100"));
  for (const std::string& v : {"inf", "0.5", "5x"}) CHECK(run_memtopo("fleet --spread-factor " + v + " x").exit_code == 2);
  test::write_file(dir / "cfg.toml", "[probes.\"data-cache/l1d-eviction-sets\"]\npool_factor = nan\n");
  const auto config = run_memtopo("run --device sim --config " + quoted(dir / "cfg.toml") + " -o " + quoted(dir / "o.toml"));
  INFO(config.output);
  CHECK(config.exit_code == 2);
  CHECK(has(config.output, "pool_factor must be between 1.0 and 16.0, got nan"));
  CHECK_FALSE(fs::exists(dir / "o.toml"));
}

TEST_CASE("hostile fleet: a value no topology may hold makes the file refused, by key", "[host][hostile][fleet]") {
  test::TempDir dir("hostile-fleet-values");
  const std::string base = sim_topology_text(dir);
  test::write_file(dir / "good1.toml", gpu_file(base, "GPU-1"));
  test::write_file(dir / "good2.toml", gpu_file(base, "GPU-2"));
  const std::vector<std::pair<std::string, std::string>> bad{{"nan", "sm_clock_khz = nan"},
                                                              {"string", "l2_bytes = \"2 MiB\""},
                                                              {"boolean", "l2_bytes = true"},
                                                              {"date", "l2_bytes = 1979-05-27"}};
  for (const auto& [name, line] : bad) {
    const std::string key = line.substr(0, line.find(' '));
    test::write_file(dir / (name + ".toml"),
                     std::regex_replace(gpu_file(base, "GPU-" + name), std::regex("\n" + key + " = [0-9]+"), "\n" + line));
  }
  test::write_file(dir / "nan.json", "{\"meta\": {\"schema_version\": 1}, \"device\": {\"l2_bytes\": \"x\"}}");
  const auto r = run_memtopo("fleet " + quoted(dir.path));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "nan.toml: /device/sm_clock_khz: is nan"));
  CHECK(has(r.output, "string.toml: /device/l2_bytes: expected an integer >= 0"));
  CHECK(has(r.output, "boolean.toml: /device/l2_bytes: expected an integer >= 0"));
  CHECK(has(r.output, "date.toml: /device/l2_bytes: expected an integer >= 0"));
  CHECK(has(r.output, "nan.json: /"));
  CHECK(has(r.output, "2 GPUs in 1 group, 0 flagged"));
}

TEST_CASE("hostile fleet: JUnit XML stays well-formed with any name", "[host][hostile][fleet]") {
  using memtopo::host::xml_escaped;
  CHECK(xml_escaped("a\xEF\xBF\xBE" "b\xEF\xBF\xBF" "c\x01" "d\xED\xA0\x80" "e\xFF<&>\"") ==
        "a\xEF\xBF\xBD" "b\xEF\xBF\xBD" "c\xEF\xBF\xBD" "d\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD" "e\xEF\xBF\xBD&lt;&amp;&gt;&quot;");
  CHECK(xml_escaped("tab\there, \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80") == "tab\there, \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80");
  test::TempDir dir("hostile-fleet-junit");
  std::string base = sim_topology_text(dir);
  base = std::regex_replace(base, std::regex("\nname = \"[^\"]*\""), "\nname = \"GPU \\uFFFE\\uFFFF \\u0001 \\u001b[2J <x>\"");
  base = std::regex_replace(base, std::regex("\nhost = \"[^\"]*\""), "\nhost = \"node\\uFFFF\"");
  // Two GPUs alike and one of another L2 size: that one is flagged (of two, neither would be).
  test::write_file(dir / "a.toml", gpu_file(base, "GPU-a"));
  test::write_file(dir / "c.toml", gpu_file(base, "GPU-c"));
  test::write_file(dir / "b.toml", gpu_file(base, "GPU-b", "1048576"));
  const auto r = run_memtopo("fleet --format junit -o " + quoted(dir / "f.xml") + " " + quoted(dir / "a.toml") + " " +
                             quoted(dir / "b.toml") + " " + quoted(dir / "c.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  const std::string xml = test::read_file(dir / "f.xml");
  CHECK(test::xml_characters_allowed(xml));
  CHECK(has(xml, "GPU \xEF\xBF\xBD\xEF\xBF\xBD \xEF\xBF\xBD \xEF\xBF\xBD[2J &lt;x&gt;"));
  CHECK(std::count(xml.begin(), xml.end(), '<') - std::count(xml.begin(), xml.end(), '>') == 0);
  // A parser's verdict where one is at hand.
  if (std::system("python3 -c 'import xml.dom.minidom' 2>/dev/null") == 0)
    CHECK(std::system(("python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' " +
                       quoted(dir / "f.xml")).c_str()) == 0);
}

TEST_CASE("hostile: a latency of 1e308 is printed compactly, with its unit", "[host][hostile][summary]") {
  using memtopo::host::format_cycles;
  CHECK(format_cycles(1e308) == "1e+308 cyc");
  CHECK(format_cycles(-1e308) == "-1e+308 cyc");
  CHECK(format_cycles(33.06) == "33.1 cyc");
  CHECK(format_cycles(999999.0) == "999999.0 cyc");
  CHECK(format_cycles(2.5e6) == "2.5e+06 cyc");
}

namespace {

int fails_when_cancelled(const mt_context*, void*, char* message, size_t size) {
  std::snprintf(message, size, "cancelled");  // what the SDK's Measurer reports
  return MT_STATUS_FAILED;
}

}  // namespace

TEST_CASE("hostile: a probe that fails because the run was interrupted is recorded as skipped",
          "[host][hostile][runner]") {
  using namespace memtopo::host;
  ProbeInfo p;
  p.name = "t/stops";
  p.plugin_version = "1.0.0";
  p.run = fails_when_cancelled;
  mt_device_info device{};
  device.struct_size = sizeof device;
  std::atomic<bool> cancel{true};
  RunSettings settings;
  settings.cancel = &cancel;
  const ProbeOutcome interrupted = run_probe(p, device, nullptr, settings, {});
  CHECK(interrupted.status == Status::Skipped);
  CHECK(interrupted.reason == "interrupted: cancelled");
  cancel = false;  // without a stop, a failure stays one
  const ProbeOutcome failed = run_probe(p, device, nullptr, settings, {});
  CHECK(failed.status == Status::Failed);
  CHECK(failed.reason == "cancelled");
}
