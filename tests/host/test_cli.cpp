// The memtopo executable: exit codes and what it writes (0 ok, 1 incomplete, 2 usage/config).
#include <memtopo/abi.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "helpers.hpp"
#include "run/output/journal.hpp"
#include "topology/document/role_index.hpp"

namespace fs = std::filesystem;
using test::run_memtopo;

namespace {
using test::q;
using test::kGood;
}  // namespace

TEST_CASE("memtopo --version", "[host][cli]") {
  const auto r = run_memtopo("--version");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("memtopo 0.1.0") != std::string::npos);
}

TEST_CASE("run on the simulator writes a file that validate accepts", "[host][cli]") {
  test::TempDir dir("cli-run");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim --only device-info -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  REQUIRE(fs::exists(out));
  CHECK_FALSE(fs::exists(memtopo::host::journal_path_for(out)));  // removed after the final write
  const std::string text = test::read_file(out);
  CHECK(text.find("backend = \"sim\"") != std::string::npos);
  CHECK(text.find("[device]") != std::string::npos);
  CHECK(text.find("[probes.\"device-info/properties\"]") != std::string::npos);
  const auto v = run_memtopo("validate " + q(out));
  INFO(v.output);
  CHECK(v.exit_code == 0);
}

TEST_CASE("run --device sim:NAME runs a shipped preset, and a name no preset has lists the presets", "[host][cli]") {
  test::TempDir dir("cli-preset");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run -q --device sim:kepler-like --only device-info -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  REQUIRE(fs::exists(out));
  CHECK(test::read_file(out).find("Kepler-like") != std::string::npos);
  const auto bad = run_memtopo("run -q --device sim:kepler-lik --only device-info -o " + q(dir / "u.toml"));
  INFO(bad.output);
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("no simulated-device preset") != std::string::npos);
  CHECK(bad.output.find("kepler-like") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "u.toml"));
}

TEST_CASE("failed and skipped probes: exit 1, the file is still written", "[host][cli]") {
  test::TempDir dir("cli-fail");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim -q" + kGood + " --only t-fails,t-basic/source -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  REQUIRE(fs::exists(out));
  const std::string text = test::read_file(out);
  CHECK(text.find("status = \"failed\"") != std::string::npos);
  CHECK(text.find("whose provider t-fails/broken failed: the test probe fails on purpose") != std::string::npos);
  CHECK(text.find("value_bytes = 42") != std::string::npos);
  CHECK(run_memtopo("validate " + q(out)).exit_code == 0);
}

TEST_CASE("a junk .so in --plugin-path is reported by name and the run completes", "[host][cli]") {
  test::TempDir dir("cli-junk");
  fs::create_directories(dir / "plugins");
  test::write_file(dir / "plugins" / "junk.so", "plain text\n");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim --only device-info --plugin-path " + q(dir / "plugins") + " -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("junk.so: not a shared library") != std::string::npos);
  CHECK(fs::exists(out));
}

