// Fleets (docs/fleet.md): a run of several simulated devices writes one topology per device,
// `memtopo fleet` flags exactly the device that differs, by the keys that differ, and passes a
// fleet of equal devices; the statistics on recorded values; identities and settings are no
// differences for diff and fleet alike.
#include <algorithm>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "helpers.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/values/gpu_state.hpp"
#include "topology/values/schema.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using namespace memtopo::host;
using test::quoted;
using test::run_memtopo;

namespace {

using test::has;

const fs::path kExample = fs::path(MEMTOPO_SOURCE_DIR) / "examples" / "devices" / "hopper-like.toml";
// The acceptance run's probes (configs/acceptance.toml) and the L2 size, which shows the odd
// device's smaller L2 (the first miss varies with the buffer's pages: reported, never flagged;
// the full miss is an estimate no table rates for a simulated model: reported).
const std::string kSelection =
    "--only device-info,global-throughput/streams,global-throughput/latency-spectrum,mlp,tlb/levels,data-cache/l2-size,"
    "data-cache/l2-occupancy";

// The shipped Hopper-like device, and one like it with three quarters of its L2 and DRAM
// read bandwidth: a GPU with an L2 slice off and a slow HBM stack.
void write_devices(const test::TempDir& dir) {
  const std::string healthy = test::read_file(kExample);
  test::write_file(dir / "healthy.toml", healthy);
  std::string odd = healthy;
  odd = std::regex_replace(odd, std::regex("\nsize_bytes = 2097152"), "\nsize_bytes = 1572864");
  odd = std::regex_replace(odd, std::regex("\nsets = 1024"), "\nsets = 768");
  odd = std::regex_replace(odd, std::regex("\ndram_read_bytes_per_second = [0-9.]+"),
                           "\ndram_read_bytes_per_second = 150000000000.0");
  REQUIRE(odd != healthy);
  test::write_file(dir / "odd.toml", odd);
}

std::string sim_list(const test::TempDir& dir, int healthy, bool odd) {
  std::string list;
  for (int i = 0; i < healthy; ++i) list += (list.empty() ? "sim:" : ",sim:") + (dir / "healthy.toml").string();
  if (odd) list += ",sim:" + (dir / "odd.toml").string();
  return list;
}

nlohmann::json fleet_json(const fs::path& folder) {
  const auto r = run_memtopo("fleet --format json " + quoted(folder));
  INFO(r.output);
  return nlohmann::json::parse(r.output.substr(0, r.output.rfind('}') + 1));
}

FleetMember member(const std::string& host, std::vector<std::pair<std::string, nlohmann::json>> values,
                   const std::string& model = "GPU X") {
  FleetMember m;
  m.file = host + ".toml";
  m.host = host;
  m.device = "cuda:0";
  m.model = model;
  m.group = model;
  // Rated, as a probe's noise model rates them: these tests are of the statistics.
  KeyDeclared rated;
  rated.rated = true;
  for (auto& [k, v] : values) m.values.push_back({k, FlatValue{v, "exact", "", rated}});
  std::sort(m.values.begin(), m.values.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return m;
}

std::vector<std::string> flagged_keys(const FleetReport& r, size_t m) {
  std::vector<std::string> keys;
  for (const auto& f : r.gpus[m].findings)
    if (f.counts) keys.push_back(f.key);
  return keys;
}

}  // namespace

TEST_CASE("fleet: a run of simulated devices flags the one that differs, by its keys", "[fleet]") {
  test::TempDir dir("fleet-sim");
  write_devices(dir);
  const auto out = dir / "out";
  const auto run = run_memtopo("run -q " + kSelection + " --device " + sim_list(dir, 3, true) +
                               " -o " + quoted(fs::path(out.string() + "/")));
  INFO(run.output);
  REQUIRE(run.exit_code == 0);
  for (const char* name : {"healthy-1", "healthy-2", "healthy-3", "odd"}) {
    const auto file = out / (test::host_name() + "-sim-" + name + ".toml");
    CHECK(fs::exists(file));
    CHECK(run_memtopo("validate " + quoted(file)).exit_code == 0);
  }
  CHECK(has(run.output, "sim-healthy-2  "));  // one column per device
  CHECK(has(run.output, "device SMs"));
  const auto text = run_memtopo("fleet " + quoted(out));
  INFO(text.output);
  CHECK(text.exit_code == 1);
  const nlohmann::json j = fleet_json(out);
  CHECK(j["flagged"] == 1);
  for (const auto& gpu : j["gpus"]) {
    const bool odd = has(gpu["file"].get<std::string>(), "-sim-odd");
    CHECK(gpu["flagged"] == odd);
    std::set<std::string> keys;
    for (const auto& f : gpu["findings"])
      if (f["flagged"]) keys.insert(f["key"]);
    if (odd) {
      CHECK(keys.count("l2.size_bytes"));
      CHECK(keys.count("throughput.dram_read_bytes_per_second"));
      for (const auto& k : keys) CHECK((k.rfind("l2.", 0) == 0 || k.rfind("throughput.dram", 0) == 0 ||
                                        k.rfind("mlp.", 0) == 0 || k.rfind("spectrum.", 0) == 0));
    }
  }
  // The same fleet without the odd device: nothing differs.
  fs::remove(out / (test::host_name() + "-sim-odd.toml"));
  const auto equal = run_memtopo("fleet " + quoted(out));
  INFO(equal.output);
  CHECK(equal.exit_code == 0);
  CHECK(has(equal.output, "3 GPUs in 1 group, 0 flagged"));
}

TEST_CASE("fleet: JUnit, a reference, bad input", "[fleet]") {
  test::TempDir dir("fleet-forms");
  write_devices(dir);
  const auto out = dir / "out";
  REQUIRE(run_memtopo("run -q --only device-info,global-throughput/streams --device " + sim_list(dir, 2, true) +
                      " -o " + quoted(fs::path(out.string() + "/")))
              .exit_code == 0);
  const auto junit = run_memtopo("fleet --format junit -o " + quoted(dir / "fleet.xml") + " " + quoted(out));
  CHECK(junit.exit_code == 1);
  const std::string xml = test::read_file(dir / "fleet.xml");
  CHECK(has(xml, "<testsuites name=\"memtopo fleet\" tests=\"3\" failures=\""));
  CHECK(std::count(xml.begin(), xml.end(), '\n') > 3);
  CHECK(has(xml, "<testcase classname="));
  // With a reference, the odd device differs from it too.
  const auto reference = out / (test::host_name() + "-sim-healthy-1.toml");
  const auto with_ref = run_memtopo("fleet --format json --reference " + quoted(reference) + " " + quoted(out));
  CHECK(has(with_ref.output, "\"against\": \"reference\""));
  // Bad input: a file that is no topology, nothing at all, a bad profile.
  test::write_file(dir / "junk.toml", "[device]\nname = \"x\"\n");
  const auto junk = run_memtopo("fleet " + quoted(out) + " " + quoted(dir / "junk.toml"));
  CHECK(junk.exit_code == 2);
  CHECK(has(junk.output, "junk.toml: not a topology file"));
  fs::create_directory(dir / "empty");
  CHECK(run_memtopo("fleet " + quoted(dir / "empty")).exit_code == 2);
  test::write_file(dir / "p.toml", "[keys.\"l2.*\"]\ntolerance_percent = 200\n");
  const auto profile = run_memtopo("fleet --profile " + quoted(dir / "p.toml") + " " + quoted(out));
  CHECK(profile.exit_code == 2);
  CHECK(has(profile.output, "p.toml:2: [keys.\"l2.*\"] tolerance_percent must be a percentage from 0 to 100"));
}

TEST_CASE("fleet statistics: spread within the tolerance passes, an outlier beyond both is flagged", "[fleet]") {
  std::vector<FleetMember> m;
  const double rates[] = {3.19, 3.20, 3.18, 3.21, 3.195, 2.70};
  for (int i = 0; i < 6; ++i)
    m.push_back(member("n" + std::to_string(i), {{"throughput.dram_read_gbps", rates[i] * 1000},
                                                 {"l2.size_bytes", i == 4 ? 25165824 : 26214400},
                                                 {"device.sm_count", 132}}));
  const FleetReport r = compare_fleet(m, FleetOptions{});
  REQUIRE(r.gpus.size() == 6);
  for (int i : {0, 1, 2, 3}) CHECK(flagged_keys(r, i).empty());
  CHECK(flagged_keys(r, 4) == std::vector<std::string>{"l2.size_bytes"});
  CHECK(flagged_keys(r, 5) == std::vector<std::string>{"throughput.dram_read_gbps"});
  CHECK(r.flagged() == 2);
  const auto& f = r.gpus[5].findings.front();
  CHECK(f.expected.get<double>() == Approx(3192.5));
  CHECK(*f.deviation_percent == Approx((2700.0 - 3192.5) / 3192.5 * 100));
}

TEST_CASE("fleet statistics: a noisy key is judged by its spread, a key that varies is reported only", "[fleet]") {
  std::vector<FleetMember> m;
  // Latencies spread by +-6 % between healthy GPUs: beyond 3 %, within their own spread.
  const double latency[] = {280, 296, 270, 290, 265, 300, 285, 275};
  for (int i = 0; i < 8; ++i) {
    // An integer estimate (Little's law) moves by a percent: compared like a float, not for equality.
    m.push_back(member("n" + std::to_string(i), {{"mlp.sm_l2_latency_cycles", latency[i]},
                                                 {"mlp.sm_l2_loads_in_flight", 505 + i},
                                                 {"tlb.l1_entries", 8 + i % 3}}));
    m.back().values[1].second.declared.estimate = true;
    m.back().values[2].second.probe = "tlb/levels";
    m.back().values[2].second.declared.varies = true;
  }
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK(r.flagged() == 0);
  m.back().values[1].second.value = 430;  // 15 % fewer loads in flight: flagged
  const FleetReport odd = compare_fleet(m, FleetOptions{});
  CHECK(flagged_keys(odd, 7) == std::vector<std::string>{"mlp.sm_l2_loads_in_flight"});
  size_t reported = 0;
  for (const auto& g : r.gpus)
    for (const auto& f : g.findings) reported += !f.counts && f.key == "tlb.l1_entries";
  CHECK(reported > 0);
}

TEST_CASE("fleet groups: a GPU whose SM count is off is compared with its model's group", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i) m.push_back(member("n" + std::to_string(i), {{"device.sm_count", 132}, {"l2.size_bytes", 26214400}}, "H"));
  m.push_back(member("odd", {{"device.sm_count", 130}, {"l2.size_bytes", 26214400}}, "H"));
  m.back().group = "H, 130 SMs";
  m.push_back(member("other", {{"device.sm_count", 108}}, "A"));
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK(r.groups.size() == 3);
  CHECK(flagged_keys(r, 4) == std::vector<std::string>{"device.sm_count"});
  CHECK_FALSE(r.gpus[5].flagged());  // alone in its model: nothing to compare with
  CHECK(r.flagged() == 1);
}

