// Every example in README.md, docs/host.md and docs/fleet.md is true: the `memtopo ...` command
// lines parse (and the cheap ones, list, plan and validate, run on the simulated device), synopsis
// lines name only real options, the config-file blocks load against the real plugins, the
// fleet's profile example loads, and its Slurm script is the one scripts/ ships.
#include <memtopo/abi.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include "helpers.hpp"
#include "cli/cli.hpp"
#include "run/planning/config.hpp"
#include "tools/compare/key_policy.hpp"

namespace fs = std::filesystem;
using namespace memtopo::host;

namespace {

struct Block {
  std::string where;  // "README.md:34" (the first line of the block's text)
  std::string lang;   // what follows the opening fence: "sh", "toml", ""
  std::vector<std::pair<size_t, std::string>> lines;  // line number, text
  std::string text() const {
    std::string out;
    for (const auto& [n, l] : lines) out += l + "\n";
    return out;
  }
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// The fenced code blocks of a Markdown file (fences may be indented, as inside a list item).
std::vector<Block> code_blocks(const std::string& name) {
  std::istringstream in(test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / name));
  std::vector<Block> out;
  std::string line;
  size_t n = 0;
  bool inside = false;
  while (std::getline(in, line)) {
    ++n;
    const std::string t = trim(line);
    if (t.rfind("```", 0) == 0) {
      if (!inside) out.push_back({name + ":" + std::to_string(n + 1), trim(t.substr(3)), {}});
      inside = !inside;
      continue;
    }
    if (inside) out.back().lines.emplace_back(n, line);
  }
  return out;
}

std::vector<std::string> words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

struct Command {
  std::string where;
  std::vector<std::string> args;  // after the program name
  bool synopsis = false;          // "memtopo run [--config F] ..." rather than a command
};

// `memtopo ...` (or `.../memtopo ...`) in shell and plain blocks; a synopsis line's
// continuation lines (starting with '[') are joined to it.
std::vector<Command> commands(const std::vector<Block>& blocks) {
  std::vector<Command> out;
  for (const auto& b : blocks) {
    if (b.lang != "sh" && !b.lang.empty()) continue;
    bool continues = false;
    for (const auto& [n, raw] : b.lines) {
      std::string line = raw;
      if (const auto hash = line.find(" #"); hash != std::string::npos) line = line.substr(0, hash);
      const std::string t = trim(line);
      if (continues && !t.empty() && t[0] == '[') {
        for (const auto& w : words(t)) out.back().args.push_back(w);
        continue;
      }
      continues = false;
      std::istringstream segments(t);
      for (std::string part; std::getline(segments, part, '&');) {
        const auto w = words(part);
        if (w.empty()) continue;
        auto is_prog = [](const std::string& x) {
          return x == "memtopo" || (x.size() > 8 && x.compare(x.size() - 8, 8, "/memtopo") == 0);
        };
        // A launcher's line (`mpirun -n 32 ... memtopo run ...`): memtopo's own arguments.
        const bool launched = w[0] == "mpirun" || w[0] == "srun";
        const auto prog = std::find_if(w.begin(), launched ? w.end() : w.begin() + 1, is_prog);
        if (prog == w.end() || !is_prog(*prog)) continue;
        Command c{b.where.substr(0, b.where.find(':')) + ":" + std::to_string(n), {prog + 1, w.end()}, false};
        out.push_back(c);
        continues = true;
      }
    }
  }
  for (auto& c : out)
    c.synopsis = std::any_of(c.args.begin(), c.args.end(), [](const std::string& a) {
      return a.find('[') != std::string::npos || a.find('|') != std::string::npos;
    });
  return out;
}

std::vector<Command> all_commands() {
  auto out = commands(code_blocks("README.md"));
  for (const char* doc : {"docs/host.md", "docs/fleet.md"}) {
    const auto more = commands(code_blocks(doc));
    out.insert(out.end(), more.begin(), more.end());
  }
  return out;
}

// The option names a synopsis line mentions: "[-q|-v]" -> -q, -v; "[--device auto|cuda]" -> --device.
std::vector<std::string> synopsis_options(const Command& c) {
  std::vector<std::string> out;
  for (const auto& a : c.args) {
    std::string t = a;
    t.erase(std::remove_if(t.begin(), t.end(), [](char ch) { return ch == '[' || ch == ']'; }), t.end());
    if (t.size() >= 3 && t.compare(t.size() - 3, 3, "...") == 0) t.resize(t.size() - 3);
    std::istringstream alts(t);
    for (std::string alt; std::getline(alts, alt, '|');)
      if (alt.size() > 1 && alt[0] == '-') out.push_back(alt);
  }
  return out;
}

// Runs the built memtopo in `dir` (shell syntax for `args`), stdout and stderr together.
test::CommandResult run_in(const fs::path& dir, const std::vector<std::string>& args) {
  std::string joined;
  for (const auto& a : args) joined += " '" + a + "'";
  return test::run_memtopo(joined, dir);
}

const Registry& real_registry() {
  static Registry r = [] {
    Registry x;
    x.load_directory(MEMTOPO_REAL_PLUGIN_DIR);
    return x;
  }();
  return r;
}

struct ConfigBlock {
  std::string where, text;
};

// TOML blocks of a config file ([run], [probes."..."]); topology examples have [meta].
std::vector<ConfigBlock> config_blocks() {
  std::vector<ConfigBlock> out;
  for (const char* file : {"README.md", "docs/host.md"})
    for (const auto& b : code_blocks(file)) {
      const std::string text = b.text();
      if (b.lang != "toml" || text.find("[meta]") != std::string::npos) continue;
      if (text.find("[run]") != std::string::npos || text.find("[probes.") != std::string::npos)
        out.push_back({b.where, text});
    }
  return out;
}

// The one example that waits for the cache probes' options (being added to plugins/ by
// another change): every <plugin>/<element>-size probe declares search_limit_bytes.
std::vector<std::string> config_errors(const ConfigBlock& b) {
  try {
    parse_config(b.text, b.where, real_registry());
  } catch (const ConfigError& e) {
    return e.messages;
  }
  return {};
}

}  // namespace