TEST_CASE("config errors exit 2 and write nothing", "[host][cli]") {
  test::TempDir dir("cli-config");
  const auto out = dir / "t.toml";
  SECTION("unknown probe") {
    test::write_file(dir / "c.toml", "[run]\nprobes = [\"device-info\", \"no-such\"]\n");
    const auto r = run_memtopo("run --device sim --config " + q(dir / "c.toml") + " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("c.toml:2: [run] probes: unknown probe, plugin or result key 'no-such'") != std::string::npos);
  }
  SECTION("syntax error") {
    test::write_file(dir / "c.toml", "[run]\ndevice = \"sim\n");
    const auto r = run_memtopo("run --config " + q(dir / "c.toml") + " -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("c.toml:2:") != std::string::npos);
  }
  CHECK_FALSE(fs::exists(out));
  CHECK_FALSE(fs::exists(memtopo::host::journal_path_for(out)));
}

TEST_CASE("usage errors exit 2 and write nothing", "[host][cli]") {
  test::TempDir dir("cli-usage");
  const auto out = dir / "t.toml";
  CHECK(run_memtopo("run --device sim").exit_code == 2);  // no -o
  CHECK(run_memtopo("frobnicate").exit_code == 2);
  CHECK(run_memtopo("run --device warp-drive -o " + q(out)).exit_code == 2);
  CHECK(run_memtopo("run --device sim --only nothing-like-this -o " + q(out)).exit_code == 2);
  CHECK(run_memtopo("run --device sim --plugin-path /nonexistent/dir -o " + q(out)).exit_code == 2);
  CHECK(run_memtopo("run --device sim -o " + q(dir / "no-folder" / "t.toml")).exit_code == 2);
  const auto cyc = run_memtopo("run --device sim --plugin-path " + q(test::plugin_set("cycle")) + " -o " + q(out));
  CHECK(cyc.exit_code == 2);
  CHECK(cyc.output.find("dependency cycle: t-cycle/a needs t.b_bytes from t-cycle/b") != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("list and plan", "[host][cli]") {
  const auto l = run_memtopo("list" + kGood);
  CHECK(l.exit_code == 0);
  // Names are padded to the longest loaded one.
  const std::regex consumer("t-basic/consumer +1\\.2\\.3  ");
  CHECK(std::regex_search(l.output, consumer));
  CHECK(l.output.find("provides:") == std::string::npos);  // one line per probe; -v has the rest
  const auto v = run_memtopo("list -v" + kGood);
  CHECK(std::regex_search(v.output, consumer));
  CHECK(v.output.find("    provides: t.double_bytes, t.saw_optional\n    requires: t.value_bytes\n") !=
        std::string::npos);
  const auto bad = run_memtopo("list --plugin-path " + q(test::plugin_set("bad")));
  CHECK(bad.output.find("loading errors:") != std::string::npos);
  CHECK(bad.output.find("t-abi-major.so: built for ABI " + std::to_string(MEMTOPO_ABI_MAJOR + 1) + "." + std::to_string(MEMTOPO_ABI_MINOR) + ", host supports " +
                        std::to_string(MEMTOPO_ABI_MAJOR) + "." + std::to_string(MEMTOPO_ABI_MINOR)) != std::string::npos);

  const auto p = run_memtopo("plan" + kGood + " --only t-basic/consumer");
  INFO(p.output);
  CHECK(p.exit_code == 0);
  CHECK(p.output.find("1. t-basic/source  (pulled in: provides t.value_bytes for t-basic/consumer)") !=
        std::string::npos);
  CHECK(p.output.find("2. t-basic/consumer") != std::string::npos);
  CHECK(p.output.find("time: no estimate without --timings TOPOLOGY") != std::string::npos);
  // --timings: each probe's duration as a file recorded it, and their total.
  test::TempDir dir("cli-plan-timings");
  const auto earlier = dir / "earlier.toml";
  test::write_file(earlier, "[meta]\nschema_version = 1\n[probes.\"t-basic/source\"]\nversion = \"1.0.0\"\n"
                            "status = \"ok\"\nduration_s = 2.5\n");
  const auto t = run_memtopo("plan" + kGood + " --only t-basic/consumer --timings " + q(earlier));
  INFO(t.output);
  CHECK(t.exit_code == 0);
  CHECK(t.output.find("1. t-basic/source  2.5 s  (pulled in") != std::string::npos);
  CHECK(t.output.find("time: about 2.5 s, the durations " + earlier.string() + " recorded for 1 of the 2 probes (the "
                      "others: not in it") != std::string::npos);
  CHECK(t.output.find("recorded on") == std::string::npos);  // no device named: nothing to tell apart
  // Another device's durations: the line says whose they are.
  const auto gpu = dir / "gpu.toml";
  test::write_file(gpu, "[meta]\nschema_version = 1\nbackend = \"cuda\"\ndevice_name = \"NVIDIA H100\"\n"
                        "[probes.\"t-basic/source\"]\nversion = \"1.0.0\"\nstatus = \"ok\"\nduration_s = 2.5\n");
  const auto other = run_memtopo("plan --device sim" + kGood + " --only t-basic/consumer --timings " + q(gpu));
  INFO(other.output);
  CHECK(other.output.find("recorded on NVIDIA H100 (cuda), not on this device") != std::string::npos);
  // A negative or NaN duration is no time to add: refused naming the line and the key.
  for (const std::string bad : {"-5.0", "nan"}) {
    test::write_file(earlier, "[meta]\nschema_version = 1\n[probes.\"t-basic/source\"]\nversion = \"1.0.0\"\n"
                              "status = \"ok\"\nduration_s = " + bad + "\n");
    const auto r = run_memtopo("plan" + kGood + " --only t-basic/consumer --timings " + q(earlier));
    INFO(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(earlier.string() + ":6: probes.\"t-basic/source\".duration_s is " + bad.substr(0, 2)) !=
          std::string::npos);
  }
  test::write_file(earlier, "[meta]\nschema_version = 1\n");
  CHECK(run_memtopo("plan" + kGood + " --timings " + q(earlier)).exit_code == 2);
  const auto m = run_memtopo("plan --plugin-path " + q(test::plugin_set("missing")));
  CHECK(m.output.find("-  t-missing/orphan  skipped: needs nowhere.value_bytes, which no loaded probe provides") !=
        std::string::npos);
}

TEST_CASE("list: one line per probe, its whole summary in a pipe, -v wrapped to 100, --format json", "[host][cli]") {
  for (const std::string flags : {"", " -v"}) {
    const auto l = run_memtopo("list" + flags);
    INFO(flags);
    CHECK(l.exit_code == 0);
    std::istringstream lines(l.output);
    size_t probes = 0, longest = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("    ", 0) == 0) longest = std::max(longest, line.size());  // -v's details
      if (line.rfind("data-cache/", 0) == 0) ++probes;
      if (line.rfind("data-cache/", 0) == 0) CHECK(line.find("...") == std::string::npos);
    }
    CHECK(probes >= 10);
    CHECK(longest <= 100);
  }
  const auto j = run_memtopo("list --format json" + kGood);
  INFO(j.output);
  CHECK(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.output);
  bool found = false;
  for (const auto& p : doc.at("probes"))
    if (p.at("name") == "t-basic/consumer") {
      found = true;
      CHECK(p.at("version") == "1.2.3");
      CHECK(p.at("requires") == nlohmann::json::array({"t.value_bytes"}));
      CHECK(p.at("provides").size() == 2);
    }
  CHECK(found);
  CHECK(run_memtopo("list --format yaml").exit_code == 2);
}

TEST_CASE("validate: 1 for schema errors, 2 for syntax errors", "[host][cli]") {
  test::TempDir dir("cli-validate");
  test::write_file(dir / "bad.toml",
                   "[meta]\nschema_version = 1\ntool_version = \"0.1.0\"\ncreated_utc = 2026-01-01T00:00:00Z\n"
                   "backend = \"sim\"\ndevice_spec = \"sim\"\nabi = \"1.0\"\n[l1d]\nsize_bytes = \"big\"\n");
  const auto r = run_memtopo("validate " + q(dir / "bad.toml"));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("bad.toml:9: /l1d/size_bytes: expected an integer >= 0") != std::string::npos);
  test::write_file(dir / "syntax.toml", "[meta]\nschema_version = = 1\n");
  const auto s = run_memtopo("validate " + q(dir / "syntax.toml"));
  CHECK(s.exit_code == 2);
  CHECK(s.output.find("syntax.toml:2:") != std::string::npos);
  CHECK(run_memtopo("validate " + q(dir / "missing.toml")).exit_code == 2);
}

TEST_CASE("list: probes and families by name, a misspelt one refused with a suggestion", "[host][cli]") {
  const auto one = run_memtopo("list -v data-cache/l1d-size");
  INFO(one.output);
  CHECK(one.exit_code == 0);
  CHECK(one.output.rfind("data-cache/l1d-size ", 0) == 0);
  CHECK(one.output.find("\ndata-cache/l2-size") == std::string::npos);
  CHECK(one.output.find("    provides: l1d.size_bytes") != std::string::npos);
  CHECK(one.output.find("    role l1d.size_bytes: cache.size_bytes@l1_cache\n") != std::string::npos);
  const auto family = run_memtopo("list tlb mlp");
  INFO(family.output);
  CHECK(family.exit_code == 0);
  CHECK(family.output.find("tlb/levels") != std::string::npos);
  CHECK(family.output.find("mlp/loads-in-flight") != std::string::npos);
  CHECK(family.output.find("data-cache/") == std::string::npos);
  const auto typo = run_memtopo("list data-cache/l1d-szie");
  INFO(typo.output);
  CHECK(typo.exit_code == 2);
  CHECK(typo.output.find("did you mean 'data-cache/l1d-size'") != std::string::npos);
}

TEST_CASE("list shows needs, plan shows the skip reason for the device", "[host][cli][needs]") {
  const std::string needs = " --plugin-path " + q(test::plugin_set("needs"));
  const auto l = run_memtopo("list" + needs);
  INFO(l.output);
  CHECK(std::regex_search(l.output, std::regex("t-needs/cuda-only +1\\.0\\.0  \\[needs cuda\\]  ")));
  CHECK(std::regex_search(l.output, std::regex("t-needs/hopper +1\\.0\\.0  \\[needs cc >= 9\\.0\\]  ")));
  CHECK(std::regex_search(l.output, std::regex("t-needs/anywhere +1\\.0\\.0  ")));
  CHECK_FALSE(std::regex_search(l.output, std::regex("t-needs/anywhere +1\\.0\\.0  \\[needs")));

  const auto p = run_memtopo("plan --device sim" + needs + " --only t-needs");
  INFO(p.output);
  CHECK(p.exit_code == 0);
  CHECK(p.output.find("-  t-needs/cuda-only  skipped: needs a CUDA GPU (a kernel the simulated GPU cannot run); "
                      "the device is the simulated GPU") != std::string::npos);
  CHECK(p.output.find("-  t-needs/future  skipped: needs compute capability 10.0; the device has 9.0") !=
        std::string::npos);
  CHECK(p.output.find(". t-needs/hopper") != std::string::npos);

  const auto pascal = run_memtopo("plan --device sim:" + q(fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices/pascal-like.toml") +
                                  needs + " --only t-needs/hopper");
  INFO(pascal.output);
  CHECK(pascal.output.find("-  t-needs/hopper  skipped: needs compute capability 9.0; the device has 6.1") !=
        std::string::npos);
}

namespace {
std::string paths(std::initializer_list<const char*> sets) {
  std::string out;
  for (const char* s : sets) out += " --plugin-path " + q(test::plugin_set(s));
  return out;
}
}  // namespace

TEST_CASE("run -q: a skip for a backend the device lacks is no warning, a missing input still is", "[host][cli][needs]") {
  test::TempDir dir("cli-quiet-skips");
  const std::string needs = " --plugin-path " + q(test::plugin_set("needs"));
  const auto quiet = run_memtopo("run -q --device sim" + needs + " --only t-needs/cuda-only -o " + q(dir / "q.toml"));
  INFO(quiet.output);
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.output.find("t-needs/cuda-only: skipped") == std::string::npos);
  const auto loud = run_memtopo("run --device sim" + needs + " --only t-needs/cuda-only -o " + q(dir / "l.toml"));
  INFO(loud.output);
  CHECK(loud.output.find("info: t-needs/cuda-only: skipped: needs a CUDA GPU") != std::string::npos);
  const std::string missing = " --plugin-path " + q(test::plugin_set("missing"));
  const auto orphan = run_memtopo("run -q --device sim" + missing + " --only t-missing -o " + q(dir / "m.toml"));
  INFO(orphan.output);
  CHECK(orphan.output.find("warning: t-missing/orphan: skipped: needs nowhere.value_bytes") != std::string::npos);
}

TEST_CASE("exit 0: ok, not determinable and skips for a declared reason", "[host][cli][exit]") {
  test::TempDir dir("cli-exit0");
  const auto out = dir / "t.toml";
  SECTION("not determinable, and a probe skipped because of it") {
    const auto r = run_memtopo("run --device sim" + paths({"undetermined"}) + " --only t-undetermined -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("1 ok, 1 not determinable, 1 skipped, 0 failed in ") != std::string::npos);
    const std::string text = test::read_file(out);
    CHECK(text.find("status = \"not_determinable\"") != std::string::npos);
    CHECK(text.find("fetch_bytes = 32") != std::string::npos);
    CHECK(text.find("needs t.sets, which its provider t-undetermined/geometry could not determine: a hashed set "
                    "index hides the sets") != std::string::npos);
    CHECK(run_memtopo("validate " + q(out)).exit_code == 0);
  }
  SECTION("needs the device does not meet") {
    const auto r = run_memtopo("run --device sim" + paths({"needs"}) + " --only t-needs -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("2 ok, 0 not determinable, 3 skipped, 0 failed") != std::string::npos);
  }
  SECTION("--skip of a provider, and a probe that skips itself") {
    const auto r = run_memtopo("run --device sim" + kGood + " --only t-basic/consumer,t-skips --skip t-basic/source -o " +
                               q(out));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(r.output.find("0 ok, 0 not determinable, 2 skipped, 0 failed") != std::string::npos);
  }
  SECTION("a result key asked for by name, measured") {
    const auto r = run_memtopo("run --device sim -q" + kGood + " --only t.double_bytes -o " + q(out));
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(test::read_file(out).find("double_bytes = 84") != std::string::npos);
  }
}

TEST_CASE("exit 1: a key asked for by name is missing, exit 2: an unknown key", "[host][cli][exit]") {
  test::TempDir dir("cli-exit1");
  const auto out = dir / "t.toml";
  const auto r = run_memtopo("run --device sim -q" + paths({"undetermined"}) + " --only t.sets -o " + q(out));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("t.sets was asked for but not measured: its provider t-undetermined/geometry could not "
                      "determine it: a hashed set index hides the sets") != std::string::npos);
  CHECK(fs::exists(out));
  const auto skipped = run_memtopo("run --device sim -q" + kGood + " --only t.double_bytes --skip t-basic/source -o " +
                                   q(out));
  INFO(skipped.output);
  CHECK(skipped.exit_code == 1);
  CHECK(skipped.output.find("t.double_bytes was asked for but not measured") != std::string::npos);
  const auto unknown = run_memtopo("run --device sim" + kGood + " --only t.nothing_bytes -o " + q(dir / "u.toml"));
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.output.find("--only: unknown probe, plugin or result key 't.nothing_bytes'") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "u.toml"));
}

