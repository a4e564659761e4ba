// `memtopo run`: plan for the device, journal, measure, write the topology, report (the
// output, lock and journal policies are in output_file, run_lock, resume and run_output).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include <spdlog/spdlog.h>

#include "cli/cli_internal.hpp"
#include "run/launch/device_runs.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/document/device_identity.hpp"
#include "topology/document/document.hpp"
#include "topology/values/gpu_state.hpp"
#include "run/output/gpu_reading.hpp"
#include "run/output/throttle_watch.hpp"
#include "run/output/journal.hpp"
#include "run/running/runner.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/output_file.hpp"
#include "run/output/raw_dir.hpp"
#include "run/output/resume.hpp"
#include "run/output/run_lock.hpp"
#include "run/output/run_output.hpp"
#include "run/running/run_device.hpp"
#include "run/running/stop_signals.hpp"
#include "cli/run_progress.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

// A topology file named as another format (t.csv, t.txt) is refused before measuring: run
// writes TOML or JSON, and a name without an extension gets TOML.
void refuse_misnamed_output(const RunRequest& a, const OutputTarget& out) {
  if (out.kind != OutputKind::File) return;
  const std::string ext = lowercase_extension(a.output);
  if (!ext.empty() && ext != ".toml" && ext != ".json")
    throw UsageError("-o " + a.output + ": run writes a topology as .toml or .json; name the file so (memtopo export "
                     "converts a topology to CSV or Accel-Sim)");
  if (!a.format.empty() && !ext.empty() && ext.substr(1) != a.format)
    throw UsageError("-o " + a.output + ": the name says " + ext.substr(1) + ", --format " + a.format +
                     "; name the file by the format you ask for");
}

// What `run` reads and must never overwrite: the config, the device description, the plugins.
std::vector<NamedInput> run_inputs(const RunRequest& a, const RunChoice& run, const Registry& reg) {
  std::vector<NamedInput> inputs{{"--config", a.config}};
  for (const DeviceSpec& d : run.device.specs)
    if (d.kind == DeviceSpec::Kind::Sim && !d.file.empty()) inputs.push_back({"the device description of --device", d.file});
  for (const auto& p : reg.probes())
    if (p.file.rfind("static:", 0) != 0) inputs.push_back({"the plugin of " + p.name, p.file});
  return inputs;
}

// Before anything is measured: -o and --raw-dir are none of the inputs, nor each other.
void refuse_overwriting_inputs(const RunRequest& a, const RunChoice& run, const Registry& reg) {
  std::vector<NamedInput> inputs = run_inputs(a, run, reg);
  refuse_output_over_inputs("-o", a.output, inputs);
  if (run.raw_dir.empty()) return;
  inputs.push_back({"-o", a.output});
  refuse_output_over_inputs(a.raw_dir.empty() ? "[run] raw_dir" : "--raw-dir", run.raw_dir.string(), inputs);
}

// A fleet outlier is often a state, not a part: say so where the run can see it.
void warn_about_state(const GpuState& state) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [key, value] : state) j[key] = to_json(value);
  for (const auto& w : gpu_state_warnings(j)) spdlog::warn("GPU state: {}; the values may not be the GPU's best", w);
}

// [meta] device_spec: the device opened, as --device would name it again.
std::string resolved_device_spec(const mt_device_info& info, const DeviceSpec& spec) {
  if (std::string(info.backend) == "cuda") return "cuda:" + std::to_string(info.ordinal);
  if (spec.kind == DeviceSpec::Kind::Sim) return engine::device_spec_text(spec);
  return "sim";
}

// A fixed-size field of the C struct as a string (it may lack its terminating zero).
std::string field(const char* chars, size_t size) { return std::string(chars, strnlen(chars, size)); }

void set_device_identity(Meta& meta, const mt_device_info& info) {
  meta.device_name = field(info.name, sizeof info.name);
  const std::string uuid = field(info.uuid, sizeof info.uuid), bus = field(info.pci_bus_id, sizeof info.pci_bus_id);
  if (!uuid.empty()) meta.device_uuid = uuid;
  if (!bus.empty()) meta.device_pci_bus_id = bus;
}

// Runs the plan (stop signals are caught by the caller's StopSignals); each finished probe
// goes to the journal at once.
// Progress to the terminal, and each probe's start and end to the throttle watch.
class WatchedProgress final : public RunObserver {
 public:
  WatchedProgress(RunObserver& shown, ThrottleWatch& watch) : shown_(shown), watch_(watch) {}
  void probe_started(size_t index, size_t total, const std::string& probe) override {
    watch_.probe_started();
    shown_.probe_started(index, total, probe);
  }
  void progress(const std::string& probe, double fraction, const std::string& stage) override {
    shown_.progress(probe, fraction, stage);
  }
  void probe_finished(const ProbeOutcome& outcome) override {
    watch_.probe_finished(outcome.probe);
    shown_.probe_finished(outcome);
  }

