// The report script (host/report/memtopo_report.py) run on matplotlib: finding a Python that
// has it and the script, running it into a private folder, and writing the page to -o through
// the output writer every command uses (atomic for a file, written through for a device or a
// FIFO). `memtopo report` and `memtopo fleet --report` draw their pages through it.
#include <sys/wait.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/cli_internal.hpp"
#include "memtopo/engine.hpp"
#include "topology/base/child_process.hpp"
#include "topology/base/output_file.hpp"
#include "topology/base/tied_child.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kScriptName = "memtopo_report.py";
// What the script needs beyond Python 3.11's standard library (tomllib is 3.11's).
constexpr const char* kImportCheck = "import tomllib, matplotlib";

const char* env_or_null(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

// Runs `argv` (argv[0] looked up on PATH when it has no slash) with this process's stdout and
// stderr, or with both sent to /dev/null; returns its wait status, or nullopt when it could not
// be started (no such program). The child is tied to this process (it dies with it) and a stop
// signal ends both, the temporary folders removed (scratch_folder.cpp).
std::optional<int> run_program(const std::vector<std::string>& argv, bool silent) {
  die_if_stopped();
  TiedChildSpec spec;
  spec.argv = argv;
  spec.stdout_to_null = silent;
  spec.stderr_to_stdout = silent;
  std::cout.flush();
  std::cerr.flush();
  pid_t pid = -1;
  try {
    pid = spawn_tied_child(spec);
  } catch (const std::system_error&) {
    return std::nullopt;
  }
  return wait_for_script(pid);
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

void report_missing_python(const std::string& command, const std::vector<std::string>& tried) {
  std::string list;
  for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
  std::cerr << "memtopo " << command << " needs Python 3 with matplotlib: install it with `sudo apt-get install "
               "python3-matplotlib` (Debian/Ubuntu) or `pip install matplotlib`, or point MEMTOPO_PYTHON at a "
               "Python that has it\n"
            << "  tried: " << list << " (Python 3.11 or newer, which has tomllib, with matplotlib importable)\n";
}

// MEMTOPO_REPORT_SCRIPT (the report script; the others beside it), else beside the executable
// (installed, or copied into the build tree), else the source tree this binary was built from.
std::optional<fs::path> find_script(const std::string& name, std::vector<std::string>& looked) {
  if (const char* chosen = env_or_null("MEMTOPO_REPORT_SCRIPT")) {
    const fs::path c = name == kScriptName ? fs::path(chosen) : fs::path(chosen).parent_path() / name;
    looked.push_back(c.string() + " (MEMTOPO_REPORT_SCRIPT)");
    return fs::is_regular_file(c) ? std::optional<fs::path>(c) : std::nullopt;
  }
  std::vector<fs::path> candidates = {executable_dir() / ".." / "share" / "memtopo" / "report" / name};
#ifdef MEMTOPO_REPORT_SOURCE_SCRIPT
  candidates.emplace_back(fs::path(MEMTOPO_REPORT_SOURCE_SCRIPT).parent_path() / name);
#endif
  for (const auto& c : candidates) {
    looked.push_back(c.lexically_normal().string());
    std::error_code ec;
    if (fs::is_regular_file(c, ec)) return c.lexically_normal();
  }
  return std::nullopt;
}

// The script's exit status as this command's: 0 written, 2 bad input, anything else 1.
// The report script's status for a page it wrote with a box in place of a series it could not
// read or plot (memtopo_report.py): the page replaces the output, and the command exits 1.
constexpr int kScriptWroteWithBoxes = 3;

int script_exit(const std::optional<int>& status, const std::string& python) {
  if (!status) {
    std::cerr << "memtopo: cannot start " << python << "\n";
    return kExitIncomplete;
  }
  if (WIFEXITED(*status)) {
    const int code = WEXITSTATUS(*status);
    return code == kExitOk || code == kExitUsage || code == kScriptWroteWithBoxes ? code : kExitIncomplete;
  }
  std::cerr << "memtopo: the script " << describe_wait_status(*status) << "; nothing was written\n";
  return kExitIncomplete;
}

// Whether the text is whole for its kind: an SVG or page that ends in its closing tag, a
// PNG with its end chunk. A script killed mid-write leaves neither.
bool complete_script_output(const std::string& made_name, const std::string& text) {
  const fs::path ext = fs::path(made_name).extension();
  auto trimmed_ends = [&](const std::string& tag) {
    const size_t last = text.find_last_not_of(" \t\r\n");
    return last != std::string::npos && last + 1 >= tag.size() &&
           text.compare(last + 1 - tag.size(), tag.size(), tag) == 0;
  };
  if (ext == ".svg") return trimmed_ends("</svg>");
  if (ext == ".html") return trimmed_ends("</html>");
  if (ext == ".png") return text.size() >= 12 && text.compare(text.size() - 8, 4, "IEND") == 0;
  return !text.empty();
}

}  // namespace

int write_script_output(const std::string& command, const std::string& name,
                        const std::vector<std::string>& script_args, const OutputTarget& out,
                        const std::string& made_name, bool with_summary) {
  std::vector<std::string> tried, looked;
  const std::optional<std::string> python = find_python(tried);
  if (!python) {
    report_missing_python(command, tried);
    return kExitUsage;
  }
  const std::optional<fs::path> script = find_script(name, looked);
  if (!script) {
    std::string list;
    for (const auto& l : looked) list += "\n  " + l;
    std::cerr << "memtopo: the script " << name << " is missing; looked at:" << list
              << "\nreinstall memtopo (it installs share/memtopo/report/) or set MEMTOPO_REPORT_SCRIPT\n";
    return kExitUsage;
  }
  const TempFolder scratch("memtopo-script");
  const fs::path made = scratch.path / made_name;
  const fs::path summary = scratch.path / "summary.txt";
  std::vector<std::string> argv = {*python, script->string(), "-o", made.string()};
  if (with_summary) argv.insert(argv.end(), {"--shown-as", out.shown(), "--summary-file", summary.string()});
  argv.insert(argv.end(), script_args.begin(), script_args.end());
  const int status = script_exit(run_program(argv, false), *python);
  // Only a script that succeeded (or wrote its page with boxes for bad series) and a file that
  // ends as its kind ends replace the output: a failing script leaves an earlier good picture
  // or page as it was.
  const bool with_boxes = status == kScriptWroteWithBoxes;
  if (status != kExitOk && !with_boxes) {
    if (status != kExitUsage) std::cerr << "memtopo: " << name << " failed; " << out.shown() << " was not written\n";
    return status;
  }
  try {
    const std::string text = engine::read_input_file(made.string(), "the file " + name + " wrote", size_t{1} << 30);
    if (!complete_script_output(made_name, text))
      throw std::runtime_error(name + " wrote an incomplete " + made_name + " (it ends early)");
    write_output(out, text);
    std::error_code ec;
    if (fs::is_regular_file(summary, ec)) std::cout << engine::read_input_file(summary.string(), "the summary");
  } catch (const std::exception& e) {
    std::cerr << "memtopo: " << e.what() << "; nothing was written\n";
    return kExitIncomplete;
  }
  return with_boxes ? kExitIncomplete : status;
}

int write_report_page(const std::string& command, const std::vector<std::string>& script_args,
                      const OutputTarget& out) {
  return write_script_output(command, kScriptName, script_args, out, "report.html", true);
}

}  // namespace memtopo::host::cli