TEST_CASE("run prints the summary of what was measured, -q keeps only it and warnings", "[host][cli][summary]") {
  test::TempDir dir("cli-summary");
  const auto out = dir / "t.toml";
  const auto loud = run_memtopo("run --device sim --only device-info -o " + q(out));
  INFO(loud.output);
  CHECK(loud.exit_code == 0);
  CHECK(loud.output.find("\ndevice     memtopo simulated Hopper-like GPU  cc 9.0  SMs 8  clock 1755 MHz  memory 8 GiB") !=
        std::string::npos);
  CHECK(loud.output.find("1 ok, 0 not determinable, 0 skipped, 0 failed in ") != std::string::npos);
  const auto quiet = run_memtopo("run --device sim -q --only device-info -o " + q(out));
  INFO(quiet.output);
  CHECK(quiet.exit_code == 0);
  // Only the summary: no progress, no info lines, no tally. (The built-in device is named, so
  // no fallback warning either.)
  CHECK(quiet.output.rfind("device     memtopo simulated Hopper-like GPU  cc 9.0", 0) == 0);
  CHECK(std::count(quiet.output.begin(), quiet.output.end(), '\n') == 1);
  // A failure: its error, the summary and the tally.
  const auto failing = run_memtopo("run --device sim -q" + kGood + " --only t-fails/broken,t-basic/source -o " + q(out));
  INFO(failing.output);
  CHECK(failing.exit_code == 1);
  CHECK(failing.output.find("error: t-fails/broken: failed: the test probe fails on purpose") != std::string::npos);
  CHECK(failing.output.find("\nt          latency >= 12.5 cyc  label hello \"world\"  sizes 1 B/2 B/4 B  value 42 B\n") !=
        std::string::npos);
  CHECK(failing.output.find("1 ok, 0 not determinable, 0 skipped, 1 failed in ") != std::string::npos);
}

