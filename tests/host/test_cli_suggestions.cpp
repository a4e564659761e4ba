// "Did you mean": each typo a user makes on the command line or in a config gets the name most
// likely meant (issue 66, item 8), and CLI11's misleading messages are replaced.
#include <catch2/catch.hpp>

#include <string>
#include <utility>
#include <vector>

#include "helpers.hpp"
#include "topology/base/suggest.hpp"

using memtopo::host::edit_distance;
using memtopo::host::nearest_name;
using test::has;
using test::kGood;
using test::q;
using test::run_memtopo;

TEST_CASE("suggestions: edits are counted, a swap as one", "[host][cli][suggest]") {
  CHECK(edit_distance("run", "run") == 0);
  CHECK(edit_distance("rn", "run") == 1);
  CHECK(edit_distance("constnat", "constant") == 1);  // a swap
  CHECK(edit_distance("valdate", "validate") == 1);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("kitten", "sitting") == 3);
}

TEST_CASE("suggestions: only a near name is suggested, the first of a tie", "[host][cli][suggest]") {
  const std::vector<std::string> commands = {"list", "plan", "run", "validate", "diff", "compare", "draw", "export"};
  CHECK(nearest_name("rn", commands) == "run");
  CHECK(nearest_name("exprot", commands) == "export");
  CHECK(nearest_name("frobnicate", commands).empty());
  CHECK(nearest_name("xx", commands).empty());           // two edits in a short word: no typo
  CHECK(nearest_name("dra", {"draw", "drag"}) == "drag");  // a tie: name order
  CHECK(nearest_name(std::string(100, 'a'), commands).empty());
}

TEST_CASE("suggestions: each typo on the command line names what was meant", "[host][cli][suggest]") {
  test::TempDir dir("suggest");
  const std::string out = " -o " + q(dir / "t.toml");
  const std::vector<std::pair<std::string, std::string>> typos = {
      {"rn --device sim" + kGood + out, "unknown command 'rn'; did you mean 'run'? The commands are list, plan, run"},
      {"valdate x.toml", "unknown command 'valdate'; did you mean 'validate'?"},
      {"run --device sim" + kGood + " --ouput x.toml", "run: unknown option '--ouput'; did you mean '--output'?"},
      {"run --device sim" + kGood + out + " --onyl t.value_bytes", "run: unknown option '--onyl'; did you mean '--only'?"},
      {"plan --device sim" + kGood + " --skp t-basic", "plan: unknown option '--skp'; did you mean '--skip'?"},
      {"diff " + q(dir / "t.toml"), "diff: B is missing: The second topology file (after) (usage: memtopo diff [options] A B)"},
      {"run --device sim:keplr-like" + out, "no simulated-device preset of that name; did you mean 'kepler-like'?"},
      {"run --device sim" + kGood + out + " --only t-basic/sourse", "'t-basic/sourse'; did you mean 't-basic/source'?"},
      {"run --device sim" + kGood + out + " --only t.value_byte", "'t.value_byte'; did you mean 't.value_bytes'?"},
      {"run --device sim" + kGood + out + " --only t-basc", "'t-basc'; did you mean 't-basic'?"},
      {"plan --device sim" + kGood + " --skip t-basic/consumr", "'t-basic/consumr'; did you mean 't-basic/consumer'?"},
  };
  for (const auto& [args, expected] : typos) {
    const auto r = run_memtopo(args);
    INFO(args << "\n" << r.output);
    CHECK(r.exit_code == 2);
    CHECK(has(r.output, expected));
    CHECK_FALSE(has(r.output, "is required"));  // CLI11's word for an option it did not know
  }
  CHECK_FALSE(test::fs::exists(dir / "t.toml"));
}

TEST_CASE("suggestions: a misspelt probe in a config's [run] names the one meant", "[host][cli][suggest]") {
  test::TempDir dir("suggest-config");
  test::write_file(dir / "c.toml", "[run]\nprobes = [\"t-basic/sorce\"]\n");
  const auto r = run_memtopo("plan --device sim" + kGood + " --config " + q(dir / "c.toml"));
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(has(r.output, "c.toml:2: [run] probes: unknown probe, plugin or result key 't-basic/sorce'; did you mean 't-basic/source'?"));
}

TEST_CASE("a probe asked for by name that skips itself says why, even under -q", "[host][cli][suggest]") {
  test::TempDir dir("asked-by-name");
  const auto named = run_memtopo("run -q --device sim" + kGood + " --only t-skips/unsupported -o " + q(dir / "a.toml"));
  INFO(named.output);
  CHECK(named.exit_code == 0);  // a declared reason, as for any probe that skips itself
  CHECK(has(named.output, "t-skips/unsupported was asked for by name and skipped: not supported on this device"));
  // Named by its plugin only: the summary's tally says it, as for every other probe.
  const auto plugin = run_memtopo("run -q --device sim" + kGood + " --only t-skips -o " + q(dir / "b.toml"));
  CHECK_FALSE(has(plugin.output, "asked for by name"));
}

TEST_CASE("memtopo help and help COMMAND print the help, and say which files a command reads", "[host][cli][suggest]") {
  const auto all = run_memtopo("help");
  CHECK(all.exit_code == 0);
  CHECK(has(all.output, "validate"));
  const auto run = run_memtopo("help run");
  CHECK(run.exit_code == 0);
  CHECK(has(run.output, "--output"));
  CHECK(has(run.output, "Select only these probes"));
  const auto typo = run_memtopo("help rn");
  CHECK(typo.exit_code == 2);
  CHECK(has(typo.output, "did you mean 'run'?"));
  for (const char* command : {"validate", "export", "report", "draw", "compare"}) {
    const auto h = run_memtopo(std::string("help ") + command);
    INFO(h.output);
    CHECK(has(h.output, "TOML or JSON"));
  }
}
