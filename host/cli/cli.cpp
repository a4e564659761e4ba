#include "cli/cli.hpp"
#include "topology/base/version.hpp"

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "cli/cli_internal.hpp"
#include "cli/live_line.hpp"
#include "topology/values/schema.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/checks/validate.hpp"
#include "run/output/run_output.hpp"
#include "run/planning/device_spec.hpp"

namespace memtopo::host {

namespace fs = std::filesystem;

namespace cli {

namespace {

// %v with control characters escaped: messages carry device names, probe reasons and notes.
// Line breaks stay (a crash's reason quotes the worker's last lines); a device name, which
// must not forge a line, is escaped whole where it is logged.
class EscapedMessage : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    const std::string text = terminal_lines(std::string(msg.payload.data(), msg.payload.size()));
    dest.append(text.data(), text.data() + text.size());
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<EscapedMessage>(); }
};

}  // namespace

void setup_logging(bool quiet, bool verbose) {
  static bool created = false;
  if (!created) {
    // On a terminal log lines go above run's status line (LiveLine), never into it.
    auto logger = LiveLine::on_stderr().terminal()
                      ? std::make_shared<spdlog::logger>("memtopo", live_line_sink())
                      : spdlog::stderr_color_mt("memtopo");
    auto formatter = std::make_unique<spdlog::pattern_formatter>();
    formatter->add_flag<EscapedMessage>('*').set_pattern("%^%l%$: %*");
    logger->set_formatter(std::move(formatter));
    spdlog::set_default_logger(logger);
    created = true;
  }
  spdlog::set_level(quiet ? spdlog::level::warn : verbose ? spdlog::level::debug : spdlog::level::info);
}

Registry load_registry(const std::vector<std::string>& plugin_paths, bool report_errors) {
  SearchPaths sp;
  for (const auto& p : plugin_paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) throw UsageError("--plugin-path " + p + ": not a folder");
    sp.plugin_path_args.push_back(p);
  }
  sp.exe_dir = executable_dir();
  Registry reg;
  reg.load_all(sp);
  if (report_errors)
    for (const auto& e : reg.errors()) spdlog::warn("{}", e);
  return reg;
}

Config maybe_load_config(const std::string& path, const Registry& reg) {
  if (path.empty()) return {};
  return load_config(path, reg);  // ConfigError handled by the caller
}