TEST_CASE("a value of the wrong type for its declaration is refused, naming key and types", "[host][cli][keys]") {
  test::TempDir dir("cli-keys");
  const auto r = run_memtopo("run --device sim" + paths({"keys"}) + " --only t-keys -o " + q(dir / "t.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("t-keys/wrong-type: result refused: tma.copies is string, but t-keys/wrong-type declares it "
                      "integer") != std::string::npos);
  CHECK(test::read_file(dir / "t.toml").find("latency_cycles = 480.0") != std::string::npos);
}

namespace {
const char* kDropIn = R"([meta]
schema_version = 1
tool_version = "0.1.0"
created_utc = 2026-01-01T00:00:00Z
backend = "sim"
device_spec = "sim"
abi = "2.0"

[l1d]
size_bytes = 262144

[tma]
latency_cycles = 480.0
mode = "bulk"
extra = "what a newer plugin adds"

[dropin]
speed_cycles = "fast"
)";
}  // namespace

TEST_CASE("validate: what no installed plugin provides is reported as not checked, never an error",
          "[host][cli][keys][validate]") {
  test::TempDir dir("cli-validate-keys");
  const auto file = dir / "t.toml";
  test::write_file(file, kDropIn);
  SECTION("with the plugin that provides [tma]") {
    const auto v = run_memtopo("validate" + paths({"keys"}) + " " + q(file));
    INFO(v.output);
    CHECK(v.exit_code == 0);
    CHECK(v.output.find("t.toml: not checked: [dropin] (no installed plugin provides it)") != std::string::npos);
    CHECK(v.output.find("t.toml: not checked: tma.extra (no installed plugin provides it)") != std::string::npos);
    CHECK(v.output.find("not checked: [tma]") == std::string::npos);
    CHECK(v.output.find("not checked: [l1d]") == std::string::npos);  // the schema knows [l1d]
    CHECK(v.output.find("t.toml: valid") != std::string::npos);
  }
  SECTION("without it, [tma] is not checked either") {
    const auto v = run_memtopo("validate " + q(file));
    INFO(v.output);
    CHECK(v.exit_code == 0);
    // With CUDA, the installed hopper-tma describes other keys of [tma]: then the keys it does
    // not describe are named one by one.
    const bool whole = v.output.find("t.toml: not checked: [tma] (no installed plugin provides it)") != std::string::npos;
    const bool by_key =
        v.output.find("t.toml: not checked: tma.latency_cycles (no installed plugin provides it)") != std::string::npos &&
        v.output.find("t.toml: not checked: tma.mode (no installed plugin provides it)") != std::string::npos;
    CHECK((whole || by_key));
  }
  SECTION("a declared key is checked against its declaration") {
    std::string text = kDropIn;
    text.replace(text.find("latency_cycles = 480.0"), 22, "latency_cycles = \"slow\"");
    test::write_file(file, text);
    const auto v = run_memtopo("validate" + paths({"keys"}) + " " + q(file));
    INFO(v.output);
    CHECK(v.exit_code == 1);
    CHECK(v.output.find("t.toml:13: /tma/latency_cycles: t-keys/tma declares float (cycles), got string \"slow\"") !=
          std::string::npos);
    const auto without = run_memtopo("validate " + q(file));
    CHECK(without.exit_code == 0);  // nothing installed says what [tma] holds
  }
}

