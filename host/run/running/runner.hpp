// Running a plan: the host services a probe sees (mt_host_api), per-probe error isolation.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "memtopo/abi.h"
#include "topology/document/outcome.hpp"
#include "run/planning/plan.hpp"
#include "topology/values/value.hpp"

namespace memtopo::host {

// Receives progress for display.
struct RunObserver {
  virtual ~RunObserver() = default;
  virtual void probe_started(size_t /*index*/, size_t /*total*/, const std::string& /*probe*/) {}
  virtual void progress(const std::string& /*probe*/, double /*fraction*/, const std::string& /*stage*/) {}
  virtual void probe_finished(const ProbeOutcome& /*outcome*/) {}
};

// SMs of a simulated device that the probes' declared budgets hold for (the shipped ones have
// 8 to 12); a replayed H100 has 132.
constexpr int kBudgetSimulatedSms = 16;
// RunSettings::budget_scale for `device`: 1 on a GPU, sm_count / kBudgetSimulatedSms on a
// simulated device of more SMs.
double budget_scale_for(const mt_device_info& device);

struct RunSettings {
  OptionOverrides options;
  std::filesystem::path raw_dir;  // empty: raw series are dropped
  // Probes already measured (from a journal): not run again, their results feed dependents.
  std::map<std::string, ProbeOutcome> already_done;
  // Set (e.g. by SIGINT) to stop after the current probe; probes see it through cancelled().
  const std::atomic<bool>* cancel = nullptr;
  RunObserver* observer = nullptr;
  // Called as soon as a probe finished (ok, failed or skipped while running), before the
  // next one starts: the journal hook. Not called for probes taken from already_done.
  std::function<void(const ProbeOutcome&)> on_finished;
  // Time limits in seconds (0: not set), enforced when probes run in a worker:
  // [run] time_limit_s for every probe, [probes."<name>"] time_limit_s for one.
  double time_limit_s = 0;
  std::map<std::string, double> probe_time_limits_s;
  // What a probe's declared budget is multiplied by: a budget holds for a GPU and for a
  // simulated device of up to kBudgetSimulatedSms SMs; the simulated GPU simulates every SM, so
  // its work, and the wall time it takes, grows with them (budget_scale_for).
  double budget_scale = 1;
  // Time limits count the worker's CPU time, not the clock on the wall: on the simulated GPU,
  // whose work is the CPU's, so that a busy machine (other processes, --jobs workers on fewer
  // cores) does not bring a probe to its limit (docs/host.md, "Isolation").
  bool cpu_time_limits = false;
};

struct RunReport {
  std::vector<ProbeOutcome> outcomes;  // one per plan step, in plan order
  bool interrupted = false;
  double wall_s = 0;  // from the first step's start to the last one's end
};

// Runs every step of `plan` on the device, in this process (probe_executor.hpp has the
// general form). Never throws for a probe's failure.
RunReport run_plan(const Plan& plan, const mt_device_info& device, const mt_backend* backend,
                   RunSettings& settings);

struct RunTally {
  size_t ok = 0, not_determinable = 0, skipped = 0, failed = 0;
  size_t skipped_for_failure = 0;  // of `skipped`: skips caused by a failure
  // "3 ok, 1 not determinable, 2 skipped, 0 failed"
  std::string text() const;
};
RunTally tally(const std::vector<ProbeOutcome>& outcomes);

// One message per key asked for by name (Plan::requested_keys) that no kept result holds:
// "l1d.size_bytes was asked for but not measured: its provider plugin/l1d-size failed: ...".
std::vector<std::string> missing_requested_keys(const Plan& plan, const std::vector<ProbeOutcome>& outcomes);

// The exit status of `memtopo run` (docs/host.md): 0 when every probe was ok, not
// determinable or skipped for a declared reason, every key asked for is there, and every raw
// series was written; else 1.
int run_exit_status(const RunReport& report, const std::vector<std::string>& missing_keys);

}  // namespace memtopo::host
