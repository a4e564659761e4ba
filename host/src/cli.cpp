#include "memtopo_host/cli.hpp"
#include "memtopo_host/version.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "memtopo/engine.hpp"
#include "memtopo_host/config.hpp"
#include "memtopo_host/document.hpp"
#include "memtopo_host/journal.hpp"
#include "memtopo_host/plan.hpp"
#include "memtopo_host/registry.hpp"
#include "memtopo_host/runner.hpp"
#include "memtopo_host/schema.hpp"

namespace memtopo::host {

namespace fs = std::filesystem;

namespace {

constexpr int kExitOk = 0;
constexpr int kExitIncomplete = 1;
constexpr int kExitUsage = 2;

// A usage or configuration problem: message printed, exit 2, nothing run or written.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::atomic<bool> g_cancel{false};

extern "C" void on_sigint(int) {
  g_cancel.store(true);
  static const char msg[] =
      "\nmemtopo: interrupted; stopping after the current probe (Ctrl-C again to abort at once)\n";
  (void)!::write(STDERR_FILENO, msg, sizeof msg - 1);
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process
}

void setup_logging(bool quiet, bool verbose) {
  static bool created = false;
  if (!created) {
    auto logger = spdlog::stderr_color_mt("memtopo");
    logger->set_pattern("%^%l%$: %v");
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

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out.empty() ? "-" : out;
}

Config maybe_load_config(const std::string& path, const Registry& reg) {
  if (path.empty()) return {};
  return load_config(path, reg);  // ConfigError handled by the caller
}

// --------------------------------------------------------------------------- list

int cmd_list(const std::vector<std::string>& plugin_paths, bool verbose) {
  Registry reg = load_registry(plugin_paths, false);
  for (const auto& p : reg.probes()) {
    const std::string needs = needs_text(p);
    std::cout << p.name << "  " << p.plugin_version << "  provides: " << join(p.provided)
              << "  requires: " << join(p.required) << (needs.empty() ? "" : "  needs: " + needs)
              << "  file: " << p.file << "\n";
    if (verbose) {
      if (!p.summary.empty()) std::cout << "    " << p.summary << "\n";
      if (!p.used.empty()) std::cout << "    uses: " << join(p.used) << "\n";
      for (const auto& o : p.options)
        std::cout << "    option " << o.name << " (" << type_name(o.type) << ", default \"" << o.default_text
                  << "\"): " << o.help << "\n";
    }
  }
  if (reg.probes().empty()) std::cout << "no probes found\n";
  if (!reg.errors().empty()) {
    std::cout << "loading errors:\n";
    for (const auto& e : reg.errors()) std::cout << "  " << e << "\n";
  }
  return kExitOk;
}

// --------------------------------------------------------------------------- plan

struct SelectionArgs {
  std::string config, device;
  std::vector<std::string> only, skip, plugin_paths;
};

// Opens --device (or the config's, or auto); a device that cannot be opened is a usage error.
std::unique_ptr<engine::Device> open_device_arg(const SelectionArgs& a, const Config& cfg) {
  const std::string device_arg = !a.device.empty() ? a.device : cfg.device.value_or("auto");
  std::unique_ptr<engine::Device> device;
  std::string fallback;
  try {
    device = engine::open_device(device_arg, &fallback);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot open device: ") + e.what());
  }
  if (!fallback.empty())
    spdlog::warn("no GPU to measure ({}): measuring the built-in simulated GPU instead (backend = \"sim\")", fallback);
  return device;
}

Selection effective_selection(const SelectionArgs& a, const Config& cfg) {
  Selection sel;
  sel.only = a.only.empty() ? cfg.probes : a.only;  // the command line replaces the config's list
  sel.skip = a.skip.empty() ? cfg.skip : a.skip;
  return sel;
}

void print_plan(const Plan& plan, std::ostream& os) {
  size_t to_run = 0, skipped = 0;
  for (const auto& s : plan.steps) (s.skip_reason.empty() ? to_run : skipped)++;
  os << "plan: " << to_run << " probe(s) to run" << (skipped ? ", " + std::to_string(skipped) + " skipped" : "")
     << "\n";
  size_t n = 0;
  for (const auto& s : plan.steps) {
    if (s.skip_reason.empty()) {
      os << "  " << ++n << ". " << s.probe->name;
      if (!s.pulled_in_for.empty()) os << "  (pulled in: " << s.pulled_in_for << ")";
    } else {
      os << "  -  " << s.probe->name << "  skipped: " << s.skip_reason;
    }
    os << "\n";
  }
}

int cmd_plan(const SelectionArgs& a) {
  Registry reg = load_registry(a.plugin_paths, true);
  Config cfg = maybe_load_config(a.config, reg);
  const Selection sel = effective_selection(a, cfg);
  make_plan(reg, sel);  // plan errors (unknown names, cycles) before the device is opened
  const auto device = open_device_arg(a, cfg);
  const DeviceFacts facts = device_facts(device->info());
  Plan plan = make_plan(reg, sel, &facts);
  print_plan(plan, std::cout);
  return kExitOk;
}

// --------------------------------------------------------------------------- run

struct RunArgs : SelectionArgs {
  std::string raw_dir, output;
  bool resume = false, quiet = false, verbose = false;
};

// Progress on stderr: one line per probe; on a terminal the line is updated in place.
class StderrProgress : public RunObserver {
 public:
  explicit StderrProgress(bool quiet) : quiet_(quiet), tty_(::isatty(STDERR_FILENO) != 0) {}
  void probe_started(size_t index, size_t total, const std::string& probe) override {
    prefix_ = "[" + std::to_string(index) + "/" + std::to_string(total) + "] " + probe;
    last_stage_.clear();
    if (quiet_) return;
    if (tty_) std::fprintf(stderr, "\r\033[K%s", prefix_.c_str());
    else std::fprintf(stderr, "%s\n", prefix_.c_str());
    std::fflush(stderr);
  }
  void progress(const std::string&, double fraction, const std::string& stage) override {
    if (quiet_) return;
    if (tty_) {
      std::fprintf(stderr, "\r\033[K%s %3d%% %s", prefix_.c_str(), static_cast<int>(fraction * 100 + 0.5), stage.c_str());
    } else if (stage != last_stage_) {
      std::fprintf(stderr, "%s: %s\n", prefix_.c_str(), stage.c_str());
    }
    last_stage_ = stage;
    std::fflush(stderr);
  }
  void probe_finished(const ProbeOutcome& o) override {
    if (quiet_ || prefix_.empty()) return;
    if (tty_) std::fprintf(stderr, "\r\033[K");
    std::fprintf(stderr, "%s: %s (%.3f s)\n", prefix_.c_str(), status_name(o.status), o.duration_s);
    std::fflush(stderr);
    prefix_.clear();
  }

 private:
  bool quiet_, tty_;
  std::string prefix_, last_stage_;
};

std::string resolved_device_spec(const engine::Device& dev, const std::string& spec) {
  const mt_device_info& info = dev.info();
  if (std::string(info.backend) == "cuda") return "cuda:" + std::to_string(info.ordinal);
  if (spec.rfind("sim:", 0) == 0) return spec;
  return "sim";
}

int cmd_run(const RunArgs& a) {
  Registry reg = load_registry(a.plugin_paths, true);
  Config cfg = maybe_load_config(a.config, reg);
  const Selection sel = effective_selection(a, cfg);
  Plan plan = make_plan(reg, sel);
  if (plan.steps.empty())
    throw UsageError(reg.probes().empty() ? "no probes found (memtopo list shows where it looks; --plugin-path adds a folder)"
                                          : "the selection leaves no probe to run");

  const fs::path output(a.output);
  const fs::path out_dir = output.has_parent_path() ? output.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(out_dir, ec)) throw UsageError("-o " + a.output + ": folder " + out_dir.string() + " does not exist");
  if (fs::is_directory(output, ec)) throw UsageError("-o " + a.output + ": is a folder; name the output file");

  const std::string device_arg = !a.device.empty() ? a.device : cfg.device.value_or("auto");
  const auto device = open_device_arg(a, cfg);
  const DeviceFacts facts = device_facts(device->info());
  plan = make_plan(reg, sel, &facts);

  Meta meta = default_meta();
  meta.backend = device->info().backend;
  meta.device_spec = resolved_device_spec(*device, device_arg);
  meta.driver_version = cuda_version_string(device->info().driver_version);
  meta.runtime_version = cuda_version_string(device->info().runtime_version);
  spdlog::info("device: {} ({})", device->info().name, device->description());

  RunSettings settings;
  settings.options = cfg.options;
  settings.raw_dir = !a.raw_dir.empty() ? fs::path(a.raw_dir) : fs::path(cfg.raw_dir.value_or(""));

  // Journal: resume from it, or start a new one.
  const fs::path journal_path = journal_path_for(output);
  JournalWriter journal;
  const bool journal_exists = fs::exists(journal_path, ec);
  if (a.resume && journal_exists) {
    JournalContents jc;
    try {
      jc = read_journal(journal_path);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--resume: ") + e.what());
    }
    for (const auto& w : jc.warnings) spdlog::warn("{}", w);
    const std::string journal_device = jc.header.value("device_spec", "");
    if (journal_device != meta.device_spec)
      throw UsageError("--resume: " + journal_path.string() + " was recorded on device " + journal_device +
                       ", this run uses " + meta.device_spec + "; use the same --device or delete the journal");
    for (const auto& o : jc.outcomes) {
      // Not determinable is an answer (measured, with the reason), kept like ok.
      if (!keeps_results(o.status)) {
        settings.already_done.erase(o.probe);
        continue;
      }
      const ProbeInfo* p = reg.find(o.probe);
      if (p && p->plugin_version != o.version) {
        spdlog::info("{}: measured by version {} in the journal, plugin is now {}: measuring again", o.probe, o.version,
                     p->plugin_version);
        continue;
      }
      settings.already_done[o.probe] = o;
    }
    spdlog::info("resuming: {} probe(s) already measured in {}", settings.already_done.size(), journal_path.string());
    try {
      journal.open_append(journal_path);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  } else {
    if (a.resume) spdlog::warn("--resume: no journal {}; measuring everything", journal_path.string());
    else if (journal_exists)
      spdlog::warn("replacing {} left by an interrupted run (--resume would have continued it)", journal_path.string());
    nlohmann::json header = {{"memtopo_journal", 1},
                             {"tool_version", meta.tool_version},
                             {"device_spec", meta.device_spec},
                             {"backend", meta.backend},
                             {"created_utc", meta.created_utc}};
    try {
      journal.open_new(journal_path, header);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
  }
  bool journal_ok = true;
  settings.on_finished = [&](const ProbeOutcome& o) {
    if (!journal_ok) return;
    try {
      journal.append(o);
    } catch (const std::exception& e) {
      journal_ok = false;
      spdlog::error("{} (the run goes on without a journal)", e.what());
    }
  };
  StderrProgress progress(a.quiet);
  settings.observer = &progress;
  g_cancel.store(false);
  settings.cancel = &g_cancel;

  struct sigaction action {}, previous{};
  action.sa_handler = on_sigint;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, &previous);
  RunReport report = run_plan(plan, device->info(), device->backend(), settings);
  sigaction(SIGINT, &previous, nullptr);
  journal.close();

  const std::string text = render_topology(meta, report.outcomes);
  // The writer and the schema must agree; a disagreement is a memtopo bug, not the user's.
  try {
    const auto doc = toml::parse(text, output.string());
    for (const auto& e : validate_topology(toml_to_json(doc)))
      spdlog::error("internal: the output does not match the schema: {}", e.text());
  } catch (const toml::parse_error& e) {
    spdlog::error("internal: the output is not valid TOML: {}", e.description());
  }
  try {
    write_atomically(output, text);
  } catch (const std::exception& e) {
    spdlog::error("{}; the measurements are kept in {} (fix the problem and run again with --resume)", e.what(),
                  journal_path.string());
    return kExitIncomplete;
  }
  size_t ok = 0, failed = 0, skipped = 0;
  for (const auto& o : report.outcomes)
    (o.status == Status::Ok ? ok : o.status == Status::Failed ? failed : skipped)++;
  if (report.interrupted) {
    spdlog::warn("interrupted: wrote what was measured to {}; `memtopo run --resume -o {}` continues", a.output,
                 a.output);
  } else {
    fs::remove(journal_path, ec);
  }
  if (!a.quiet || failed || skipped)
    std::fprintf(stderr, "%zu ok, %zu failed, %zu skipped; wrote %s\n", ok, failed, skipped, a.output.c_str());
  return (failed == 0 && skipped == 0 && !report.interrupted) ? kExitOk : kExitIncomplete;
}

// --------------------------------------------------------------------------- validate

int cmd_validate(const std::string& file) {
  toml::table root;
  try {
    root = toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    if (b.line == 0)  // toml++ reports unreadable files without a position
      std::cerr << file << ": cannot read: " << e.description() << "\n";
    else
      std::cerr << file << ":" << b.line << ":" << b.column << ": TOML syntax error: " << e.description() << "\n";
    return kExitUsage;
  }
  const auto errors = validate_topology(toml_to_json(root));
  for (const auto& e : errors) {
    const toml::node* at = node_at(root, e.path);
    std::cerr << file << ":" << (at ? at->source().begin.line : 1) << ": " << e.text() << "\n";
  }
  if (!errors.empty()) return kExitIncomplete;
  std::cout << file << ": valid\n";
  return kExitOk;
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"memtopo: discover a GPU's memory topology by microbenchmarks", "memtopo"};
  app.set_version_flag("--version", std::string("memtopo ") + MEMTOPO_VERSION + " (" + memtopo::host::git_commit() + ", ABI " +
                                        std::to_string(MEMTOPO_ABI_MAJOR) + "." + std::to_string(MEMTOPO_ABI_MINOR) + ")");
  app.require_subcommand(1);

  auto add_plugin_path = [](CLI::App* sub, std::vector<std::string>& v) {
    sub->add_option("--plugin-path", v, "Folder to search for probe plugins first (repeatable)");
  };
  auto add_selection = [&](CLI::App* sub, SelectionArgs& s) {
    sub->add_option("--config", s.config, "Config file (TOML; docs/host.md)");
    sub->add_option("--only", s.only, "Run only these probes or plugins (comma-separated)")->delimiter(',');
    sub->add_option("--skip", s.skip, "Do not run these probes or plugins (comma-separated)")->delimiter(',');
    add_plugin_path(sub, s.plugin_paths);
  };

  std::vector<std::string> list_paths;
  bool list_verbose = false;
  CLI::App* list = app.add_subcommand("list", "List the loadable probes (name, version, provides, requires, file)");
  add_plugin_path(list, list_paths);
  list->add_flag("-v,--verbose", list_verbose, "Also show summaries, used keys and options");

  SelectionArgs plan_args;
  CLI::App* plan = app.add_subcommand("plan", "Show the ordered run list with skip reasons");
  add_selection(plan, plan_args);

  RunArgs run_args;
  CLI::App* run = app.add_subcommand("run", "Measure and write the topology file");
  add_selection(run, run_args);
  run->add_option("--device", run_args.device, "auto (default), cuda, cuda:N, sim or sim:FILE");
  plan->add_option("--device", plan_args.device,
                   "auto (default), cuda, cuda:N, sim or sim:FILE; probes whose needs it does not meet are skipped");
  run->add_option("--raw-dir", run_args.raw_dir, "Write the data series behind results as CSV here");
  run->add_flag("--resume", run_args.resume, "Continue an interrupted run from OUT.journal");
  run->add_flag("-q,--quiet", run_args.quiet, "Only warnings and errors");
  run->add_flag("-v,--verbose", run_args.verbose, "Debug output");
  run->add_option("-o,--output", run_args.output, "Topology file to write")->required();

  std::string validate_file;
  CLI::App* validate = app.add_subcommand("validate", "Check a topology file against the schema");
  validate->add_option("file", validate_file, "Topology TOML file")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }

  try {
    if (*list) {
      setup_logging(false, false);
      return cmd_list(list_paths, list_verbose);
    }
    if (*plan) {
      setup_logging(false, false);
      return cmd_plan(plan_args);
    }
    if (*run) {
      if (run_args.quiet && run_args.verbose) throw UsageError("-q and -v exclude each other");
      setup_logging(run_args.quiet, run_args.verbose);
      return cmd_run(run_args);
    }
    if (*validate) {
      setup_logging(false, false);
      return cmd_validate(validate_file);
    }
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
  return kExitUsage;
}

}  // namespace memtopo::host