TEST_CASE("list: the shipped plugins' roles, each on one key, are the ones docs/roles.md lists", "[host][cli][roles]") {
  const auto j = run_memtopo("list --format json");
  REQUIRE(j.exit_code == 0);
  const std::string doc = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "docs" / "roles.md");
  std::map<std::string, std::string> key_of_role;
  size_t roles = 0;
  const auto listed = nlohmann::json::parse(j.output);
  for (const auto& p : listed.at("probes"))
    for (const auto& [key, role] : p.at("roles").items()) {
      INFO(p.at("name").get<std::string>() << " " << key);
      ++roles;
      const auto [it, fresh] = key_of_role.emplace(role.get<std::string>(), key);
      CHECK((fresh || it->second == key));  // no two keys of the shipped plugins share a role
      // The roofline's roles and the cache procedure's (cache.<part>@<subject> on
      // <element>.<part>) are listed by pattern; every other role has its row.
      const std::string r = role.get<std::string>(), part = key.substr(key.find('.') + 1);
      const bool by_pattern = r.rfind("compute.", 0) == 0 || r.rfind("cache." + part + "@", 0) == 0;
      if (!by_pattern) CHECK(doc.find("| `" + r + "` | `" + key + "` |") != std::string::npos);
    }
  CHECK(roles > 100);
  // plugins/key_roles.toml, what files written before 3.9 are read through, is what they declare:
  // each declared role is in it; and every role in it is declared where the build has every
  // plugin (a build without CUDA leaves the Hopper ones out).
  std::map<std::string, std::string> declared;
  std::set<std::string> built;
  for (const auto& p : listed.at("probes")) {
    built.insert(p.at("plugin").get<std::string>());
    for (const auto& [key, role] : p.at("roles").items()) declared[key] = role.get<std::string>();
  }
  const auto& table = memtopo::host::shipped_key_roles();
  for (const auto& [key, role] : declared) {
    INFO(key);
    CHECK((table.count(key) && table.at(key) == role));
  }
  bool every_plugin = true;
  for (const auto& dir : fs::directory_iterator(fs::path(MEMTOPO_SOURCE_DIR) / "plugins"))
    if (dir.is_directory() && fs::exists(dir.path() / "CMakeLists.txt"))
      every_plugin = every_plugin && built.count(dir.path().filename().string());
  if (every_plugin) CHECK(declared.size() == table.size());
}

TEST_CASE("roles: a topology's keys by the roles its file records, else the shipped plugins'", "[host][roles]") {
  const auto old_file = toml::parse("[device]\nsm_count = 8\n");
  const memtopo::host::RoleIndex before(old_file);
  CHECK(before.key("gpu.sm_count") == "device.sm_count");
  CHECK(before.key("cache.size_bytes@l2_cache") == "l2.size_bytes");
  CHECK(before.key("gpu.no_such_quantity").empty());
  const auto new_file = toml::parse(
      "[vendor]\nsms = 8\n[provenance.vendor]\nsms = { probe = \"v/p\", confidence = 1.0, bound = \"exact\", "
      "role = \"gpu.sm_count\" }\n");
  const memtopo::host::RoleIndex after(new_file);
  CHECK(after.key("gpu.sm_count") == "vendor.sms");
  CHECK(after.key("gpu.name") == "device.name");
}