namespace {

// --------------------------------------------------------------------------- plan

void print_plan(const Plan& plan, const std::map<std::string, double>& recorded, std::ostream& os) {
  size_t to_run = 0, skipped = 0;
  for (const auto& s : plan.steps) (s.skip_reason.empty() ? to_run : skipped)++;
  os << "plan: " << to_run << " probe(s) to run" << (skipped ? ", " + std::to_string(skipped) + " skipped" : "")
     << (plan.left_out.empty() ? "" : ", " + std::to_string(plan.left_out.size()) + " left out") << "\n";
  size_t n = 0;
  for (const auto& s : plan.steps) {
    if (s.skip_reason.empty()) {
      os << "  " << ++n << ". " << s.probe->name;
      if (auto it = recorded.find(s.probe->name); it != recorded.end()) os << "  " << seconds_text(it->second);
      if (!s.pulled_in_for.empty()) os << "  (pulled in: " << s.pulled_in_for << ")";
    } else {
      os << "  -  " << s.probe->name << "  skipped: " << s.skip_reason;
    }
    os << "\n";
  }
  for (const ProbeInfo* p : plan.left_out)
    os << "  -  " << p->name << "  left out: opt-in, it runs when named (--only " << p->name << ")\n";
  for (const auto& [provider, keys] : plan.unrun_uses) {
    std::string list;
    for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
    os << "  -  " << provider << "  not run: the selection uses its " << list << "\n";
  }
  if (const std::string hint = unrun_uses_hint(plan); !hint.empty()) os << hint << "\n";
  for (const auto& [key, provider] : plan.requested_keys) {
    const PlanStep* s = plan.step(provider);
    os << "asked for: " << key << " from " << provider
       << (!s ? " (excluded by skip: the key will be missing)" : !s->skip_reason.empty() ? " (skipped: the key will be missing)" : "")
       << "\n";
  }
}

int cmd_plan(const PlanRequest& a) {
  Registry reg = load_registry(a.plugin_paths, true);
  Config cfg = maybe_load_config(a.config, reg);
  const RunChoice choice = resolve_selection(a, cfg);
  Plan plan = make_plan(reg, choice.selection);  // plan errors (unknown names, cycles) before the device opens
  const std::map<std::string, double> recorded = a.timings.empty() ? std::map<std::string, double>{}
                                                                   : recorded_durations(a.timings);
  const auto device = open_device_arg(choice.device, reg.replay_map());
  fit_plan_to_device(plan, device_facts(device->info()));
  print_plan(plan, recorded, std::cout);
  const mt_device_info& info = device->info();
  const std::string here = std::string(info.name, strnlen(info.name, sizeof info.name)) + " (" +
                           std::string(info.backend, strnlen(info.backend, sizeof info.backend)) + ")";
  std::cout << plan_time_line(plan, cfg, a.timings, recorded, here) << "\n";
  return kExitOk;
}

// --------------------------------------------------------------------------- validate

// A simulated device description, checked by the simulator's own reader (limits included)
// without building the device: what --device sim:FILE would say, without running anything.
int cmd_validate_device(const std::string& file, const std::vector<std::string>& plugin_paths) {
  if (!read_toml_or_report(file, "a TOML file")) return kExitUsage;
  try {
    // A measured topology's keys replay as the installed plugins declare.
    engine::check_sim_description(file, load_registry(plugin_paths, true).replay_map());
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitIncomplete;
  }
  std::cout << file << ": valid simulated device description\n";
  return kExitOk;
}

int cmd_validate(const std::string& file, const std::vector<std::string>& plugin_paths) {
  const std::optional<toml::table> parsed = read_toml_or_report(file, "a TOML file");
  if (!parsed) return kExitUsage;
  const toml::table& root = *parsed;
  // The installed plugins' keys are checked against their declarations; what no plugin here
  // provides, outside the schema's own tables, is only reported.
  const Registry reg = load_registry(plugin_paths, true);
  const Validation v = validate_with_plugins(toml_to_json(root), KeyCatalog::of(reg));
  for (const auto& n : v.not_checked) std::cout << file << ": not checked: " << n << "\n";
  for (const auto& e : v.errors) {
    std::cerr << position_of(file, root, e.path) << ": " << e.text() << "\n";
  }
  for (const auto& c : v.contradictions) {
    const std::string& a = c.invariant.spec.a;
    const std::string pointer = "/" + a.substr(0, a.find('.')) + "/" + a.substr(a.find('.') + 1);
    std::cerr << position_of(file, root, pointer) << ": contradiction: " << c.text << "\n";
  }
  if (!v.errors.empty() || !v.contradictions.empty()) {
    if (!root.contains("meta") && root.contains("device"))
      std::cerr << file << ": this looks like a simulated device description; `memtopo validate --device-description "
                << file << "` checks one\n";
    return kExitIncomplete;
  }
  std::cout << file << ": valid\n";
  return kExitOk;
}

// --------------------------------------------------------------------------- parsing

// A value of --only or --skip: comma-separated names, none of them empty.
std::string list_entry_error(const std::string& value) {
  if (!value.empty() && value.front() != ',' && value.back() != ',' && value.find(",,") == std::string::npos) return "";
  return "'" + value + "' has an empty entry; name probes, plugins or result keys separated by commas (e.g. "
         "PLUGIN,PLUGIN/PROBE,ELEMENT.KEY)";
}

// A value of --raw-dir: "" would silently mean "no raw series".
std::string non_empty_folder_error(const std::string& value) {
  return value.empty() ? "the folder name is empty; name a folder, or leave the option out to write no raw series"
                       : "";
}

struct CliArgs {
  std::vector<std::string> list_paths, list_names;
  bool list_verbose = false;
  std::string list_format = "text";
  PlanRequest plan;
  RunRequest run;
  std::string validate_file;
  bool validate_device = false;
  std::vector<std::string> validate_paths;
  CLI::App* list_cmd = nullptr;
  CLI::App* plan_cmd = nullptr;
  CLI::App* run_cmd = nullptr;
  CLI::App* validate_cmd = nullptr;
  std::vector<ExtraCommand> extra;  // diff, compare, draw, export, report, fleet: each in its own source file
};

std::unique_ptr<CLI::App> make_app(CliArgs& args) {
  auto app = std::make_unique<CLI::App>("memtopo: discover a GPU's memory topology by microbenchmarks", "memtopo");
  app->set_version_flag("--version", std::string("memtopo ") + MEMTOPO_VERSION + " (" + memtopo::host::git_commit() +
                                         ", ABI " + std::to_string(MEMTOPO_ABI_MAJOR) + "." +
                                         std::to_string(MEMTOPO_ABI_MINOR) + ")");
  app->require_subcommand(1);
  auto add_plugin_path = [](CLI::App* sub, std::vector<std::string>& v) {
    sub->add_option("--plugin-path", v, "Folder to search for probe plugins first (repeatable)");
  };
  auto add_selection = [&](CLI::App* sub, SelectionRequest& s) {
    sub->add_option("--config", s.config, "Config file (TOML; docs/host.md)");
    sub->add_option("--device", s.device,
                    "auto (default), cuda, cuda:N, sim, sim:FILE, sim:PRESET (kepler-like, ...); for `run` also "
                    "all or a list (cuda:0,cuda:3)")
        ->check(device_arg_error)
        ->transform([](const std::string& v) {
          std::string error;
          std::string resolved = resolve_device_presets(v, &error);
          if (!error.empty()) throw CLI::ValidationError(error);
          return resolved;
        });
    // One value per occurrence, split by split_lists: CLI11's delimiter turned "," into no
    // value at all and took the next argument (an option) in its place.
    sub->add_option("--only", s.only, "Select only these probes or plugins, or the providers of these result keys (comma-separated; with what they need)")
        ->allow_extra_args(false)
        ->check(list_entry_error);
    sub->add_option("--skip", s.skip, "Leave out these probes or plugins (comma-separated)")
        ->allow_extra_args(false)
        ->check(list_entry_error);
    add_plugin_path(sub, s.plugin_paths);
  };
  args.list_cmd = app->add_subcommand("list", "List the loadable probes (one line each: name, version, needs, summary)");
  args.list_cmd->add_option("probes", args.list_names,
                            "Probes or families to list (data-cache/l1d-size, tlb); all where none is named");
  add_plugin_path(args.list_cmd, args.list_paths);
  args.list_cmd->add_flag("-v,--verbose", args.list_verbose,
                          "Also show what each provides, requires and uses, its file, budget, options and keys");
  args.list_cmd->add_option("--format", args.list_format, "text (default) or json (everything -v shows, as data)")
      ->check(CLI::IsMember({"text", "json"}));

  args.plan_cmd = app->add_subcommand("plan", "Show the ordered run list for the device, with skip reasons");
  add_selection(args.plan_cmd, args.plan);
  args.plan_cmd->add_option("--timings", args.plan.timings,
                            "A topology an earlier run wrote (same GPU model): each probe's recorded duration, and the total");

  args.run_cmd = app->add_subcommand("run", "Measure and write the topology file");
  add_selection(args.run_cmd, args.run);
  args.run_cmd->add_option("--raw-dir", args.run.raw_dir, "Write the data series behind results as CSV here")
      ->check(non_empty_folder_error);
  args.run_cmd->add_flag("--resume", args.run.resume, "Continue an interrupted run from OUT.journal");
  args.run_cmd->add_flag("-q,--quiet", args.run.quiet, "Only warnings, errors and the summary of what was measured");
  args.run_cmd->add_flag("-v,--verbose", args.run.verbose, "Debug output");
  args.run_cmd->add_flag("--verify", args.run.verify,
                         "Check rates and cache sizes by the GPU's hardware counters (CUPTI; docs/measurement.md, "
                         "\"Counters\"); the simulated GPU always checks them by its model's counts");
  args.run_cmd->add_flag("--no-isolation", args.run.no_isolation,
                         "Run the probes in memtopo itself, not in a worker process (debugging)");
  args.run_cmd->add_option("--jobs", args.run.jobs,
                           "Probes at once on the simulated GPU (default: the cores, up to 4; a GPU runs one at a time); "
                           "with several devices, also the runs at once (default: the cores)")
      ->check(CLI::Range(1u, 64u));
  args.run_cmd->add_option("-o,--output", args.run.output, "Topology file to write")->required();
  args.run_cmd->add_option("--format", args.run.format, "toml or json (default: json when -o ends in .json, else toml)")
      ->check(run_format_error);
  // Set by a run of several GPUs for each of its members (device_runs.cpp); not for users.
  args.run_cmd->add_option("--device-label", args.run.device_label)->group("");

  args.validate_cmd = app->add_subcommand(
      "validate", "Check a topology file against the schema and the installed plugins' key descriptions");
  args.validate_cmd->add_option("file", args.validate_file, "Topology file (TOML or JSON)")->required();
  add_plugin_path(args.validate_cmd, args.validate_paths);
  args.validate_cmd->add_flag("--device-description", args.validate_device,
                              "FILE is a simulated device description (--device sim:FILE): check it as the simulator reads it");
  args.extra = {add_diff_command(*app),   add_compare_command(*app), add_draw_command(*app),
                add_export_command(*app), add_report_command(*app),  add_fleet_command(*app)};
  return app;
}

int dispatch(const CliArgs& args) {
  if (*args.list_cmd) {
    setup_logging(false, false);
    return cmd_list(args.list_paths, args.list_names, args.list_verbose, args.list_format);
  }
  if (*args.plan_cmd) {
    setup_logging(false, false);
    return cmd_plan(args.plan);
  }
  if (*args.run_cmd) {
    if (args.run.quiet && args.run.verbose) throw UsageError("-q and -v exclude each other");
    setup_logging(args.run.quiet, args.run.verbose);
    return cmd_run(args.run);
  }
  if (*args.validate_cmd) {
    setup_logging(false, false);
    if (args.validate_device) return cmd_validate_device(args.validate_file, args.validate_paths);
    return cmd_validate(args.validate_file, args.validate_paths);
  }
  for (const ExtraCommand& c : args.extra)
    if (*c.sub) {
      setup_logging(false, false);
      return c.run();
    }
  return kExitUsage;
}

}  // namespace
}  // namespace cli