TEST_CASE("diff and fleet: identities and settings are no differences", "[fleet][diff]") {
  test::TempDir dir("fleet-identity");
  // A whole simulated run, committed (measuring one here would only take time).
  const std::string text =
      test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "hopper-like-sim.toml");
  // Two GPUs of one model: their UUIDs and bus ids differ, and the search settled elsewhere.
  auto with = [&](const std::string& uuid, const std::string& config) {
    std::string t = text;
    t.insert(t.find("\n", t.find("[device]")) + 1, "uuid = \"" + uuid + "\"\npci_bus_id = \"0000:" + uuid.substr(4, 2) + ":00.0\"\n");
    t.insert(t.find("\n", t.find("[provenance.device]")) + 1,
             "uuid = { probe = \"device-info/properties\", confidence = 1.0, bound = \"exact\", class = \"identity\" }\n"
             "pci_bus_id = { probe = \"device-info/properties\", confidence = 1.0, bound = \"exact\", class = \"identity\" }\n");
    t = std::regex_replace(t, std::regex("dram_read_best_config = \"[^\"]*\""), "dram_read_best_config = \"" + config + "\"");
    return t;
  };
  test::write_file(dir / "x.toml", with("GPU-11111111", "8 blocks per SM"));
  test::write_file(dir / "y.toml", with("GPU-22222222", "4 blocks per SM"));
  const auto d = run_memtopo("diff " + quoted(dir / "x.toml") + " " + quoted(dir / "y.toml"));
  INFO(d.output);
  CHECK(d.exit_code == 0);
  CHECK(has(d.output, "not counted (identities, settings, keys known to vary, method changes):"));
  CHECK(has(d.output, "device.uuid"));
  CHECK(has(d.output, "throughput.dram_read_best_config"));
  const auto f = run_memtopo("fleet " + quoted(dir.path));
  INFO(f.output);
  CHECK(f.exit_code == 0);
  // A profile makes a class of an older file's key, and widens a tolerance.
  test::write_file(dir / "p.toml", "tolerance_percent = 3\n[keys.\"throughput.*_config\"]\nclass = \"measurement\"\n");
  CHECK(run_memtopo("diff --profile " + quoted(dir / "p.toml") + " " + quoted(dir / "x.toml") + " " +
                    quoted(dir / "y.toml"))
            .exit_code == 1);
}

