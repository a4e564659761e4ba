// `memtopo run --format json` and `memtopo export` (JSON, canonical TOML, gpgpusim.config
// lines): the JSON validates against the topology schema and keeps every value and its type,
// TOML comes back unchanged, and every Accel-Sim line parses by GPGPU-Sim's own grammar.
#include <signal.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "../shipped/shipped_run.hpp"
#include "helpers.hpp"
#include "run/output/journal.hpp"
#include "topology/values/schema.hpp"
#include "tools/export/topology_export.hpp"
#include "run_helpers.hpp"
#include "run/output/run_output.hpp"

namespace fs = std::filesystem;
using namespace memtopo::host;
using test::quoted;
using test::run_memtopo;

namespace {

const fs::path kExportGolden = fs::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "export";
using test::kGood;

// Topology files written by `memtopo run` and committed unchanged, and a hand-written one.
std::vector<fs::path> measured_topologies() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured"))
    if (e.path().extension() == ".toml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The output differs from the golden file: keep it beside the build for a look, and fail.
void compare_with_export_golden(const std::string& actual, const std::string& golden_name) {
  test::compare_with_golden(actual, kExportGolden, golden_name);
}

const std::regex kRfc3339("^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$");

// Every TOML value has its JSON counterpart: the same keys, integers as integers, floats as
// floats of the same bits, date-times as their RFC 3339 text.
void check_same_values(const toml::node& t, const nlohmann::json& j, const std::string& where) {
  INFO(where);
  if (const auto* table = t.as_table()) {
    REQUIRE(j.is_object());
    CHECK(j.size() == table->size());
    for (const auto& [k, v] : *table) {
      const std::string key(k.str());
      REQUIRE(j.contains(key));
      check_same_values(v, j.at(key), where + "." + key);
    }
  } else if (const auto* a = t.as_array()) {
    REQUIRE(j.is_array());
    REQUIRE(j.size() == a->size());
    for (size_t i = 0; i < a->size(); ++i) check_same_values(*a->get(i), j.at(i), where + "[" + std::to_string(i) + "]");
  } else if (const auto* i = t.as_integer()) {
    CHECK(j.is_number_integer());
    CHECK(j.get<int64_t>() == i->get());
  } else if (const auto* f = t.as_floating_point()) {
    CHECK(j.is_number_float());
    CHECK(j.get<double>() == f->get());
  } else if (const auto* s = t.as_string()) {
    CHECK(j == s->get());
  } else if (const auto* b = t.as_boolean()) {
    CHECK(j == b->get());
  } else if (const auto* d = t.as_date_time()) {
    REQUIRE(j.is_string());
    std::ostringstream os;
    os << d->get();
    CHECK(j.get<std::string>() == os.str());
    CHECK(std::regex_match(j.get<std::string>(), kRfc3339));
  } else {
    FAIL("unexpected TOML value at " << where);
  }
}

}  // namespace

// --------------------------------------------------------------------------- JSON

TEST_CASE("export: TOML -> JSON -> parse keeps every value and its type, and the JSON validates", "[export]") {
  auto files = measured_topologies();
  files.push_back(kExportGolden / "small.toml");
  files.push_back(fs::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "basic.toml");
  for (const auto& file : files) {
    INFO(file);
    const toml::table doc = toml::parse_file(file.string());
    const std::string text = topology_json_text(doc);
    const nlohmann::json parsed = nlohmann::json::parse(text);
    check_same_values(doc, parsed, "");
    CHECK(validate_topology(parsed).empty());
    CHECK(text.rfind("{\n  \"meta\": {\n    \"schema_version\": 1,", 0) == 0);  // document order, not sorted
  }
  // A whole float stays a float in the text, too.
  const std::string text = topology_json_text(toml::parse_file((kExportGolden / "small.toml").string()));
  CHECK(text.find("\"latency_cycles\": 33.0") != std::string::npos);
  CHECK(text.find("\"created_utc\": \"2026-11-21T16:00:00Z\"") != std::string::npos);
}

TEST_CASE("export: the JSON of a small hand-written topology matches the golden file", "[export]") {
  test::TempDir dir("export-golden");
  const auto r = run_memtopo("export --format json -o " + quoted(dir / "small.json") + " " + quoted(kExportGolden / "small.toml"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  compare_with_export_golden(test::read_file(dir / "small.json"), "small.json");
  // The format follows -o's name; without -o the JSON goes to stdout.
  CHECK(run_memtopo("export -o " + quoted(dir / "by-name.json") + " " + quoted(kExportGolden / "small.toml")).exit_code == 0);
  CHECK(test::read_file(dir / "by-name.json") == test::read_file(dir / "small.json"));
  const auto out = test::run_shell_stdout("\"$EXE\" export " + (kExportGolden / "small.toml").string());
  CHECK(out.exit_code == 0);
  CHECK(out.output == test::read_file(dir / "small.json"));
}

TEST_CASE("export --format csv: one row per value with its unit and provenance, the golden file", "[export]") {
  test::TempDir dir("export-csv");
  const auto r = run_memtopo("export -o " + quoted(dir / "small.csv") + " " + quoted(kExportGolden / "small.toml"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);  // the format follows -o's name
  compare_with_export_golden(test::read_file(dir / "small.csv"), "small.csv");
  // A measured run: every value of every element is a row of eight fields (RFC 4180 quoting).
  const fs::path h100 = fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "report" / "inputs" / "h100" / "topology.toml";
  const toml::table doc = toml::parse_file(h100.string());
  const std::string csv = topology_csv_text(doc);
  size_t rows = 0, values = 0;
  for (const auto& [k, v] : doc)
    if (k != "meta" && k != "provenance" && k != "probes" && k != "sim" && v.is_table()) values += v.as_table()->size();
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  CHECK(line == "element,key,value,unit,bound,confidence,probe,note");
  bool l2_size = false;
  while (std::getline(lines, line)) {
    ++rows;
    size_t fields = 1;
    bool quoted_field = false;
    for (char c : line) {
      if (c == '"') quoted_field = !quoted_field;
      if (c == ',' && !quoted_field) ++fields;
    }
    INFO(line);
    CHECK(fields == 8);
    if (line.rfind("l2,size_bytes,26214400,bytes,exact,", 0) == 0) l2_size = true;
  }
  CHECK(rows == values);
  CHECK(l2_size);
}

TEST_CASE("export: a NaN has no JSON form and is refused with its line", "[export]") {
  test::TempDir dir("export-nan");
  std::string text = test::read_file(kExportGolden / "small.toml");
  const size_t at = text.find("[l2]");
  text.insert(at, "hit_ratio = nan\n\n");
  const auto line = std::to_string(std::count(text.begin(), text.begin() + at, '\n') + 1);
  test::write_file(dir / "nan.toml", text);
  const auto r = run_memtopo("export -o " + quoted(dir / "nan.json") + " " + quoted(dir / "nan.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("nan.toml:" + line + ": /l1d/hit_ratio: is nan: a topology holds finite numbers only") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "nan.json"));
}

TEST_CASE("export --format toml reproduces the input", "[export]") {
  test::TempDir dir("export-toml");
  SECTION("a file memtopo run wrote comes back byte for byte") {
    for (const auto& file : measured_topologies()) {
      INFO(file);
      CHECK(topology_toml_text(toml::parse_file(file.string())) == test::read_file(file));
    }
  }
  SECTION("a hand-written file keeps every value") {
    const auto r = run_memtopo("export --format toml -o " + quoted(dir / "out.toml") + " " + quoted(kExportGolden / "small.toml"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const toml::table in = toml::parse_file((kExportGolden / "small.toml").string());
    const toml::table out = toml::parse_file((dir / "out.toml").string());
    CHECK(in == out);
    CHECK(out["meta"]["created_utc"].is_date_time());
    CHECK(out["provenance"]["l1d"]["size_bytes"].as_table()->is_inline());
  }
}

TEST_CASE("export: the schema, and refusals", "[export]") {
  test::TempDir dir("export-refuse");
  const std::string small = quoted(kExportGolden / "small.toml");
  SECTION("--schema writes the compiled-in topology schema") {
    const auto r = test::run_shell_stdout("\"$EXE\" export --schema");
    CHECK(r.exit_code == 0);
    CHECK(r.output == std::string(topology_schema_text()));
    CHECK(run_memtopo("export --schema " + small).exit_code == 2);
    CHECK(run_memtopo("export --schema --format json").exit_code == 2);
  }
  SECTION("a TOML syntax error is reported as FILE:LINE:COL, exit 2") {
    test::write_file(dir / "bad.toml", "[meta]\nschema_version = \n");
    const auto r = run_memtopo("export " + quoted(dir / "bad.toml"));
    CHECK(r.exit_code == 2);
    CHECK(std::regex_search(r.output, std::regex("bad.toml:2:[0-9]+: TOML syntax error")));
  }
  SECTION("a file that is not a topology: the schema errors with lines, exit 1, nothing written") {
    test::write_file(dir / "t.toml", "[meta]\nschema_version = 0\n");
    const auto r = run_memtopo("export -o " + quoted(dir / "t.json") + " " + quoted(dir / "t.toml"));
    INFO(r.output);
    CHECK(r.exit_code == 1);
    CHECK(r.output.find("t.toml:2: /meta/schema_version: expected an integer >= 1") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "t.json"));
  }
  SECTION("usage errors: exit 2") {
    const std::vector<std::string> refused{"export",
                                           "export --format yaml " + small,
                                           "export --accel-sim --format json " + small,
                                           "export " + quoted(dir.path),
                                           "export " + quoted(dir / "missing.toml"),
                                           "export -o " + quoted(dir / "no" / "x.json") + " " + small};
    for (const std::string& args : refused) {
      const auto r = run_memtopo(args);
      INFO(args << "\n" << r.output);
      CHECK(r.exit_code == 2);
    }
    CHECK(run_memtopo("export --format yaml " + small).output.find("'yaml' is not a format export writes") !=
          std::string::npos);
  }
}

// --------------------------------------------------------------------------- run --format json

TEST_CASE("run --format json: the output validates against the topology schema", "[export]") {
  test::TempDir dir("export-run");
  const auto out = dir / "t.json";
  const auto r = run_memtopo("run --device sim -q" + kGood + " --only device-info,t-basic/source -o " + quoted(out));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const nlohmann::json j = nlohmann::json::parse(test::read_file(out));
  CHECK(validate_topology(j).empty());
  CHECK(std::regex_match(j["meta"]["created_utc"].get<std::string>(), kRfc3339));
  CHECK(j["device"]["sm_count"].is_number_integer());
  CHECK(j["t"]["value_bytes"] == 42);
  CHECK(j["probes"]["t-basic/source"]["duration_s"].is_number_float());
  CHECK_FALSE(fs::exists(journal_path_for(out)));
  CHECK(r.output.find("wrote " + out.string()) == std::string::npos);  // -q: no tally on success

  // A --format the name contradicts is refused (docs/host.md, "Output names"); -o - writes JSON
  // to stdout (the summary goes to stderr).
  CHECK(run_memtopo("run --device sim -q --only device-info --format toml -o " + quoted(dir / "x.json")).exit_code == 2);
  CHECK_FALSE(fs::exists(dir / "x.json"));
  const auto piped = test::run_shell_stdout("\"$EXE\" run --device sim -q --only device-info --format json -o - 2>/dev/null");
  CHECK(piped.exit_code == 0);
  CHECK(validate_topology(nlohmann::json::parse(piped.output)).empty());
  const auto bad = run_memtopo("run --device sim --format yaml -o " + quoted(dir / "y.toml"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.output.find("'yaml' is not a format run writes; use toml or json") != std::string::npos);
}

TEST_CASE("run --format json: an interrupted run keeps its partial file in TOML, --resume writes JSON",
          "[export][interrupt]") {
  test::TempDir dir("export-int");
  test::write_file(dir / "slow.toml", "[probes.\"t-slow/wait\"]\nmarker = " +
                                          memtopo::host::toml_string_literal((dir / "started").string()) + "\n");
  const auto out = dir / "out.json";
  const std::vector<std::string> args{"run", "--device", "sim", "--only", "t-slow", "--plugin-path",
                                      test::plugin_set("slow").string(), "--config", (dir / "slow.toml").string(),
                                      "-o", out.string()};
  const pid_t pid = test::spawn_memtopo(args, dir / "log.txt");
  REQUIRE(test::wait_for_file(dir / "started"));
  ::kill(pid, SIGINT);
  CHECK(test::wait_exit(pid) == 1);
  INFO(test::read_file(dir / "log.txt"));
  CHECK_FALSE(fs::exists(out));
  const auto partial = dir / "out.json.partial.toml";
  REQUIRE(fs::exists(partial));
  CHECK(toml::parse_file(partial.string())["t"]["quick_bytes"].value<int64_t>() == 1);
  const auto r = run_memtopo("run --resume --device sim --only t-slow --plugin-path " + quoted(test::plugin_set("slow")) +
                             " -o " + quoted(out));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(nlohmann::json::parse(test::read_file(out))["t"]["quick_bytes"] == 1);
  CHECK_FALSE(fs::exists(partial));
}

TEST_CASE("run --format json: a fallback keeps the TOML text under a TOML name", "[export][output]") {
  namespace cli = memtopo::host::cli;
  test::TempDir dir("export-fallback");
  fs::create_directories(dir / "gone");
  RunRequest args;
  args.output = (dir / "gone" / "out.json").string();
  args.quiet = true;
  const cli::OutputTarget target = cli::resolve_output(args.output);
  fs::remove_all(dir / "gone");  // the output and NAME.partial.toml beside it cannot be written now
  RunReport report;
  ProbeOutcome o;
  o.probe = "t-basic/source";
  o.status = Status::Ok;
  report.outcomes.push_back(o);
  const char* old_tmpdir = std::getenv("TMPDIR");
  const std::string saved = old_tmpdir ? old_tmpdir : "";
  ::setenv("TMPDIR", dir.path.c_str(), 1);
  Meta meta = default_meta();
  meta.backend = meta.device_spec = "sim";
  const int status = cli::finish(args, target, Plan{}, meta, report, cli::JournalState{}, cli::JournalRecorder(nullptr));
  if (old_tmpdir) ::setenv("TMPDIR", saved.c_str(), 1);
  else ::unsetenv("TMPDIR");
  CHECK(status == 1);
  const auto kept = dir / ("memtopo-" + std::to_string(::getpid()) + "-out.json.toml");
  REQUIRE(fs::exists(kept));
  CHECK(toml::parse_file(kept.string())["probes"]["t-basic/source"]["status"].value<std::string>() == "ok");
}

// --------------------------------------------------------------------------- Accel-Sim

namespace {

enum class Kind { Count, Bool, Cache, Clocks, KibList };

// The options export --accel-sim may write, as GPGPU-Sim registers them (gpu-sim.cc).
const std::map<std::string, Kind>& known_options() {
  static const std::map<std::string, Kind> m{
      {"-gpgpu_n_clusters", Kind::Count},          {"-gpgpu_n_cores_per_cluster", Kind::Count},
      {"-gpgpu_n_mem", Kind::Count},               {"-gpgpu_n_sub_partition_per_mchannel", Kind::Count},
      {"-gpgpu_clock_domains", Kind::Clocks},      {"-gpgpu_cache:dl1", Kind::Cache},
      {"-gpgpu_l1_latency", Kind::Count},          {"-gpgpu_gmem_skip_L1D", Kind::Bool},
      {"-gpgpu_adaptive_cache_config", Kind::Bool}, {"-gpgpu_unified_l1d_size", Kind::Count},
      {"-gpgpu_shmem_option", Kind::KibList},      {"-gpgpu_l1_cache_write_ratio", Kind::Count},
      {"-gpgpu_shmem_size", Kind::Count},          {"-gpgpu_shmem_per_block", Kind::Count},
      {"-gpgpu_shmem_num_banks", Kind::Count},     {"-gpgpu_smem_latency", Kind::Count},
      {"-gpgpu_cache:dl2", Kind::Cache},           {"-gpgpu_cache:dl2_texture_only", Kind::Bool},
      {"-gpgpu_l2_rop_latency", Kind::Count},      {"-dram_latency", Kind::Count},
      {"-gpgpu_tex_cache:l1", Kind::Cache},        {"-gpgpu_const_cache:l1", Kind::Cache}};
  return m;
}

struct CacheString {
  unsigned sets = 0, line = 0, ways = 0;
};

bool power_of_two(unsigned v) { return v && !(v & (v - 1)); }

// A cache string read the way cache_config::init reads it (gpu-cache.h), with its checks: the
// field letters it accepts, the 14 fields a FIFO MSHR needs, 32 B sectors of a 128 B line, a
// port width dividing the line, the policy pairs it refuses. The string must be exactly the
// fields read: nothing before, between or after them.
std::string cache_string_error(const std::string& v, CacheString* out) {
  char ct, rp, wp, ap, wap, sif, mshr;
  unsigned sets, line, ways, entries, merge, mq = 0, fifo = 0, port = 0;
  const int n = std::sscanf(v.c_str(), "%c:%u:%u:%u,%c:%c:%c:%c:%c,%c:%u:%u,%u:%u,%u", &ct, &sets, &line, &ways, &rp, &wp,
                            &ap, &wap, &sif, &mshr, &entries, &merge, &mq, &fifo, &port);
  if (n < 13) return "fewer than 13 fields";
  char back[160];
  const std::string head = std::string(1, ct) + ":%u:%u:%u," + rp + ":" + wp + ":" + ap + ":" + wap + ":" + sif + "," + mshr;
  if (n == 13) std::snprintf(back, sizeof back, (head + ":%u:%u,%u").c_str(), sets, line, ways, entries, merge, mq);
  if (n == 14) std::snprintf(back, sizeof back, (head + ":%u:%u,%u:%u").c_str(), sets, line, ways, entries, merge, mq, fifo);
  if (n == 15)
    std::snprintf(back, sizeof back, (head + ":%u:%u,%u:%u,%u").c_str(), sets, line, ways, entries, merge, mq, fifo, port);
  if (v != back) return "not exactly the fields GPGPU-Sim reads (" + std::string(back) + ")";
  if (std::string("NS").find(ct) == std::string::npos) return "cache type not N or S";
  if (std::string("LF").find(rp) == std::string::npos) return "replacement not L or F";
  if (std::string("RBTEL").find(wp) == std::string::npos) return "bad write policy";
  if (std::string("mfs").find(ap) == std::string::npos) return "bad allocation policy";
  if (std::string("NWFL").find(wap) == std::string::npos) return "bad write-allocate policy";
  if (std::string("HPCLX").find(sif) == std::string::npos) return "bad set index function";
  if (std::string("FTAS").find(mshr) == std::string::npos) return "bad MSHR type";
  if ((mshr == 'F' || mshr == 'T') && n != 14) return "a FIFO MSHR takes exactly 14 fields";
  if (!power_of_two(sets) || !power_of_two(line) || ways == 0) return "sets and line must be powers of two, ways > 0";
  if (ct == 'S' && line != 128) return "a sector cache has 4 sectors of 32 B: line 128";
  if (n == 15 && (port == 0 || line % port != 0)) return "the data port width must divide the line";
  if (ap != 'm' && wp == 'B') return "a write-back cache cannot allocate on fill";
  if ((wap == 'F' || wap == 'L') && ap == 'f') return "fetch-on-write needs allocate on miss";
  if (entries == 0 || merge == 0 || mq == 0) return "queue sizes must be positive";
  *out = {sets, line, ways};
  return "";
}

bool positive_count(const std::string& v) {
  return !v.empty() && v.find_first_not_of("0123456789") == std::string::npos && std::stoll(v) > 0;
}

// Every line of a gpgpusim.config fragment: a comment, or `-option value  # source` with a
// known option and a value of its kind. Returns the values by option.
std::map<std::string, std::string> parse_config_lines(const std::string& text) {
  std::map<std::string, std::string> values;
  std::istringstream in(text);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    INFO("line " << n << ": " << line);
    const auto hash = line.find('#');
    if (hash != 0 && line.find_first_not_of(' ') != std::string::npos)
      CHECK(hash != std::string::npos);  // every option line names its source
    std::istringstream words(line.substr(0, hash));
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    if (w.empty()) continue;
    REQUIRE(w.size() == 2);
    REQUIRE(known_options().count(w[0]) == 1);
    CHECK(values.count(w[0]) == 0);
    values[w[0]] = w[1];
    CacheString c;
    double clocks[4];
    char end = 0;
    switch (known_options().at(w[0])) {
      case Kind::Count: CHECK(positive_count(w[1])); break;
      case Kind::Bool: CHECK((w[1] == "0" || w[1] == "1")); break;
      case Kind::Cache: CHECK(cache_string_error(w[1], &c) == ""); break;
      case Kind::Clocks:
        CHECK(std::sscanf(w[1].c_str(), "%lf:%lf:%lf:%lf%c", &clocks[0], &clocks[1], &clocks[2], &clocks[3], &end) == 4);
        for (double x : clocks) CHECK(x > 0);
        break;
      case Kind::KibList: CHECK(std::regex_match(w[1], std::regex("^[0-9]+(,[0-9]+)*$"))); break;
    }
  }
  return values;
}

int64_t cache_bytes(const std::string& value) {
  CacheString c;
  REQUIRE(cache_string_error(value, &c) == "");
  return int64_t(c.sets) * c.line * c.ways;
}

// `slices` copies of the cache of `value` hold the measured size, to one line: a size measured
// as a footprint can be a step (a line) off the capacity.
void check_capacity(const std::string& value, int64_t slices, std::optional<int64_t> size) {
  INFO(value << " x " << slices << " for " << (size ? *size : -1));
  REQUIRE(size);
  CacheString c;
  REQUIRE(cache_string_error(value, &c) == "");
  CHECK(std::llabs(int64_t(c.sets) * c.line * c.ways * slices - *size) <= int64_t(c.line));
}

// The sizes in the lines agree with the topology they came from.
void check_against_topology(const std::map<std::string, std::string>& v, const toml::table& doc) {
  const auto size = [&](const char* e) { return doc[e]["size_bytes"].value<int64_t>(); };
  for (const auto& [option, element] : std::map<std::string, const char*>{
           {"-gpgpu_tex_cache:l1", "texture"}, {"-gpgpu_const_cache:l1", "constant_l1"}})
    if (v.count(option) && size(element)) check_capacity(v.at(option), 1, size(element));
  const bool adaptive = v.count("-gpgpu_adaptive_cache_config") && v.at("-gpgpu_adaptive_cache_config") == "1";
  if (v.count("-gpgpu_cache:dl1") && size("l1d") && !adaptive) check_capacity(v.at("-gpgpu_cache:dl1"), 1, size("l1d"));
  if (v.count("-gpgpu_cache:dl1") && size("l1d") && adaptive) {
    // What GPGPU-Sim keeps for a kernel without shared memory (the smallest option): round(ways
    // x (1 - option / unified)) ways of the dl1, the L1 measured at the smallest carveout.
    CacheString c;
    REQUIRE(cache_string_error(v.at("-gpgpu_cache:dl1"), &c) == "");
    const double unified = double(std::stoll(v.at("-gpgpu_unified_l1d_size")));
    const double smallest = double(std::stoll(v.at("-gpgpu_shmem_option")));  // the list is sorted
    const auto ways = int64_t(double(c.ways) * (1 - smallest / unified) + 0.5);
    INFO(v.at("-gpgpu_cache:dl1") << " with " << smallest << " of " << unified << " KiB shared");
    CHECK(std::llabs(int64_t(c.sets) * c.line * ways - *size("l1d")) <= int64_t(c.sets) * c.line);
  }
  // One sub-partition's share of the whole L2: l2.size_bytes, or that many times the partitions
  // where one SM filled only its near partition (far copies, or partitions x size the API's).
  std::optional<int64_t> l2_whole = size("l2");
  const auto parts = doc["l2"]["partitions"].value<int64_t>();
  const auto api = doc["l2"]["api_size_bytes"].value<int64_t>() ? doc["l2"]["api_size_bytes"].value<int64_t>()
                                                                 : doc["device"]["l2_bytes"].value<int64_t>();
  if (l2_whole && parts && *parts > 1 &&
      (doc["l2"]["far_copy_bytes"].value_or(int64_t(0)) > 0 || (api && std::llabs(*parts * *l2_whole - *api) <= *api / 50)))
    l2_whole = *l2_whole * *parts;
  if (v.count("-gpgpu_cache:dl2"))
    check_capacity(v.at("-gpgpu_cache:dl2"),
                   std::stoll(v.at("-gpgpu_n_mem")) * std::stoll(v.at("-gpgpu_n_sub_partition_per_mchannel")), l2_whole);
  if (v.count("-gpgpu_unified_l1d_size"))  // GPGPU-Sim asserts the unified size is a multiple of the dl1's
    CHECK(std::stoll(v.at("-gpgpu_unified_l1d_size")) % (cache_bytes(v.at("-gpgpu_cache:dl1")) / 1024) == 0);
  if (const auto lat = doc["l1d"]["latency_cycles"].value<double>())
    CHECK(v.at("-gpgpu_l1_latency") == std::to_string(std::llround(*lat)));
  if (const auto sms = doc["device"]["sm_count"].value<int64_t>()) CHECK(v.at("-gpgpu_n_clusters") == std::to_string(*sms));
}

}  // namespace

TEST_CASE("export --accel-sim: every line parses by GPGPU-Sim's grammar and matches the topology", "[export]") {
  test::TempDir dir("export-accel");
  auto files = measured_topologies();
  files.push_back(kExportGolden / "small.toml");
  // The newest H100 run: nine carveout levels in whole KiB, so the adaptive L1.
  const fs::path h100 = fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "report" / "inputs" / "h100" / "topology.toml";
  files.push_back(h100);
  for (const auto& file : files) {
    INFO(file);
    const auto out = dir / (file.parent_path().filename().string() + "-" + file.stem().string() + ".config");
    const auto r = run_memtopo("export --accel-sim -o " + quoted(out) + " " + quoted(file));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const std::string text = test::read_file(out);
    const auto values = parse_config_lines(text);
    check_against_topology(values, toml::parse_file(file.string()));
    if (file.filename() != "small.toml")  // the measured files determine every cache line
      for (const char* o : {"-gpgpu_cache:dl1", "-gpgpu_cache:dl2", "-gpgpu_l2_rop_latency", "-dram_latency",
                            "-gpgpu_tex_cache:l1", "-gpgpu_const_cache:l1"})
        CHECK(values.count(o) == 1);
    CHECK(text.find("default: not measured by memtopo") != std::string::npos);
    if (file == h100) {
      CHECK(values.at("-gpgpu_adaptive_cache_config") == "1");
      CHECK(values.at("-gpgpu_shmem_option") == "8,16,32,64,100,132,164,196,228");
    }
  }
}

TEST_CASE("export --accel-sim: the shipped simulated devices, measured, export lines GPGPU-Sim accepts", "[export]") {
  for (const char* device : {"kepler-like", "pascal-like", "hopper-like"}) {
    INFO(device);
    // The default run the replay and report tests read too (tests/shipped/measured-run).
    const shipped::Run run = shipped::measured_run(device);
    INFO("the measured run's messages: " << run.log.string());
    REQUIRE(fs::exists(run.topology));
    const std::string topo = run.topology.string();
    const auto r = test::run_shell_stdout("\"$EXE\" export --accel-sim " + quoted(run.topology));
    REQUIRE(r.exit_code == 0);
    const auto values = parse_config_lines(r.output);
    check_against_topology(values, toml::parse_file(topo));
    for (const char* o : {"-gpgpu_cache:dl1", "-gpgpu_cache:dl2", "-gpgpu_l1_latency", "-gpgpu_l2_rop_latency",
                          "-dram_latency", "-gpgpu_tex_cache:l1", "-gpgpu_const_cache:l1", "-gpgpu_clock_domains"})
      CHECK(values.count(o) == 1);
  }
}

TEST_CASE("export --accel-sim: the checker refuses what GPGPU-Sim refuses", "[export]") {
  CacheString c;
  CHECK(cache_string_error("S:4:128:64,L:T:m:L:L,A:512:64,16:0,32", &c) == "");
  CHECK(c.sets * c.line * c.ways == 32768);
  CHECK(cache_string_error("N:4:128:256,L:R:m:N:L,T:512:8,128:2", &c) == "");
  CHECK(cache_string_error("N:128:64:8,L:R:f:N:L,S:2:64,4", &c) == "");
  CHECK(cache_string_error("S:4:64:64,L:T:m:L:L,A:512:64,16:0,32", &c) != "");    // sector line
  CHECK(cache_string_error("N:6:128:64,L:T:m:L:L,A:512:64,16:0,32", &c) != "");   // sets
  CHECK(cache_string_error("N:4:128:256,L:R:m:N:L,T:512:8,128:2,32", &c) != "");  // FIFO fields
  CHECK(cache_string_error("N:4:128:64,L:B:f:N:L,A:512:64,16:0,32", &c) != "");   // write-back on fill
  CHECK(cache_string_error("N:4:128:64;L:T:m:L:L,A:512:64,16:0,32", &c) != "");   // separator
  CHECK(cache_string_error("N:4:128:64,L:T:m:L:L,A:512:64,16:0,32 ", &c) != "");  // trailing text
  CHECK(cache_string_error("N:4:128:64,L:T:m:L:L,A:512:64,16:0,48", &c) != "");   // port width
}

TEST_CASE("export --accel-sim: the lines of the measured H100 match the golden file", "[export]") {
  const auto h100 = fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "h100-sxm.toml";
  const auto r = test::run_shell_stdout("\"$EXE\" export --accel-sim " + h100.string());
  REQUIRE(r.exit_code == 0);
  compare_with_export_golden(r.output, "h100-sxm.gpgpusim.config");
}

TEST_CASE("export --accel-sim --base: a complete config, the base's values replaced in place", "[export]") {
  test::TempDir dir("export-accel-base");
  const auto h100 = fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "report" / "inputs" / "h100" / "topology.toml";
  const auto base = kExportGolden / "base.gpgpusim.config";
  const auto r = test::run_shell_stdout("\"$EXE\" export --accel-sim --base " + base.string() + " " + h100.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  compare_with_export_golden(r.output, "h100-on-base.gpgpusim.config");
  // GPGPU-Sim reads the options in order and the last wins: each of ours is set once, the base's
  // options the topology does not determine keep the base's value.
  // What GPGPU-Sim ends with: each option's last value (the base's lines need no comment).
  const auto last_values = [](const std::string& text) {
    std::map<std::string, std::string> v;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::string option, value;
      if (words >> option >> value && option[0] == '-') v[option] = value;
    }
    return v;
  };
  const auto values = last_values(r.output);
  const auto ours = parse_config_lines(test::run_shell_stdout("\"$EXE\" export --accel-sim " + h100.string()).output);
  for (const auto& [option, value] : ours)
    if (option != "-gpgpu_n_cores_per_cluster") CHECK(values.at(option) == value);
  CHECK(values.at("-gpgpu_ptx_force_max_capability") == "90");
  CHECK(values.at("-gpgpu_n_cores_per_cluster") == "2");  // memtopo's default: the base's stays
  CHECK(r.output.find("# base: -gpgpu_n_clusters 144") != std::string::npos);
  // Refusals: a base for another format, a base that does not exist.
  CHECK(run_memtopo("export --format json --base " + quoted(base) + " " + quoted(h100)).exit_code == 2);
  const auto missing = run_memtopo("export --accel-sim --base " + quoted(dir / "none.config") + " " + quoted(h100));
  CHECK(missing.exit_code == 2);
  CHECK(missing.output.find("no such file") != std::string::npos);
}