namespace cli {
namespace {

int parse_and_dispatch(int argc, char** argv) {
  CliArgs args;
  auto app = make_app(args);
  std::vector<std::string> words(argv + std::min(argc, 1), argv + argc);
  // `memtopo help [COMMAND]`, as git and cargo have it: the command's --help.
  std::vector<std::string> help_argv;
  if (!words.empty() && words[0] == "help" && words.size() <= 2) {
    words = words.size() == 2 ? std::vector<std::string>{words[1], "--help"} : std::vector<std::string>{"--help"};
    help_argv = {argc > 0 ? argv[0] : "memtopo"};
    help_argv.insert(help_argv.end(), words.begin(), words.end());
  }
  std::vector<char*> help_args;
  for (auto& w : help_argv) help_args.push_back(w.data());
  if (!help_args.empty()) argc = int(help_args.size()), argv = help_args.data();
  for (const std::string& e : {unknown_command_error(*app, words), unknown_option_error(*app, words)})
    if (!e.empty()) {
      std::cerr << "memtopo: " << e << "\n";
      return kExitUsage;
    }
  try {
    app->parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const std::string missing = missing_argument_error(*app, e); !missing.empty()) {
      std::cerr << "memtopo: " << missing << "\n";
      return kExitUsage;
    }
    const int code = app->exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  try {
    return dispatch(args);
  } catch (const ConfigError& e) {
    for (const auto& m : e.messages) std::cerr << m << "\n";
    std::cerr << "memtopo: the config file has errors; nothing was run\n";
    return kExitUsage;
  } catch (const PlanError& e) {
    std::cerr << "memtopo: " << e.what() << "\n";
    return kExitUsage;
  } catch (const UsageError& e) {
    std::cerr << "memtopo: " << e.what() << "\n";
    return kExitUsage;
  }
}

}  // namespace
}  // namespace cli