 private:
  RunObserver& shown_;
  ThrottleWatch& watch_;
};

RunReport measure(const Plan& plan, RunDevice& device, RunSettings& settings, JournalRecorder& journal, bool quiet,
                  ThrottleWatch& watch) {
  settings.on_finished = [&](const ProbeOutcome& o) { journal.record(o); };
  StderrProgress shown(quiet, plan.steps.size());
  WatchedProgress progress(shown, watch);
  settings.observer = &progress;
  settings.cancel = &StopSignals::cancel();
  RunReport report = device.worker ? run_plan(plan, device.info, device.workers(), settings)
                                   : run_plan(plan, device.info, *device.executor, settings);
  device.stop_workers();
  return report;
}

}  // namespace

int cmd_run(const RunRequest& a) {
  // A folder is the output of a fleet run (one file per GPU); anything else is checked first.
  // A fleet member's -o is a name its fleet run chose in a shared folder: never followed.
  const OutputNamedBy named_by = std::getenv(kFleetMemberVariable) ? OutputNamedBy::Memtopo : OutputNamedBy::User;
  const std::optional<OutputTarget> checked =
      is_folder_output(a.output) ? std::nullopt : std::optional<OutputTarget>(resolve_output(a.output, named_by));
  Registry reg = load_registry(a.plugin_paths, true);
  Config cfg = maybe_load_config(a.config, reg);
  const RunChoice run = resolve_run(a, cfg);  // the one place the command line meets the config
  if (wants_device_runs(a, run.device)) return run_devices(a, run, DeviceRunReaders{summary_column_of, write_fleet_summary});
  const OutputTarget out = checked ? *checked : resolve_output(a.output, named_by);
  if (a.resume && out.kind != OutputKind::File)
    throw UsageError("--resume: -o " + a.output + " is not a regular file, so no journal is kept for it; "
                     "resume needs a file output");
  refuse_overwriting_inputs(a, run, reg);
  refuse_misnamed_output(a, out);
  Plan plan = make_plan(reg, run.selection);  // plan errors before the device is opened
  if (plan.steps.empty())
    throw UsageError(reg.probes().empty() ? "no probes found (memtopo list shows where it looks; --plugin-path adds a folder)"
                                          : "the selection leaves no probe to run");
  std::optional<OutputLock> lock;  // held until the output is written and the journal settled
  if (out.kind == OutputKind::File) lock.emplace(out.path);

  RunSettings settings = run_settings(run, cfg);
  engine::set_hardware_counters(run.verify);  // before a worker forks
  RunDevice device = open_run_device(run, reg, settings, &StopSignals::count());
  settings.budget_scale = budget_scale_for(device.info);
  settings.cpu_time_limits = std::string(device.info.backend) == "sim";
  fit_plan_to_device(plan, device_facts(device.info));

  Meta meta = default_meta();
  meta.backend = device.info.backend;
  meta.device_spec = resolved_device_spec(device.info, run.device.one(""));
  meta.driver_version = cuda_version_string(device.info.driver_version);
  meta.runtime_version = cuda_version_string(device.info.runtime_version);
  if (!a.device_label.empty()) meta.device_label = a.device_label;
  set_device_identity(meta, device.info);
  spdlog::info("device: {} ({})", terminal_text(device.info.name), device.description);
  meta.gpu_state = read_gpu_state(device.info, "start");

  settings.raw_dir = prepare_raw_dir(run);  // before anything is measured
  std::string description_text;
  try {
    description_text = device_description_text(device.info, device.description);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  const nlohmann::json header = journal_header(meta, device_identity(device.info, description_text));
  JournalWriter journal;
  const JournalState js = open_journal(a, out, reg, plan, header, settings, journal);
  JournalRecorder recorder(js.path.empty() ? nullptr : &journal);
  // Held until the output is written: a second signal then still leaves a complete file.
  StopSignals signals(run.isolated);
  ThrottleWatch watch(device.info);
  const RunReport report = measure(plan, device, settings, recorder, a.quiet, watch);
  journal.close();
  for (auto& entry : read_gpu_state(device.info, "end")) meta.gpu_state.push_back(std::move(entry));
  for (auto& entry : watch.entries()) meta.gpu_state.push_back(std::move(entry));
  warn_about_state(meta.gpu_state);
  if (!settings.raw_dir.empty()) write_raw_dir_identity(settings.raw_dir, meta);
  return finish(a, out, plan, meta, report, js, recorder);
}

}  // namespace memtopo::host::cli
