// Config file: values, and errors with file:line (or file:line:column for syntax).
#include "helpers.hpp"
#include "run/planning/config.hpp"

using namespace memtopo::host;
using test::good_registry;

namespace {

std::vector<std::string> errors_of(const std::string& text) {
  try {
    parse_config(text, "my.toml", good_registry());
  } catch (const ConfigError& e) {
    return e.messages;
  }
  return {};
}

}  // namespace

TEST_CASE("a valid config file is read", "[host][config]") {
  const Config c = parse_config(R"(
[run]
probes = ["t-basic", "t-fails/broken"]
skip = ["t-basic/rogue"]
device = "sim"
raw_dir = "raw"
verify = true

[probes."t-basic/source"]
value = 7

[probes."t-basic/consumer"]
factor = 3          # an integer is fine for a float option
)",
                                "conf/my.toml", good_registry());
  CHECK(c.probes == std::vector<std::string>{"t-basic", "t-fails/broken"});
  CHECK(c.skip == std::vector<std::string>{"t-basic/rogue"});
  CHECK(c.device == "sim");
  CHECK(c.raw_dir == "conf/raw");  // relative to the config file
  CHECK(c.verify == true);
  CHECK(c.options.at("t-basic/source").at("value").i == 7);
  CHECK(c.options.at("t-basic/consumer").at("factor").type == MT_VALUE_FLOAT);
  CHECK(c.options.at("t-basic/consumer").at("factor").f == 3.0);
}

TEST_CASE("config errors name the file and line", "[host][config]") {
  SECTION("[run] verify not a boolean") {
    const auto e = errors_of("[run]\nverify = \"yes\"\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == "my.toml:2: [run] verify must be true or false");
  }
  SECTION("unknown probe in [run] probes") {
    const auto e = errors_of("[run]\nprobes = [\n  \"t-basic\",\n  \"no-such-probe\",\n]\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == "my.toml:4: [run] probes: unknown probe, plugin or result key 'no-such-probe' (memtopo list shows the loaded ones)");
  }
  SECTION("unknown probe in [probes]") {
    const auto e = errors_of("\n\n[probes.\"t-basic/nope\"]\nx = 1\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0].rfind("my.toml:3: [probes.\"t-basic/nope\"]: unknown probe 't-basic/nope'", 0) == 0);
  }
  SECTION("unknown option") {
    const auto e = errors_of("[probes.\"t-basic/source\"]\nvalue = 1\nvalu = 2\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == "my.toml:3: unknown option 'valu' for probe t-basic/source (known: value)");
  }
  SECTION("option of the wrong type") {
    const auto e = errors_of("[probes.\"t-basic/source\"]\nvalue = \"many\"\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == "my.toml:2: option value of t-basic/source: expected integer");
  }
  SECTION("unknown keys") {
    const auto e = errors_of("[run]\nprobs = [\"t-basic\"]\n[extra]\n");
    REQUIRE(e.size() == 2);
    CHECK(e[0].rfind("my.toml:3: unknown key 'extra'", 0) == 0);
    CHECK(e[1].rfind("my.toml:2: unknown key 'probs' in [run]", 0) == 0);
  }
  SECTION("a device that is none of the forms") {
    const auto e = errors_of("[run]\ndevice = \"gpu0\"\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == "my.toml:2: [run] device: 'gpu0' is not a device; use auto, cuda, cuda:N (N a GPU number), sim or "
                  "sim:FILE (a device description)");
  }
  SECTION("an empty probe list") {
    const auto e = errors_of("[run]\nprobes = []\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0] == "my.toml:2: [run] probes is empty; remove the key to run every probe, or name the probes to run");
  }
  SECTION("syntax error with line and column") {
    const auto e = errors_of("[run]\nprobes = [\"a\"\ndevice = \"sim\"\n");
    REQUIRE(e.size() == 1);
    CHECK(e[0].rfind("my.toml:3:", 0) == 0);
    CHECK(e[0].find("TOML syntax error") != std::string::npos);
  }
}

TEST_CASE("load_config reports an unreadable file", "[host][config]") {
  CHECK_THROWS_WITH(load_config("/nonexistent/x.toml", good_registry()),
                    "/nonexistent/x.toml: no such file; name the config's TOML file (--config FILE)");
  test::TempDir dir("config-folder");
  CHECK_THROWS_WITH(load_config(dir.path, good_registry()),
                    dir.path.string() + ": is a folder, not a regular file; name the config's TOML file (--config FILE)");
}

TEST_CASE("[run] probes takes result keys, [run] skip does not", "[host][config]") {
  const Config c = parse_config("[run]\nprobes = [\"t.value_bytes\", \"t-fails\"]\n", "my.toml", good_registry());
  CHECK(c.probes == std::vector<std::string>{"t.value_bytes", "t-fails"});
  const auto e = errors_of("[run]\nskip = [\"t.value_bytes\"]\n");
  REQUIRE(e.size() == 1);
  CHECK(e[0] == "my.toml:2: [run] skip: unknown probe or plugin 't.value_bytes' (memtopo list shows the loaded ones)");
}
