// Shared by the command-line sources (cli.cpp: parsing, list, plan, validate;
// run_command.cpp: run). Not installed.
#pragma once

#include <sys/types.h>

#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "topology/base/usage_error.hpp"
#include "memtopo/engine.hpp"
#include "run/planning/config.hpp"
#include "tools/compare/key_policy.hpp"
#include "run/planning/plan.hpp"
#include "topology/plugins/registry.hpp"
#include "topology/base/output_file.hpp"
#include "run/planning/run_choice.hpp"
#include "run/planning/run_request.hpp"
#include "run/running/open_device.hpp"

namespace CLI {
class App;
class ParseError;
}

namespace memtopo::host::cli {

// Any other exception that reaches the top level (unexpected_error.cpp): its message on
// stderr; exit 2 for a file-system problem (a missing TMPDIR), 1 for the rest. Never an abort.
int report_unexpected_error(std::exception_ptr error);

// A check for a floating-point option (compare_options.cpp): "" for a number from `low` to
// `high`, else "'VALUE' is not WHAT". NaN, "inf" and trailing text are refused, where
// CLI::Range lets NaN through (it compares neither below nor above a bound).
std::function<std::string(const std::string&)> number_between(double low, double high, const std::string& what);

// plan --timings (plan_timing.cpp): each probe's duration_s in a topology file `run` wrote, and
// the plan's time line: about the recorded total, or at most the time limits without a file.
std::map<std::string, double> recorded_durations(const std::string& file);
// `this_device`: "NAME (backend)", as recorded_device() names the one a file was measured on.
std::string plan_time_line(const Plan& plan, const Config& cfg, const std::string& timings_file,
                           const std::map<std::string, double>& recorded, const std::string& this_device);
std::string recorded_device(const std::string& file);
std::string seconds_text(double s);  // "2.5 s", "27 s"

// Mistakes on the command line (cli_mistakes.cpp), each "" where there is none: an unknown
// command or long option (`args` without the program's name) with the name likely meant, and
// a missing positional argument named with what it is for (for CLI11's RequiredError).
std::string unknown_command_error(const CLI::App& app, const std::vector<std::string>& args);
std::string unknown_option_error(const CLI::App& app, const std::vector<std::string>& args);
std::string missing_argument_error(const CLI::App& app, const CLI::ParseError& e);

void setup_logging(bool quiet, bool verbose);
// Loads plugins from --plugin-path folders and the default places; a missing folder is a
// usage error. With `report_errors`, each refused file is logged as a warning.
Registry load_registry(const std::vector<std::string>& plugin_paths, bool report_errors);
Config maybe_load_config(const std::string& path, const Registry& reg);
int cmd_run(const RunRequest& a);
// memtopo list (list_command.cpp): `format` "text" or "json".
int cmd_list(const std::vector<std::string>& plugin_paths, const std::vector<std::string>& names, bool verbose,
             const std::string& format);

// The TOML of `file`, or nullopt after saying on stderr why it cannot be read: no such file or a
// folder ("name <what_to_name>"), FILE:LINE:COL for a syntax error (read_toml.cpp).
std::optional<toml::table> read_toml_or_report(const std::string& file, const std::string& what_to_name);
// The same, and the file must be a topology (a [meta] table): a simulated device description is
// named as one. `what_for` ends "name a topology file; <what_for>".
std::optional<toml::table> read_topology_or_report(const std::string& file, const std::string& what_for);

// --tolerance-percent and --profile of diff and fleet (compare_options.cpp).
struct CompareArgs {
  std::optional<double> tolerance_percent;
  std::string profile;
};
void add_compare_options(CLI::App* sub, CompareArgs& args);
// The policy they give; a profile that cannot be read is a UsageError.
KeyPolicy key_policy_of(const CompareArgs& args);

// A folder of its own, removed with everything in it, under this process's one folder in
// $TMPDIR (memtopo-PID-XXXXXX). While one exists, SIGINT, SIGTERM and SIGHUP are recorded; the
// process ends by the signal, its folders removed, when its script has been stopped or the
// last folder goes (scratch_folder.cpp). A folder of a memtopo that was killed is removed by
// the next one that makes a folder.
struct TempFolder {
  explicit TempFolder(const std::string& prefix);
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  std::filesystem::path path;
};

// Ends this process by the stop signal recorded while it holds temporary folders, after
// removing them; returns when none came.
void die_if_stopped();
// Waits for the script `pid` (started with spawn_tied_child); a stop signal ends it (SIGTERM,
// SIGKILL after 2 s) and then this process as die_if_stopped. Returns its wait status.
int wait_for_script(pid_t pid);

// Runs the report script with `script_args` (after its own -o), writes the page it draws to
// `out` and prints its one-line summary; the exit status is the command's (report_page.cpp).
// `command` as for write_script_output.
int write_report_page(const std::string& command, const std::vector<std::string>& script_args,
                      const OutputTarget& out);
// Runs share/memtopo/report/`name` with `-o FILE script_args` and writes FILE (named `made_name`
// in a private folder) to `out`; `with_summary`: the report script's summary line too.
// `command` ("draw", "fleet --report") names the command in a message about missing Python.
int write_script_output(const std::string& command, const std::string& name,
                        const std::vector<std::string>& script_args, const OutputTarget& out,
                        const std::string& made_name, bool with_summary);

// A command defined in a source file of its own: `add_*_command` adds its subcommand to the
// app (options bound to storage the command owns) and returns the subcommand and what runs it.
struct ExtraCommand {
  CLI::App* sub = nullptr;
  std::function<int()> run;
};
ExtraCommand add_diff_command(CLI::App& app);    // diff_command.cpp
ExtraCommand add_export_command(CLI::App& app);  // export_command.cpp
ExtraCommand add_report_command(CLI::App& app);  // report_command.cpp
ExtraCommand add_fleet_command(CLI::App& app);   // fleet_command.cpp
ExtraCommand add_compare_command(CLI::App& app);  // compare_command.cpp
ExtraCommand add_draw_command(CLI::App& app);     // draw_command.cpp

}  // namespace memtopo::host::cli
