// How a plan's probes run: in this process (InProcessExecutor: the runner's unit tests,
// --no-isolation) or in a worker process (worker.hpp, the default of `memtopo run`).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "run/planning/config.hpp"
#include "run/running/runner.hpp"

namespace memtopo::host {

class ProbeExecutor {
 public:
  virtual ~ProbeExecutor() = default;
  // Runs one probe whose needs are met; `inputs` holds at least the results it may read.
  // Never throws for the probe's misbehaviour: that becomes the outcome.
  virtual ProbeOutcome run(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                           const RunSettings& settings) = 0;
};

// An executor whose probe runs elsewhere (a worker process), so that one thread keeps several
// busy: begin() starts a probe (copying its inputs; `probe` and `settings` must outlive the
// polls), poll() waits at most `wait_ms` and returns the outcome once the probe ended.
class BackgroundExecutor : public ProbeExecutor {
 public:
  virtual void begin(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                     const RunSettings& settings) = 0;
  virtual std::optional<ProbeOutcome> poll(int wait_ms) = 0;
  ProbeOutcome run(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                   const RunSettings& settings) override {
    begin(probe, inputs, settings);
    while (true)
      if (auto outcome = poll(200)) return std::move(*outcome);
  }
};

// Runs one probe through the C boundary in this process and turns its status into an outcome.
ProbeOutcome run_probe(const ProbeInfo& probe, const mt_device_info& device, const mt_backend* backend,
                       const RunSettings& settings, const std::map<std::string, ResultRecord>& inputs);

class InProcessExecutor : public ProbeExecutor {
 public:
  // `before_probe` (may be empty) runs before each probe: engine::Device::begin_probe.
  InProcessExecutor(const mt_device_info& device, const mt_backend* backend, std::function<void()> before_probe = {})
      : device_(device), backend_(backend), before_probe_(std::move(before_probe)) {}
  ProbeOutcome run(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                   const RunSettings& settings) override {
    if (before_probe_) before_probe_();
    return run_probe(probe, device_, backend_, settings, inputs);
  }

 private:
  const mt_device_info& device_;
  const mt_backend* backend_;
  std::function<void()> before_probe_;
};

// run_plan with the probes run by `executor`; `device` is what the plan's needs are checked on.
RunReport run_plan(const Plan& plan, const mt_device_info& device, ProbeExecutor& executor, RunSettings& settings);
// run_plan with as many probes at once as `executors` (parallel_runner.cpp): a probe starts
// once every probe that provides a key it requires or uses has ended, on the first idle
// executor, the head of the longest chain of declared budgets first. The outcomes are in plan
// order; the observer and the journal hook are called on this thread as probes start and
// end. Only for devices whose probes do not disturb each other: the simulated GPU, whose
// probes each start from the state it was opened in (engine::Device::begin_probe), measures
// the same at any number of executors.
RunReport run_plan(const Plan& plan, const mt_device_info& device, const std::vector<BackgroundExecutor*>& executors,
                   RunSettings& settings);

// A probe's time limit (docs/host.md, "Isolation") and where it comes from, for messages.
struct TimeLimit {
  double seconds = 0;
  std::string source;  // "[probes.\"x/y\"] time_limit_s", "[run] time_limit_s", "declared budget", "default"
  // Seconds of the worker's CPU time, not of the clock on the wall (RunSettings::cpu_time_limits).
  bool cpu_time = false;
};
constexpr double kDefaultTimeLimitS = 600;
// A limit in CPU time also ends a worker that has taken this many times its seconds on the
// clock: a probe that waits (a deadlock) uses no CPU time. Wide, since on a busy machine a
// worker gets a share of a core.
constexpr double kWallPerCpuTimeLimit = 10;
// In a build with AddressSanitizer, what a declared budget (or the default) is multiplied by:
// the sanitized simulator runs several times slower than the build the budgets were set for.
constexpr double kSanitizedBudgetScale = 8;
// What this build multiplies declared budgets by: kSanitizedBudgetScale or 1.
double build_budget_scale();
TimeLimit time_limit_for(const ProbeInfo& probe, const RunSettings& settings);

}  // namespace memtopo::host
