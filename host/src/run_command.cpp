// `memtopo run`: plan for the device, journal, measure, write the topology, report.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <spdlog/spdlog.h>

#include "cli_internal.hpp"
#include "run_device.hpp"
#include "stop_signals.hpp"
#include "memtopo_host/document.hpp"
#include "memtopo_host/journal.hpp"
#include "memtopo_host/runner.hpp"
#include "memtopo_host/schema.hpp"
#include "memtopo_host/summary.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

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

std::string resolved_device_spec(const mt_device_info& info, const std::string& spec) {
  if (std::string(info.backend) == "cuda") return "cuda:" + std::to_string(info.ordinal);
  if (spec.rfind("sim:", 0) == 0) return spec;
  return "sim";
}

void check_output_path(const std::string& out) {
  const fs::path output(out);
  const fs::path out_dir = output.has_parent_path() ? output.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(out_dir, ec)) throw UsageError("-o " + out + ": folder " + out_dir.string() + " does not exist");
  if (fs::is_directory(output, ec)) throw UsageError("-o " + out + ": is a folder; name the output file");
}

// Resumes from the journal (probes it holds with kept results are not run again) or starts a
// new one; every problem is a usage error, before anything is measured.
void open_journal(const RunArgs& a, const Registry& reg, const Meta& meta, RunSettings& settings,
                  JournalWriter& journal) {
  const fs::path journal_path = journal_path_for(a.output);
  std::error_code ec;
  const bool journal_exists = fs::exists(journal_path, ec);
  if (!a.resume || !journal_exists) {
    if (a.resume) spdlog::warn("--resume: no journal {}; measuring everything", journal_path.string());
    else if (journal_exists)
      spdlog::warn("replacing {} left by an interrupted run (--resume would have continued it)", journal_path.string());
    const nlohmann::json header = {{"memtopo_journal", 1},         {"tool_version", meta.tool_version},
                                   {"device_spec", meta.device_spec}, {"backend", meta.backend},
                                   {"created_utc", meta.created_utc}};
    try {
      journal.open_new(journal_path, header);
    } catch (const std::exception& e) {
      throw UsageError(e.what());
    }
    return;
  }
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
}

// Runs the plan (stop signals are caught by the caller's StopSignals); each finished probe
// goes to the journal at once.
RunReport measure(const Plan& plan, RunDevice& device, RunSettings& settings, JournalWriter& journal, bool quiet) {
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
  StderrProgress progress(quiet);
  settings.observer = &progress;
  settings.cancel = &StopSignals::cancel();
  RunReport report = run_plan(plan, device.info, *device.executor, settings);
  if (device.worker) device.worker->stop();
  journal.close();
  return report;
}

// Writes the topology (checked against the schema first) and reports; returns the exit status.
int finish(const RunArgs& a, const Plan& plan, const Meta& meta, const RunReport& report) {
  const fs::path output(a.output);
  const fs::path journal_path = journal_path_for(output);
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
  // What was measured, for a reader (stdout, kept by -q); the file has the details.
  std::fputs(render_summary(report.outcomes).c_str(), stdout);
  std::fflush(stdout);
  const auto missing = missing_requested_keys(plan, report.outcomes);
  for (const auto& m : missing) spdlog::error("{}", m);
  std::error_code ec;
  if (report.interrupted) {
    spdlog::warn("interrupted: wrote what was measured to {}; `memtopo run --resume -o {}` continues", a.output,
                 a.output);
  } else {
    fs::remove(journal_path, ec);
  }
  const int status = run_exit_status(report, missing);
  if (!a.quiet || status != kExitOk)
    std::fprintf(stderr, "%s; wrote %s\n", tally(report.outcomes).text().c_str(), a.output.c_str());
  return status;
}

}  // namespace

int cmd_run(const RunArgs& a) {
  Registry reg = load_registry(a.plugin_paths, true);
  Config cfg = maybe_load_config(a.config, reg);
  const Selection sel = effective_selection(a, cfg);
  if (make_plan(reg, sel).steps.empty())  // plan errors before the device is opened
    throw UsageError(reg.probes().empty() ? "no probes found (memtopo list shows where it looks; --plugin-path adds a folder)"
                                          : "the selection leaves no probe to run");
  check_output_path(a.output);

  const std::string device_arg = !a.device.empty() ? a.device : cfg.device.value_or("auto");
  RunSettings settings = run_settings(a, cfg);
  const bool isolated = isolation_wanted(a, cfg);
  RunDevice device = open_run_device(a, cfg, reg, settings, isolated, &StopSignals::count());
  const DeviceFacts facts = device_facts(device.info);
  const Plan plan = make_plan(reg, sel, &facts);

  Meta meta = default_meta();
  meta.backend = device.info.backend;
  meta.device_spec = resolved_device_spec(device.info, device_arg);
  meta.driver_version = cuda_version_string(device.info.driver_version);
  meta.runtime_version = cuda_version_string(device.info.runtime_version);
  spdlog::info("device: {} ({})", device.info.name, device.description);

  JournalWriter journal;
  open_journal(a, reg, meta, settings, journal);
  // Held until the output is written: a second signal then still leaves a complete file.
  StopSignals signals(isolated);
  const RunReport report = measure(plan, device, settings, journal, a.quiet);
  return finish(a, plan, meta, report);
}

}  // namespace memtopo::host::cli
