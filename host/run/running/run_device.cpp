#include "run/running/run_device.hpp"

#include <algorithm>
#include <filesystem>
#include <thread>

#include <spdlog/spdlog.h>

#include "run/running/open_device.hpp"

namespace memtopo::host::cli {

RunSettings run_settings(const RunChoice& run, const Config& cfg) {
  RunSettings settings;
  settings.options = cfg.options;
  settings.raw_dir = run.raw_dir;
  settings.time_limit_s = cfg.time_limit_s.value_or(0);
  settings.probe_time_limits_s = cfg.probe_time_limits_s;
  return settings;
}

RunDevice open_run_device(const RunChoice& run, const Registry& reg, const RunSettings& settings,
                          const std::atomic<int>* stop_requests) {
  const DeviceSpec& spec = run.device.one("memtopo run measures several at once");
  (void)run_jobs(run, spec.kind == DeviceSpec::Kind::Cuda ? "cuda" : "sim");  // refused before a device opens
  RunDevice d;
  if (!run.isolated) {
    d.in_process = open_device_arg(run.device, reg.replay_map());
    d.info = d.in_process->info();
    d.description = d.in_process->description();
    engine::Device* device = d.in_process.get();
    d.executor = std::make_unique<InProcessExecutor>(device->info(), device->backend(), [device] { device->begin_probe(); });
    spdlog::debug("probes run in this process (--no-isolation or [run] isolation = false)");
    return d;
  }
  WorkerSetup setup;
  setup.registry = &reg;
  setup.device = spec;
  setup.options = settings.options;
  setup.raw_dir = settings.raw_dir;
  auto worker = std::make_unique<WorkerExecutor>(std::move(setup), stop_requests);
  WorkerDevice opened;
  try {
    opened = worker->start();
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  if (!opened.fallback_reason.empty())
    spdlog::warn("no GPU to measure ({}): measuring the built-in simulated GPU instead (backend = \"sim\")",
                 opened.fallback_reason);
  spdlog::debug("probes run in a worker process");
  d.info = opened.info;
  d.description = opened.description;
  d.worker = worker.get();
  const unsigned jobs = run_jobs(run, d.info.backend);
  for (unsigned j = 1; j < jobs; ++j)
    d.more_workers.push_back(std::make_unique<WorkerExecutor>(worker->setup(), stop_requests));
  d.executor = std::move(worker);
  return d;
}

std::vector<BackgroundExecutor*> RunDevice::workers() const {
  std::vector<BackgroundExecutor*> out{worker};
  for (const auto& w : more_workers) out.push_back(w.get());
  return out;
}

void RunDevice::stop_workers() {
  if (worker) worker->stop();
  for (auto& w : more_workers) w->stop();
}

unsigned run_jobs(const RunChoice& run, const std::string& backend) {
  const unsigned asked = run.jobs;
  const std::string& what = run.jobs_named;
  const bool isolated = run.isolated;
  if (asked > 1 && !isolated)
    throw UsageError(what + ": probes run at once only in worker processes; drop --no-isolation (or [run] "
                     "isolation = false) or ask for one job");
  // A config's jobs is for whatever device it meets; a GPU then runs one probe at a time.
  if (run.jobs_from_command_line && asked > 1 && backend != "sim")
    throw UsageError(what + ": the probes of a GPU run one at a time, or they would disturb each other's timing; "
                     "--jobs is for the simulated GPU");
  if (!isolated || backend != "sim") return 1;
  if (asked > 0) return asked;
  return std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
}

}  // namespace memtopo::host::cli