// The one top-level handler: memtopo's own errors above, every other exception here.
int run_cli(int argc, char** argv) {
  // Past a file-size limit (ulimit -f) a write fails with EFBIG, which every writer reports,
  // instead of SIGXFSZ ending the process mid-line; the workers and scripts inherit it.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return cli::parse_and_dispatch(argc, argv);
  } catch (...) {
    return cli::report_unexpected_error(std::current_exception());
  }
}

std::string check_command_line(const std::vector<std::string>& args) {
  cli::CliArgs parsed;
  auto app = cli::make_app(parsed);
  std::vector<std::string> storage;
  storage.push_back("memtopo");
  storage.insert(storage.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  if (std::string e = cli::unknown_command_error(*app, args); !e.empty()) return e;
  if (std::string e = cli::unknown_option_error(*app, args); !e.empty()) return e;
  try {
    app->parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return "";  // --help, --version
    if (std::string missing = cli::missing_argument_error(*app, e); !missing.empty()) return missing;
    return std::string(e.get_name()) + ": " + e.what();
  }
  return "";
}

std::vector<std::string> command_option_names(const std::string& subcommand) {
  cli::CliArgs parsed;
  auto app = cli::make_app(parsed);
  const CLI::App* sub = app.get();
  if (!subcommand.empty()) {
    try {
      sub = app->get_subcommand(subcommand);
    } catch (const CLI::OptionNotFound&) {
      return {};
    }
  }
  std::vector<std::string> out;
  for (const CLI::Option* o : sub->get_options()) {
    for (const auto& n : o->get_lnames()) out.push_back("--" + n);
    for (const auto& n : o->get_snames()) out.push_back("-" + n);
  }
  return out;
}

}  // namespace memtopo::host