TEST_CASE("docs: every memtopo command line parses", "[host][docs]") {
  const auto cmds = all_commands();
  // The extraction itself: README's usage block and host.md's synopsis must be found.
  CHECK(std::count_if(cmds.begin(), cmds.end(), [](const Command& c) { return !c.synopsis; }) >= 9);
  CHECK(std::count_if(cmds.begin(), cmds.end(), [](const Command& c) { return c.synopsis; }) >= 4);
  for (const auto& c : cmds) {
    if (c.synopsis) continue;
    INFO(c.where);
    CHECK(check_command_line(c.args) == "");
  }
}

TEST_CASE("docs: synopsis lines name only options their subcommand has", "[host][docs]") {
  for (const auto& c : all_commands()) {
    if (!c.synopsis) continue;
    const std::string sub = c.args.empty() || c.args[0][0] == '-' ? "" : c.args[0];
    const auto known = command_option_names(sub);
    INFO(c.where << ": memtopo " << sub);
    REQUIRE_FALSE(known.empty());
    for (const auto& o : synopsis_options(c)) {
      INFO("option " << o);
      CHECK(std::find(known.begin(), known.end(), o) != known.end());
    }
  }
}

TEST_CASE("docs: list, plan and validate examples run", "[host][docs]") {
  test::TempDir dir("docs");
  // What `memtopo validate topo.toml` checks: a file a run wrote.
  REQUIRE(run_in(dir.path, {"run", "--device", "sim", "-q", "--only", "device-info", "-o", "topo.toml"}).exit_code == 0);
  size_t ran = 0;
  for (const auto& c : all_commands()) {
    if (c.synopsis || c.args.empty()) continue;
    const std::string& sub = c.args[0];
    if (sub != "list" && sub != "plan" && sub != "validate") continue;
    const auto r = run_in(dir.path, c.args);
    INFO(c.where << "\n" << r.output);
    CHECK(r.exit_code == 0);
    if (std::find(c.args.begin(), c.args.end(), "l1d.size_bytes") != c.args.end())
      CHECK(r.output.find("asked for: l1d.size_bytes from data-cache/l1d-size") != std::string::npos);
    ++ran;
  }
  CHECK(ran >= 4);
}

TEST_CASE("docs: config file examples load against the real plugins", "[host][docs]") {
  const auto blocks = config_blocks();
  CHECK(blocks.size() >= 2);
  size_t with_options = 0;
  for (const auto& b : blocks) {
    INFO(b.where << "\n" << b.text);
    with_options += b.text.find("[probes.") != std::string::npos ? 1 : 0;
    const auto errors = config_errors(b);
    INFO("errors:\n" << (errors.empty() ? "" : errors[0]));
    CHECK(errors.empty());
  }
  CHECK(with_options == 2);  // the per-probe options example of README.md and docs/host.md
}

TEST_CASE("docs: topology examples are valid topology files", "[host][docs]") {
  test::TempDir dir("docs-topology");
  size_t checked = 0;
  for (const char* file : {"README.md", "docs/host.md"})
    for (const auto& b : code_blocks(file)) {
      if (b.lang != "toml" || b.text().find("[meta]") == std::string::npos) continue;
      INFO(b.where);
      CHECK_NOTHROW(toml::parse(b.text()));
      std::ofstream(dir.path / "example.toml") << b.text();
      const auto r = run_in(dir.path, {"validate", "example.toml"});
      INFO(r.output);
      CHECK(r.exit_code == 0);
      ++checked;
    }
  CHECK(checked >= 1);  // README.md's "The output"
}

TEST_CASE("docs: the fleet's profile example loads and its Slurm script is the shipped one", "[host][docs][fleet]") {
  size_t profiles = 0, scripts = 0;
  const std::string shipped = test::read_file(fs::path(MEMTOPO_SOURCE_DIR) / "scripts" / "fleet.sbatch");
  for (const auto& b : code_blocks("docs/fleet.md")) {
    INFO(b.where);
    if (b.lang == "toml" && b.text().find("[keys.") != std::string::npos) {
      CHECK_NOTHROW(KeyPolicy::from_profile_text(b.text(), b.where));
      const KeyPolicy p = KeyPolicy::from_profile_text(b.text(), b.where);
      CHECK(p.rule("tlb.l1_entries", {}).varies);
      CHECK(p.rule("l2.latency_cycles", {}).tolerance_percent == 1.5);
      ++profiles;
    }
    if (b.lang == "bash" && b.text().find("#SBATCH") != std::string::npos) {
      // Every line the doc shows, comments aside, is a line of the script that the sbatch test runs.
      for (const auto& [n, line] : b.lines) {
        if (trim(line).empty() || (trim(line)[0] == '#' && trim(line).rfind("#SBATCH", 0) != 0 && n > b.lines[0].first))
          continue;
        INFO("line " << n << ": " << line);
        CHECK(shipped.find(line + "\n") != std::string::npos);
      }
      ++scripts;
    }
  }
  CHECK(profiles == 1);
  CHECK(scripts == 1);
}
