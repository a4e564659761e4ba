// The device `memtopo run` measures and what runs its probes: a worker process that opened
// it (the default) or this process (--no-isolation). Internal to memtopo_run.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <atomic>

#include "topology/base/usage_error.hpp"
#include "memtopo/engine.hpp"
#include "run/planning/config.hpp"
#include "topology/plugins/registry.hpp"
#include "run/running/worker.hpp"
#include "run/planning/run_choice.hpp"

namespace memtopo::host::cli {

struct RunDevice {
  mt_device_info info{};
  std::string description;  // engine::Device::description()
  std::unique_ptr<engine::Device> in_process;  // --no-isolation only
  std::unique_ptr<ProbeExecutor> executor;
  WorkerExecutor* worker = nullptr;  // the executor, when isolated
  // The simulated GPU with --jobs above 1: more workers beside `worker`, each opening the same
  // device when it runs its first probe.
  std::vector<std::unique_ptr<WorkerExecutor>> more_workers;
  // Every worker, `worker` first: what the plan runs on.
  std::vector<BackgroundExecutor*> workers() const;
  void stop_workers();
};

// How many probes run at once (--jobs): 1 on a GPU (probes would disturb each other's
// timing) and without isolation; on the simulated GPU --jobs, or by default the machine's
// cores up to 4. A UsageError for --jobs above 1 where only 1 can be.
unsigned run_jobs(const RunChoice& run, const std::string& backend);

// Options, raw folder and time limits: the run's choice and the config's probe options.
RunSettings run_settings(const RunChoice& run, const Config& cfg);

// Opens the one device of the run (in the first worker when isolated); a device that cannot be
// opened is a UsageError with the same message either way.
RunDevice open_run_device(const RunChoice& run, const Registry& reg, const RunSettings& settings,
                          const std::atomic<int>* stop_requests);

}  // namespace memtopo::host::cli
