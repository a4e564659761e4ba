// `memtopo export --format mt4g`: the committed H100 run in MT4G's JSON layout matches its golden
// file, holds every field sys-sage's MT4G parser requires with the type and encoding it reads
// (docs/mt4g.md), and carries the topology's values field by field in MT4G's units.
#include <cmath>
#include <string>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "helpers.hpp"
#include "run_helpers.hpp"

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

const fs::path kH100 = fs::path(MEMTOPO_SOURCE_DIR) / "tests" / "sim" / "measured" / "h100-sxm.toml";

// What sys-sage reads with .get<T>() on a required path: present, not null, of the type.
void require_number(const json& j, const char* field, bool integer = false) {
  INFO(field);
  REQUIRE(j.contains(field));
  CHECK((integer ? j[field].is_number_integer() : j[field].is_number()));
}
void require_value(const json& j, const char* field, bool integer = true) {
  INFO(field);
  REQUIRE(j.contains(field));
  require_number(j[field], "value", integer);
}
void require_size(const json& j, const char* field) {
  INFO(field);
  REQUIRE(j.contains(field));
  require_number(j[field], "size", true);
  CHECK(j[field]["size"].get<int64_t>() > 0);
}
void require_cache(const json& j) {  // texture, readOnly, constant l1: size, fetch, latency
  require_size(j, "size");
  require_size(j, "fetchGranularity");
  REQUIRE(j.contains("latency"));
  require_number(j["latency"], "mean");
}
// A level whose latency sys-sage reads reads both rates with it.
void require_rates_with_latency(const json& j) {
  if (!j.contains("latency")) return;
  require_number(j["latency"], "mean");
  require_value(j, "readBandwidth", false);
  require_value(j, "writeBandwidth", false);
}
void no_nulls(const json& j, const std::string& where) {
  INFO(where);
  CHECK_FALSE(j.is_null());
  if (j.is_object())
    for (const auto& [k, v] : j.items()) no_nulls(v, where + "." + k);
  if (j.is_array())
    for (const auto& v : j) no_nulls(v, where + "[]");
}

json exported(const fs::path& topology) {
  const auto r = test::run_shell_stdout("\"$EXE\" export --format mt4g " + topology.string());
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return json::parse(r.output);
}

}  // namespace

TEST_CASE("export --format mt4g: the measured H100 matches the golden file", "[export][mt4g]") {
  const auto r = test::run_shell_stdout("\"$EXE\" export --format mt4g " + kH100.string());
  REQUIRE(r.exit_code == 0);
  test::compare_with_golden(r.output, fs::path(MEMTOPO_HOST_TEST_DIR) / "golden" / "export", "h100-sxm.mt4g.json");
}

TEST_CASE("export --format mt4g: every field sys-sage requires, in the encoding it reads", "[export][mt4g]") {
  const json d = exported(kH100);
  no_nulls(d, "");
  const json& g = d["general"];
  CHECK(g["name"].is_string());
  CHECK(g["vendor"].is_string());
  require_number(g["computeCapability"], "major", true);
  require_number(g["computeCapability"], "minor", true);
  require_value(g, "clockRate");
  const json& c = d["compute"];
  for (const char* f : {"multiProcessorCount", "numberOfCoresPerMultiProcessor", "maxThreadsPerBlock", "warpSize",
                        "maxThreadsPerMultiProcessor", "maxBlocksPerMultiProcessor"}) {
    require_number(c, f, true);
    CHECK(c[f].get<int64_t>() >= 1);
  }
  const json& m = d["memory"];
  for (const char* f : {"totalGlobalMem", "memoryClockRate", "memoryBusWidth"}) require_value(m["main"], f);
  require_rates_with_latency(m["main"]);
  require_value(m["l2"], "size");
  CHECK(m["l2"]["size"]["value"].get<int64_t>() < (int64_t(1) << 31));  // sys-sage reads it as int
  require_rates_with_latency(m["l2"]);
  // constant: totalConstMem alone, or with both l1 and l1.5.
  const json& k = m["constant"];
  require_value(k, "totalConstMem");
  if (k.size() > 1) {
    require_size(k["l1.5"], "size");
    require_size(k["l1.5"], "fetchGranularity");
    if (!k["l1"].contains("sharedWith")) require_cache(k["l1"]);
  }
  require_value(m["shared"], "sharedMemPerBlock");
  require_value(m["shared"], "sharedMemPerMultiProcessor");
  CHECK(m["l1"].is_object());
  for (const char* f : {"texture", "readOnly"})
    if (m.contains(f)) require_cache(m[f]);
}

TEST_CASE("export --format mt4g: the topology's values, field by field, in MT4G's units", "[export][mt4g]") {
  const json d = exported(kH100);
  const toml::table t = toml::parse_file(kH100.string());
  const auto num = [&](const char* path) { return t.at_path(path).value<double>().value_or(-1); };
  const json& m = d["memory"];
  CHECK(d["general"]["clockRate"]["value"].get<double>() == num("device.sm_clock_khz"));
  CHECK(d["compute"]["multiProcessorCount"].get<double>() == num("device.sm_count"));
  CHECK(m["main"]["totalGlobalMem"]["value"].get<double>() == num("device.global_memory_bytes"));
  CHECK(m["main"]["latency"]["mean"].get<double>() == num("dram.latency_cycles"));
  CHECK(m["main"]["readBandwidth"]["value"].get<double>() * std::pow(2.0, 30) ==
        Approx(num("throughput.dram_read_bytes_per_second")));
  CHECK(m["l2"]["size"]["value"].get<double>() == num("device.l2_bytes"));
  CHECK(m["l2"]["lineSize"]["size"].get<double>() == num("l2.line_bytes"));
  CHECK(m["l2"]["latency"]["mean"].get<double>() == num("l2.latency_cycles"));
  CHECK(m["l1"]["size"]["size"].get<double>() == num("l1d.size_bytes"));
  CHECK(m["l1"]["latency"]["mean"].get<double>() == num("l1d.latency_cycles"));
  CHECK(m["shared"]["latency"]["mean"].get<double>() == num("shared.latency_cycles"));
  // The texture and read-only paths use the L1's storage: each names the others, as MT4G does.
  CHECK(m["l1"]["sharedWith"] == json{"Read Only", "Texture"});
  // A bound is no size: the constant L1.5's size is one here, so the constant caches are left
  // out, and meta says why.
  CHECK(m["constant"].size() == 1);
  CHECK(d["meta"]["leftOut"].dump().find("constant_l15.size_bytes is an at_least bound") != std::string::npos);
}

TEST_CASE("export --format mt4g: a .json name fits, another name is refused", "[export][mt4g]") {
  test::TempDir dir("export-mt4g");
  CHECK(test::run_memtopo("export --format mt4g -o " + test::quoted(dir.path / "h100.json") + " " +
                          test::quoted(kH100)).exit_code == 0);
  CHECK(json::parse(test::read_file(dir.path / "h100.json"))["compute"]["multiProcessorCount"] == 132);
  CHECK(test::run_memtopo("export --format mt4g -o " + test::quoted(dir.path / "h100.toml") + " " +
                          test::quoted(kH100)).exit_code == 2);
}
