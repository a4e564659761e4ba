// How a plan's probes run: in this process (InProcessExecutor: the runner's unit tests,
// --no-isolation) or in a worker process (worker.hpp, the default of `memtopo run`).
#pragma once

#include <map>
#include <string>

#include "memtopo_host/runner.hpp"

namespace memtopo::host {

class ProbeExecutor {
 public:
  virtual ~ProbeExecutor() = default;
  // Runs one probe whose needs are met; `inputs` holds at least the results it may read.
  // Never throws for the probe's misbehaviour: that becomes the outcome.
  virtual ProbeOutcome run(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                           const RunSettings& settings) = 0;
};

// Runs one probe through the C boundary in this process and turns its status into an outcome.
ProbeOutcome run_probe(const ProbeInfo& probe, const mt_device_info& device, const mt_backend* backend,
                       const RunSettings& settings, const std::map<std::string, ResultRecord>& inputs);

class InProcessExecutor : public ProbeExecutor {
 public:
  InProcessExecutor(const mt_device_info& device, const mt_backend* backend) : device_(device), backend_(backend) {}
  ProbeOutcome run(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                   const RunSettings& settings) override {
    return run_probe(probe, device_, backend_, settings, inputs);
  }

 private:
  const mt_device_info& device_;
  const mt_backend* backend_;
};

// run_plan with the probes run by `executor`; `device` is what the plan's needs are checked on.
RunReport run_plan(const Plan& plan, const mt_device_info& device, ProbeExecutor& executor, RunSettings& settings);

// A probe's time limit (docs/host.md, "Isolation") and where it comes from, for messages.
struct TimeLimit {
  double seconds = 0;
  std::string source;  // "[probes.\"x/y\"] time_limit_s", "[run] time_limit_s", "declared budget", "default"
};
constexpr double kDefaultTimeLimitS = 600;
// The longest time limit a config may set (about 11.6 days): far below what the clocks hold.
constexpr double kMaxTimeLimitS = 1e6;
TimeLimit time_limit_for(const ProbeInfo& probe, const RunSettings& settings);

}  // namespace memtopo::host
