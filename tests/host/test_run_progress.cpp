// `memtopo run`'s progress (issue 66, item 2): under a pseudo-terminal one status line with
// the log lines above it, never inside; piped, one line per probe in the order they end, every
// probe of the plan counted.
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <set>
#include <string>

#include "helpers.hpp"

using test::kGood;
using test::q;
using test::run_memtopo;

namespace {
// A plan of the test plugins (one fails, one skips, one throws: each status shows) and a few
// quick real probes: what the progress shows does not depend on which probes run, and a whole
// default run is the slowest part of a small machine's test run.
const std::string kPlan = kGood + " --only t-basic,t-fails,t-skips,t-throws,device-info,links,constant,tlb/levels";
}  // namespace

TEST_CASE("run progress: under a terminal, log lines go above the status line", "[host][cli][progress]") {
  if (std::system("command -v script > /dev/null 2>&1") != 0) {
    WARN("no `script` (util-linux) here: the terminal's output is not checked");
    return;
  }
  test::TempDir dir("progress-tty");
  const auto log = dir / "tty.log";
  const std::string exe = test::built_or_env("MEMTOPO_TEST_EXE", MEMTOPO_EXE);
  const std::string command = "env -u MEMTOPO_PLUGIN_PATH script -qfec \"'" + exe + "' run --device sim" + kPlan +
                              " -o " + q(dir / "t.toml") + "\" " + q(log) + " > /dev/null 2>&1";
  (void)std::system(command.c_str());
  const std::string text = test::read_file(log);
  INFO(text);
  REQUIRE(text.find("ok (") != std::string::npos);
  CHECK(text.find("] ") != std::string::npos);
  // Every log line starts a line or follows the erase of the status line.
  for (const char* level : {"info: ", "warning: ", "error: "})
    for (size_t at = text.find(level); at != std::string::npos; at = text.find(level, at + 1)) {
      const bool line_start = at == 0 || text[at - 1] == '\n' || text.compare(at >= 3 ? at - 3 : 0, 3, "\033[K") == 0;
      CHECK(line_start);
    }
  // The status line: a bar, probes ended of all.
  CHECK(std::regex_search(text, std::regex("\\[[#-]{24}\\] [0-9]+/[0-9]+")));
}

TEST_CASE("run progress: piped, every probe of the plan is counted in the order probes end", "[host][cli][progress]") {
  test::TempDir dir("progress-pipe");
  const auto r = run_memtopo("run --device sim" + kPlan + " -o " + q(dir / "t.toml"));
  INFO(r.output);
  const std::regex line("(^|\n)\\[([0-9]+)/([0-9]+)\\] [^ ]+: (ok|failed|skipped|not_determinable) \\(");
  std::set<int> seen;
  int total = 0, last = 0;
  bool in_order = true;
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it) {
    const int i = std::stoi((*it)[2]);
    total = std::stoi((*it)[3]);
    in_order = in_order && i == last + 1;
    last = i;
    seen.insert(i);
  }
  CHECK(in_order);
  CHECK(total > 5);
  CHECK(last == total);  // skipped probes too: the count ends at the plan's size
  CHECK(int(seen.size()) == total);
  CHECK(r.output.find("\033[K") == std::string::npos);  // no terminal control in a pipe
}