TEST_CASE("fleet: configs/acceptance.toml runs on the simulated GPU", "[fleet]") {
  test::TempDir dir("fleet-acceptance");
  const auto r = run_memtopo("run -q --config " + quoted(fs::path(MEMTOPO_SOURCE_DIR) / "configs" / "acceptance.toml") +
                             " --device sim -o " + quoted(dir / "a.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const std::string text = test::read_file(dir / "a.toml");
  for (const char* probe : {"device-info/properties", "global-throughput/streams", "mlp/loads-in-flight",
                            "global-throughput/latency-spectrum", "tlb/levels"})
    CHECK(has(text, std::string("[probes.\"") + probe + "\"]\nversion"));
}

TEST_CASE("fleet: each task of an srun step measures its local rank's device", "[fleet]") {
  test::TempDir dir("fleet-srun");
  write_devices(dir);
  const std::string devices = sim_list(dir, 1, true);
  // What srun sets for the tasks of one node (docs/fleet.md, "Many nodes").
  auto task = [&](int tasks, int rank, const std::string& args) {
    return run_memtopo(args, {}, 0,
                       "SLURM_STEP_ID=0 SLURM_NODEID=0 SLURM_STEP_TASKS_PER_NODE=" + std::to_string(tasks) +
                           " SLURM_LOCALID=" + std::to_string(rank) + " SLURM_PROCID=" + std::to_string(rank));
  };
  auto out = [&](const std::string& name) { return quoted(fs::path(dir.path.string() + "/" + name + "/")); };
  for (int rank = 0; rank < 2; ++rank) {
    const auto r = task(2, rank, "run -q --only device-info --device " + devices + " -o " + out("ranks"));
    INFO(r.output);
    CHECK(r.exit_code == 0);
  }
  CHECK(fs::exists(dir / "ranks" / (test::host_name() + "-sim-healthy.toml")));
  CHECK(fs::exists(dir / "ranks" / (test::host_name() + "-sim-odd.toml")));
  // One task per node measures every device it was given, as a run on one node does.
  CHECK(task(1, 0, "run -q --only device-info --device " + devices + " -o " + out("all")).exit_code == 0);
  CHECK(std::distance(fs::directory_iterator(dir / "all"), fs::directory_iterator()) == 2);
  // A rank has no device of its own when a node runs more tasks than there are devices.
  const auto over = task(3, 2, "run -q --device " + devices + " -o " + out("over"));
  CHECK(over.exit_code == 2);
  CHECK(has(over.output, "local rank 2 of slurm has no device: 3 tasks on this node, 2 devices"));
}

TEST_CASE("fleet: of two GPUs, the one measured beside another process is the odd one, cause first", "[fleet]") {
  // Two GPUs cannot say by their values alone which is odd; a run that recorded another
  // process makes no part of the statistics and leads with that cause.
  std::vector<FleetMember> m;
  m.push_back(member("quiet", {{"throughput.dram_read_bytes_per_second", 3.2e12}}));
  m.push_back(member("busy", {{"throughput.dram_read_bytes_per_second", 2.1e12}}));
  m.back().state_warnings = {"2 processes held a CUDA context at the start (memtopo's is one)"};
  const FleetReport r = compare_fleet(m, FleetOptions{});
  CHECK_FALSE(r.gpus[0].flagged());
  REQUIRE(r.gpus[1].flagged());
  REQUIRE(r.gpus[1].findings.size() == 2);
  CHECK(r.gpus[1].findings[0].kind == "state");
  CHECK(r.gpus[1].findings[1].key == "throughput.dram_read_bytes_per_second");
  const std::string text = render_fleet_text(r);
  CHECK(text.find("3.2 TB/s") != std::string::npos);  // values in their unit
  CHECK(text.find("gpu state") < text.find("throughput.dram_read"));
}

TEST_CASE("fleet: an integer estimate one unit off and a list's medians as its expected value", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 5; ++i) {
    m.push_back(member("n" + std::to_string(i), {{"mlp.warp_l2_loads_in_flight", i == 4 ? 26 : 25},
                                                 {"spectrum.level_latencies_cycles", {32.0, 280.0, 560.0}}}));
    m.back().values[0].second.declared.estimate = true;
  }
  m.back().values[1].second.value = nlohmann::json{32.0, 280.0, 700.0};
  const FleetReport r = compare_fleet(m, FleetOptions{});
  REQUIRE(r.gpus[4].findings.size() == 1);  // the list, not the count one unit apart
  CHECK(r.gpus[4].findings[0].key == "spectrum.level_latencies_cycles");
  CHECK(r.gpus[4].findings[0].expected == nlohmann::json{32.0, 280.0, 560.0});
}

TEST_CASE("fleet: an index array differs by how many entries changed, not by a percentage", "[fleet]") {
  std::vector<FleetMember> m;
  for (int i = 0; i < 4; ++i)
    m.push_back(member("n" + std::to_string(i), {{"l2.near_partition_of_sm", {0, 0, 1, 1}}}));
  m.back().values[0].second.value = nlohmann::json{1, 0, 1, 0};
  const FleetReport r = compare_fleet(m, FleetOptions{});
  REQUIRE(r.gpus[3].flagged());
  const std::string text = render_fleet_text(r);
  CHECK(text.find("2 of 4 entries changed") != std::string::npos);
  CHECK(text.find("-100.0 %") == std::string::npos);
}

TEST_CASE("GPU state: memory faults are warned, past repairs are not", "[fleet][state]") {
  nlohmann::json healthy = {{"ecc_enabled", true},          {"ecc_corrected_errors", 12},
                            {"ecc_uncorrected_errors", 0},  {"retired_pages", 0},
                            {"remapped_rows_corrected", 3}, {"remapped_rows_uncorrected", 1},
                            {"row_remap_pending", false},   {"row_remap_failed", false}};
  CHECK(gpu_state_warnings(healthy).empty());
  nlohmann::json faulty = healthy;
  faulty["ecc_uncorrected_errors"] = 2;
  faulty["row_remap_pending"] = true;
  const auto w = gpu_state_warnings(faulty);
  REQUIRE(w.size() == 2);
  CHECK(w[0].find("2 uncorrected ECC errors") == 0);
  CHECK(w[1].find("pending") != std::string::npos);
  faulty["row_remap_failed"] = true;
  CHECK(gpu_state_warnings(faulty).size() == 3);
  const auto order = gpu_state_key_order();
  CHECK(std::find(order.begin(), order.end(), "row_remap_failed") != order.end());
}

// A fault written with the wrong type ("12" errors, a "true" flag) would read as no fault: the
// schema refuses the file instead, naming the field.
TEST_CASE("GPU state: a field of the wrong type makes the file invalid, by key", "[fleet][state]") {
  nlohmann::json doc = {{"meta",
                         {{"schema_version", 1}, {"tool_version", "0.1.0"}, {"created_utc", "2026-11-21T16:00:00Z"},
                          {"backend", "cuda"}, {"device_spec", "cuda:0"}, {"abi", "3.6"},
                          {"gpu_state", {{"source", "nvml"}, {"ecc_enabled", true}, {"ecc_uncorrected_errors", 0},
                                         {"start_temperature_c", 41.5}, {"start_throttle_reasons", {"gpu_idle"}}}}}}};
  CHECK(validate_topology(doc).empty());
  for (const auto& [key, bad] : std::vector<std::pair<std::string, nlohmann::json>>{
           {"ecc_uncorrected_errors", "12"}, {"row_remap_failed", "true"}, {"ecc_enabled", 1},
           {"power_limit_w", -700}, {"start_throttle_reasons", {1, 2}}}) {
    nlohmann::json wrong = doc;
    wrong["meta"]["gpu_state"][key] = bad;
    const auto errors = validate_topology(wrong);
    INFO(key << " = " << bad.dump());
    REQUIRE_FALSE(errors.empty());
    CHECK(errors.front().path == "/meta/gpu_state/" + key);
    CHECK(errors.front().text().find("expected ") != std::string::npos);
  }
  nlohmann::json not_table = doc;
  not_table["meta"]["gpu_state"] = "broken";
  const auto errors = validate_topology(not_table);
  REQUIRE_FALSE(errors.empty());
  CHECK(errors.front().message == "expected a table, [meta.gpu_state], got string \"broken\"");
}

TEST_CASE("fleet --reference counts the keys both hold, never the union", "[fleet][hostile]") {
  test::TempDir dir("fleet-ref-count");
  const fs::path measured = fs::path(MEMTOPO_SOURCE_DIR) / "tests/sim/measured/h100-sxm.toml";
  toml::table ref = toml::parse_file(measured.string());
  size_t ref_keys = 0;
  std::vector<std::string> drop;
  for (const auto& [name, node] : ref)
    if (std::string(name.str()) != "meta" && std::string(name.str()) != "l2" && std::string(name.str()) != "provenance" &&
        std::string(name.str()) != "probes")
      drop.push_back(std::string(name.str()));
  for (const auto& name : drop) ref.erase(name);
  ref_keys = ref["l2"].as_table()->size();
  std::ostringstream text;
  text << ref;
  test::write_file(dir / "ref.toml", text.str());
  fs::create_directory(dir / "fleet");
  std::string gpu = test::read_file(measured);
  for (const char digit : {'1', '2'}) {
    std::string copy = gpu;
    for (size_t at; (at = copy.find("GPU-f32de587")) != std::string::npos;) copy[at + 4] = digit;
    test::write_file(dir / "fleet" / (std::string("gpu") + digit + ".toml"), copy);
  }
  const auto r = run_memtopo("fleet --reference " + quoted(dir / "ref.toml") + " " + quoted(dir / "fleet"));
  INFO(r.output);
  std::smatch m;
  const std::regex counted("([0-9]+) keys compared with the reference");
  REQUIRE(std::regex_search(r.output, m, counted));
  CHECK(std::stoul(m[1]) > 0);
  CHECK(std::stoul(m[1]) <= ref_keys);
}

TEST_CASE("fleet text names each GPU's file where host, device and UUID do not tell them apart", "[host][fleet]") {
  std::vector<FleetMember> same;
  for (const char* file : {"run1.toml", "run2.toml", "run3.toml"}) {
    same.push_back(member("vm", {{"l2.size_bytes", 52428800}}));
    same.back().file = std::string("/data/") + file;
  }
  const std::string text = render_fleet_text(compare_fleet(same, FleetOptions{}));
  INFO(text);
  CHECK(text.find("  file       host  device  uuid  result") != std::string::npos);
  for (const char* file : {"\n  run1.toml  vm", "\n  run2.toml  vm", "\n  run3.toml  vm"}) CHECK(text.find(file) != std::string::npos);
  // GPUs told apart by their host: no file column.
  std::vector<FleetMember> hosts{member("a", {{"l2.size_bytes", 52428800}}), member("b", {{"l2.size_bytes", 52428800}})};
  CHECK(render_fleet_text(compare_fleet(hosts, FleetOptions{})).find("  file ") == std::string::npos);
}
