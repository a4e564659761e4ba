// Probe isolation pieces: how a child ended in words, the device through the hello message,
// time limits (precedence, config), declared budgets, the load check of discovery.
#include <csignal>
#include <cstring>
#include <regex>

#include <toml++/toml.h>

#include "helpers.hpp"
#include "topology/base/child_process.hpp"
#include "run/planning/config.hpp"
#include "run/running/worker.hpp"

using namespace memtopo::host;

namespace {

// The wait status of a child that runs `body`.
template <class F>
int status_of_child(F body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    body();
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return status;
}

const ProbeInfo& faults_probe(const std::string& name) {
  static Registry reg = [] {
    Registry r;
    r.load_directory(test::plugin_set("faults"));
    return r;
  }();
  const ProbeInfo* p = reg.find(name);
  REQUIRE(p);
  return *p;
}

}  // namespace

TEST_CASE("a child's end in words: the signal's name and number, or the exit code", "[host][worker]") {
  CHECK(describe_wait_status(status_of_child([] {
          std::signal(SIGSEGV, SIG_DFL);
          std::raise(SIGSEGV);
        })) == "crashed with SIGSEGV (signal 11)");
  CHECK(describe_wait_status(status_of_child([] { ::_exit(3); })) == "called exit(3)");
  CHECK_THAT(describe_wait_status(status_of_child([] { std::raise(SIGKILL); })),
             Catch::StartsWith("was killed with SIGKILL (signal 9)"));
  CHECK(signal_name(SIGABRT) == "SIGABRT");
}

TEST_CASE("the device info survives the hello message field by field", "[host][worker]") {
  mt_device_info in{};
  in.struct_size = sizeof in;
  std::snprintf(in.name, sizeof in.name, "NVIDIA Test \"GPU\"");
  std::snprintf(in.backend, sizeof in.backend, "cuda");
  std::snprintf(in.uuid, sizeof in.uuid, "GPU-12345678-1234-1234-1234-123456789abc");
  std::snprintf(in.pci_bus_id, sizeof in.pci_bus_id, "00000000:01:00.0");
  in.ordinal = 1;
  in.cc_major = 9;
  in.cc_minor = 0;
  in.sm_count = 132;
  in.global_memory_bytes = int64_t{80} << 30;
  in.l2_bytes = 50 << 20;
  in.driver_version = 13000;
  in.constant_reach_bytes = 65536 + 32764;
  const mt_device_info out = device_info_from_json(nlohmann::json::parse(device_info_to_json(in).dump()));
  CHECK(out.struct_size == sizeof out);
  CHECK(std::string(out.name) == in.name);
  CHECK(std::string(out.uuid) == in.uuid);
  CHECK(std::string(out.pci_bus_id) == in.pci_bus_id);
  CHECK(out.global_memory_bytes == in.global_memory_bytes);
  CHECK(out.constant_reach_bytes == in.constant_reach_bytes);
  CHECK(device_info_to_json(out) == device_info_to_json(in));  // every field
  CHECK(device_info_to_json(in).size() == 26);
  CHECK_THROWS_WITH(device_info_from_json({{"sm_count", "many"}}), Catch::StartsWith("device field sm_count: "));
}

TEST_CASE("a probe's time limit: its config entry, then [run], then its declared budget, then 600 s",
          "[host][worker]") {
  const ProbeInfo& hang = faults_probe("t-faults/hang");
  const ProbeInfo& budgeted = faults_probe("t-faults/over-budget");
  CHECK(budgeted.budget_s == 0.25);
  RunSettings s;
  // A sanitized build multiplies budgets and the default (kSanitizedBudgetScale), not the
  // user's limits.
  const double scale = build_budget_scale();
  CHECK(time_limit_for(hang, s).seconds == kDefaultTimeLimitS * scale);
  CHECK(time_limit_for(budgeted, s).seconds == 0.25 * scale);
  CHECK(time_limit_for(budgeted, s).source.rfind("the probe's declared budget", 0) == 0);
  CHECK_FALSE(time_limit_for(budgeted, s).cpu_time);
  s.cpu_time_limits = true;  // the simulated GPU: budgets count CPU time, the user's limits not
  CHECK(time_limit_for(budgeted, s).cpu_time);
  s.time_limit_s = 30;
  CHECK(time_limit_for(budgeted, s).seconds == 30);
  s.probe_time_limits_s["t-faults/over-budget"] = 5;
  CHECK(time_limit_for(budgeted, s).seconds == 5);
  CHECK(time_limit_for(budgeted, s).source == "[probes.\"t-faults/over-budget\"] time_limit_s");
  CHECK_FALSE(time_limit_for(budgeted, s).cpu_time);
  CHECK(time_limit_for(hang, s).seconds == 30);
}

