// `memtopo report`: one self-contained HTML page of a topology file and its raw series
// (docs/report.md). The page and its plots are made by a Python script on matplotlib
// (host/report/memtopo_report.py); this command checks the input, finds a Python that has
// matplotlib and the script, and runs it. The plotting dependency stays optional: without it
// only this command is unavailable, and it says what to install.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include "cli_internal.hpp"
#include "memtopo/engine.hpp"
#include "memtopo_host/child_process.hpp"
#include "memtopo_host/schema.hpp"
#include "memtopo_host/terminal_text.hpp"
#include "output_file.hpp"

extern char** environ;

namespace memtopo::host::cli {

namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string topology, raw_dir, output;
};

constexpr const char* kScriptName = "memtopo_report.py";
// What the script needs beyond Python 3.11's standard library (tomllib is 3.11's).
constexpr const char* kImportCheck = "import tomllib, matplotlib";

const char* env_or_null(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Runs `argv` (argv[0] looked up on PATH when it has no slash) with this process's stdout and
// stderr, or with both sent to /dev/null; returns its wait status, or nullopt when it could not
// be started (no such program).
std::optional<int> run_program(const std::vector<std::string>& argv, bool silent) {
  std::vector<char*> args;
  std::vector<std::string> storage(argv);
  for (auto& a : storage) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (silent) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  }
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = 0;
  const int rc = ::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return std::nullopt;
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

bool exited_zero(const std::optional<int>& status) {
  return status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0;
}

// MEMTOPO_PYTHON when set (no fallback: the user chose it), else python3 on PATH, else
// /usr/bin/python3 (a pyenv or venv python3 first on PATH often lacks Debian's matplotlib):
// the first that imports tomllib and matplotlib. `tried` lists what was tried.
std::optional<std::string> find_python(std::vector<std::string>& tried) {
  std::vector<std::string> candidates;
  if (const char* chosen = env_or_null("MEMTOPO_PYTHON"))
    candidates = {chosen};
  else
    candidates = {"python3", "/usr/bin/python3"};
  for (const auto& python : candidates) {
    tried.push_back(python);
    if (exited_zero(run_program({python, "-c", kImportCheck}, true))) return python;
  }
  return std::nullopt;
}

void report_missing_python(const std::vector<std::string>& tried) {
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  std::cerr << "memtopo report needs Python 3 with matplotlib: install it with `sudo apt-get install "
               "python3-matplotlib` (Debian/Ubuntu) or `pip install matplotlib`, or point MEMTOPO_PYTHON at a "
               "Python that has it\n"
            << "  tried: " << list << " (Python 3.11 or newer, which has tomllib, with matplotlib importable)\n";
}

// MEMTOPO_REPORT_SCRIPT, else beside the executable (installed, or copied into the build
// tree), else the source tree this binary was built from.
std::optional<fs::path> find_script(std::vector<std::string>& looked) {
  if (const char* chosen = env_or_null("MEMTOPO_REPORT_SCRIPT")) {
    looked.push_back(std::string(chosen) + " (MEMTOPO_REPORT_SCRIPT)");
    return fs::is_regular_file(chosen) ? std::optional<fs::path>(chosen) : std::nullopt;
  }
  std::vector<fs::path> candidates = {executable_dir() / ".." / "share" / "memtopo" / "report" / kScriptName};
#ifdef MEMTOPO_REPORT_SOURCE_SCRIPT
  candidates.emplace_back(MEMTOPO_REPORT_SOURCE_SCRIPT);
#endif
  for (const auto& c : candidates) {
    looked.push_back(c.lexically_normal().string());
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal();
  }
  return std::nullopt;
}

// The topology must exist, parse (FILE:LINE:COL for a syntax error, as `memtopo validate`), be
// a topology and hold a measured value: a page of nothing is not a report.
bool topology_reportable(const std::string& file) {
  const std::optional<toml::table> doc = read_topology_or_report(file, "memtopo report draws one");
  if (!doc) return false;
  for (const auto& [name, node] : *doc)
    if (is_element_table(std::string(name.str())) && node.is_table() && !node.as_table()->empty()) return true;
  std::cerr << terminal_text(file) << ": holds no measured values (no element table has a key); nothing to report\n";
  return false;
}

// The inputs -o must not be: the topology and every file under --raw-dir.
std::vector<NamedInput> report_inputs(const ReportArgs& a) {
  std::vector<NamedInput> inputs{{"the topology", a.topology}};
  if (a.raw_dir.empty()) return inputs;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(a.raw_dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file(ec)) inputs.push_back({"a raw series of --raw-dir", it->path().string()});
  return inputs;
}

// Every path is checked before anything is plotted; the output is checked as `run` checks it.
OutputTarget check_paths(const ReportArgs& a) {
  std::error_code ec;
  if (!a.raw_dir.empty() && !fs::is_directory(a.raw_dir, ec))
    throw UsageError("--raw-dir " + a.raw_dir + ": not a folder; name the folder `memtopo run --raw-dir` wrote");
  OutputTarget out = resolve_output(a.output);
  refuse_output_over_inputs("-o", a.output, report_inputs(a));
  return out;
}

// A private folder for the page the script writes, removed when done: the page then goes to
// -o through the output writer every command uses (atomic for a file, written through for a
// device or a FIFO).
struct ScratchDir {
  fs::path path;
  ScratchDir() {
    std::string pattern = (fs::temp_directory_path() / "memtopo-report-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary folder: " + std::string(std::strerror(errno)));
    path = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The script's exit status as this command's: 0 written, 2 bad input, anything else 1.
int script_exit(const std::optional<int>& status, const std::string& python) {
  if (!status) {
    std::cerr << "memtopo: cannot start " << python << "\n";
    return kExitIncomplete;
  }
  if (WIFEXITED(*status)) {
    const int code = WEXITSTATUS(*status);
    return code == kExitOk || code == kExitUsage ? code : kExitIncomplete;
  }
  std::cerr << "memtopo: the report script " << describe_wait_status(*status) << "; no report was written\n";
  return kExitIncomplete;
}

int cmd_report(const ReportArgs& a) {
  const OutputTarget out = check_paths(a);
  if (!topology_reportable(a.topology)) return kExitUsage;
  std::vector<std::string> tried, looked;
  const std::optional<std::string> python = find_python(tried);
  if (!python) {
    report_missing_python(tried);
    return kExitUsage;
  }
  const std::optional<fs::path> script = find_script(looked);
  if (!script) {
    std::string list;
    for (const auto& l : looked) list += "\n  " + l;
    std::cerr << "memtopo: the report script " << kScriptName << " is missing; looked at:" << list
              << "\nreinstall memtopo (it installs share/memtopo/report/) or set MEMTOPO_REPORT_SCRIPT\n";
    return kExitUsage;
  }
  const ScratchDir scratch;
  const fs::path page = scratch.path / "report.html";
  const fs::path summary = scratch.path / "summary.txt";
  std::vector<std::string> argv = {*python,     script->string(), "-o", page.string(), "--shown-as", out.shown(),
                                   "--summary-file", summary.string()};
  if (!a.raw_dir.empty()) argv.insert(argv.end(), {"--raw-dir", a.raw_dir});
  argv.insert(argv.end(), {"--", a.topology});
  const int status = script_exit(run_program(argv, false), *python);
  std::error_code ec;
  if (status == kExitUsage || !fs::is_regular_file(page, ec)) return status;
  try {
    write_output(out, engine::read_input_file(page.string(), "the report page", size_t{1} << 30));
    if (fs::is_regular_file(summary, ec)) std::cout << engine::read_input_file(summary.string(), "the summary");
  } catch (const std::exception& e) {
    std::cerr << "memtopo report: " << e.what() << "; no report was written\n";
    return kExitIncomplete;
  }
  return status;
}

}  // namespace

ExtraCommand add_report_command(CLI::App& app) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "report", "Write one self-contained HTML page: every value, its provenance, a plot of every raw series");
  sub->add_option("topology", args->topology, "Topology TOML file (memtopo run -o)")->required();
  sub->add_option("--raw-dir", args->raw_dir, "The run's --raw-dir: every CSV series in it is plotted");
  sub->add_option("-o,--output", args->output, "HTML file to write")->required();
  return {sub, [args] { return cmd_report(*args); }};
}

}  // namespace memtopo::host::cli
