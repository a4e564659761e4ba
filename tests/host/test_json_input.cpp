// Every command reads a topology as JSON (what `run --format json` and `export --format json`
// write) as it reads the TOML twin: validate, diff, compare, export, draw, plan --timings (report
// reads through the same reader, read_topology_or_report).
#include <catch2/catch.hpp>

#include <string>

#include "helpers.hpp"

using test::kGood;
using test::q;
using test::run_memtopo;

namespace {

struct Twins {
  test::TempDir dir{"json-input"};
  test::fs::path toml = dir / "t.toml", json = dir / "t.json";
  Twins() {
    const std::string run = "run -q --device sim" + kGood + " --only t-basic/source,t-basic/consumer ";
    REQUIRE(run_memtopo(run + "-o " + q(toml)).exit_code == 0);
    REQUIRE(run_memtopo("export --format json " + q(toml) + " -o " + q(json)).exit_code == 0);
    REQUIRE(test::read_file(json).find('{') == 0);
  }
};

}  // namespace

TEST_CASE("json input: validate, diff, compare, export and draw read JSON as its TOML twin", "[host][json]") {
  Twins t;
  const auto v = run_memtopo("validate" + kGood + " " + q(t.json));
  INFO(v.output);
  CHECK(v.exit_code == 0);
  const auto d = run_memtopo("diff " + q(t.toml) + " " + q(t.json));
  INFO(d.output);
  CHECK(d.exit_code == 0);
  CHECK(test::has(d.output, "equal"));
  CHECK(run_memtopo("compare " + q(t.toml) + " " + q(t.json)).exit_code == 0);
  const auto csv_toml = run_memtopo("export --format csv " + q(t.toml));
  const auto csv_json = run_memtopo("export --format csv " + q(t.json));
  CHECK(csv_json.exit_code == 0);
  CHECK(csv_json.output == csv_toml.output);
  const auto draw_toml = run_memtopo("draw " + q(t.toml));
  const auto draw_json = run_memtopo("draw " + q(t.json));
  CHECK(draw_json.exit_code == 0);
  CHECK(draw_json.output == draw_toml.output);
  CHECK(run_memtopo("plan" + kGood + " --only t-basic/consumer --timings " + q(t.json)).exit_code == 0);
}

TEST_CASE("json input: what JSON has and TOML has not is named by its key path", "[host][json]") {
  test::TempDir dir("json-bad");
  test::write_file(dir / "null.json", "{\"meta\": {\"schema_version\": 1, \"host\": null}}");
  const auto n = run_memtopo("validate " + q(dir / "null.json"));
  CHECK(n.exit_code == 2);
  CHECK(test::has(n.output, "/meta/host: null"));
  test::write_file(dir / "syntax.json", "{\"meta\": ");
  const auto s = run_memtopo("diff " + q(dir / "syntax.json") + " " + q(dir / "syntax.json"));
  CHECK(s.exit_code == 2);
  CHECK(test::has(s.output, "not valid JSON"));
  std::string deep = "{\"meta\": {}, \"x\": ";
  for (int i = 0; i < 5000; ++i) deep += "[";
  for (int i = 0; i < 5000; ++i) deep += "]";
  test::write_file(dir / "deep.json", deep + "}");
  const auto d = run_memtopo("draw " + q(dir / "deep.json"));
  CHECK(d.exit_code == 2);
  CHECK(test::has(d.output, "nested deeper than"));
}

TEST_CASE("json input: a schema error names the file and the key path, never line 0", "[host][json][hostile]") {
  Twins t;
  std::string text = test::read_file(t.json);
  const std::string from = "\"schema_version\": 1";
  REQUIRE(text.find(from) != std::string::npos);
  text.replace(text.find(from), from.size(), "\"schema_version\": 0");
  test::write_file(t.dir / "bad.json", text);
  for (const std::string& command : {std::string("validate "), "export --format toml -o " + q(t.dir / "x.toml") + " "}) {
    const auto r = run_memtopo(command + q(t.dir / "bad.json"));
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(test::has(r.output, "bad.json: /meta/schema_version: expected an integer >= 1"));
    CHECK_FALSE(test::has(r.output, ":0:"));
  }
}

TEST_CASE("json input: told from TOML by content, a byte order mark and a .JSON name, NaN with its line",
          "[host][json][hostile]") {
  Twins t;
  const std::string json = test::read_file(t.json);
  test::write_file(t.dir / "bom.json", "\xEF\xBB\xBF" + json);
  CHECK(run_memtopo("validate " + q(t.dir / "bom.json")).exit_code == 0);
  test::fs::create_directory(t.dir / "fleet");
  test::write_file(t.dir / "fleet" / "GPU.JSON", json);
  const auto fleet = run_memtopo("fleet " + q(t.dir / "fleet"));
  INFO(fleet.output);
  CHECK(fleet.exit_code == 0);
  CHECK(test::has(fleet.output, "1 GPU in 1 group"));
  std::string nan = json;
  const size_t at = nan.find("\"schema_version\": 1");
  REQUIRE(at != std::string::npos);
  nan.replace(at, 19, "\"schema_version\": NaN");
  test::write_file(t.dir / "nan.json", nan);
  const auto r = run_memtopo("validate " + q(t.dir / "nan.json"));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  const size_t line = size_t(std::count(nan.begin(), nan.begin() + std::ptrdiff_t(at), '\n')) + 1;
  CHECK(test::has(r.output, "nan.json:" + std::to_string(line) + ": not valid JSON (syntax error"));
  // A number no double holds is refused with the parser's reason, not a crash (a fuzzer's find).
  std::string huge = json;
  huge.replace(at, 19, "\"schema_version\": 1e6854775808");
  test::write_file(t.dir / "huge.json", huge);
  const auto h = run_memtopo("validate " + q(t.dir / "huge.json"));
  INFO(h.output);
  CHECK(h.exit_code == 2);
  CHECK(test::has(h.output, "huge.json:1: not valid JSON ("));
  CHECK(test::has(h.output, "number overflow"));
}