TEST_CASE("config: time_limit_s in [run] and per probe, isolation, errors name file:line", "[host][worker][config]") {
  const Registry& reg = test::good_registry();
  const Config cfg = parse_config(
      "[run]\ntime_limit_s = 90\nisolation = false\njobs = 3\n\n[probes.\"t-basic/source\"]\ntime_limit_s = 2.5\nvalue = 3\n",
      "c.toml", reg);
  CHECK(cfg.jobs == 3u);
  CHECK(cfg.time_limit_s == 90);
  CHECK(cfg.isolation == false);
  CHECK(cfg.probe_time_limits_s.at("t-basic/source") == 2.5);
  CHECK(cfg.options.at("t-basic/source").count("time_limit_s") == 0);
  try {
    parse_config("[run]\ntime_limit_s = -1\nisolation = \"no\"\njobs = 0\n\n[probes.\"t-basic/source\"]\ntime_limit_s = \"1\"\n",
                 "c.toml", reg);
    FAIL("accepted");
  } catch (const ConfigError& e) {
    using Catch::Matchers::VectorContains;
    CHECK(e.messages.size() == 4);
    CHECK_THAT(e.messages, VectorContains(std::string("c.toml:2: [run] time_limit_s must be a number of seconds > 0 and at most 1e+06 (about 11.6 days), e.g. 600")));
    CHECK_THAT(e.messages, VectorContains(std::string("c.toml:3: [run] isolation must be true or false")));
    CHECK_THAT(e.messages, VectorContains(std::string(
                               "c.toml:4: [run] jobs must be a whole number from 1 to 64 (probes at once on the simulated GPU)")));
    CHECK_THAT(e.messages, VectorContains(std::string(
                               "c.toml:7: [probes.\"t-basic/source\"] time_limit_s must be a number of seconds > 0 and at most 1e+06 (about 11.6 days), e.g. 600")));
  }
}

TEST_CASE("discovery: a library is loaded in a child first, one that aborts there is refused by name",
          "[host][worker][loader]") {
  const auto bad = test::plugin_set("ctor-abort") / "t-ctor-abort.so";
  CHECK(check_library_loads(bad) == "crashed while loading (SIGABRT, signal 6); remove or fix it");
  CHECK_FALSE(check_library_loads(test::plugin_set("faults") / "t-faults.so"));
  Registry reg;
  reg.load_directory(test::plugin_set("ctor-abort"));
  CHECK(reg.probes().empty());
  REQUIRE(reg.errors().size() == 1);
  CHECK(reg.errors()[0] == bad.string() + ": crashed while loading (SIGABRT, signal 6); remove or fix it");
}

TEST_CASE("list -v shows a probe's declared time budget", "[host][worker][cli]") {
  const auto r = test::run_memtopo("list -v --plugin-path '" + test::plugin_set("faults").string() + "'");
  CHECK(r.exit_code == 0);
  CHECK(std::regex_search(r.output, std::regex("t-faults/over-budget +1\\.0\\.0  ")));
  CHECK(r.output.find("    budget: 0.25 s (time limit unless the config sets time_limit_s)") != std::string::npos);
}

TEST_CASE("a probe of its own process: a new worker before it and after it", "[host][worker]") {
  test::TempDir dir("own-process");
  const fs::path out = dir / "t.toml";
  // One worker at a time (--jobs 1): with several, the probes after it may share another one.
  const auto r = test::run_memtopo("run -q --jobs 1 --device sim --plugin-path '" + test::plugin_set("pid").string() +
                                   "' --only t-pid -o '" + out.string() + "'");
  REQUIRE(r.exit_code == 0);
  const toml::table t = toml::parse_file(out.string());
  auto pid = [&](const char* k) { return t["pid"][k].value<int64_t>().value_or(0); };
  CHECK(pid("a") > 0);
  CHECK(pid("b") != pid("a"));
  CHECK(pid("c") != pid("b"));
  CHECK(pid("c") == pid("d"));  // the worker after it is shared again
  const auto in_memtopo = test::run_memtopo("run -q --no-isolation --device sim --plugin-path '" +
                                            test::plugin_set("pid").string() + "' --only t-pid -o '" + out.string() + "'");
  REQUIRE(in_memtopo.exit_code == 0);
  const toml::table u = toml::parse_file(out.string());
  CHECK(u["pid"]["a"].value<int64_t>() == u["pid"]["b"].value<int64_t>());  // --no-isolation: one process
}

namespace {

// The measured tables of a topology (not [meta] or [probes], which hold times and dates).
toml::table measured(const fs::path& file) {
  toml::table t = toml::parse_file(file.string());
  t.erase("meta");
  t.erase("probes");
  return t;
}

}  // namespace

TEST_CASE("the simulated GPU: probes at once measure what one at a time do, a probe alone what it does in a run",
          "[host][worker][sim]") {
  test::TempDir dir("jobs");
  const std::string device = " --device sim:" + test::q(fs::path(MEMTOPO_SOURCE_DIR) / "examples/devices/pascal-like.toml");
  auto run = [&](const std::string& args, const std::string& name) {
    const fs::path out = dir / name;
    const auto r = test::run_memtopo("run -q" + device + " " + args + " -o " + test::q(out));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    return measured(out);
  };
  const toml::table one = run("--only constant,tlb --jobs 1", "one.toml");
  const toml::table three = run("--only constant,tlb --jobs 3", "three.toml");
  CHECK(one == three);
  CHECK(one.contains("tlb"));
  // tlb/sets with the probe it needs, without the other tlb and constant probes before it.
  const toml::table alone = run("--only tlb/sets --jobs 1", "alone.toml");
  const toml::table* tlb = alone["tlb"].as_table();
  REQUIRE(tlb);
  for (const char* key : {"l2_set_ways", "l1_set_ways", "l2_entries"}) {
    INFO(key);
    REQUIRE((*tlb)[key].node());
    CHECK((*tlb)[key] == one["tlb"][key]);
  }
  // A GPU's probes run one at a time.
  const auto refused = test::run_memtopo("run -q --device cuda --jobs 2 -o " + test::q(dir / "gpu.toml"));
  CHECK(refused.exit_code != 0);
  CHECK(test::has(refused.output, "--jobs is for the simulated GPU"));
}
