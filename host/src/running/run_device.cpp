#include "running/run_device.hpp"

#include <filesystem>

#include <spdlog/spdlog.h>

namespace memtopo::host::cli {

bool isolation_wanted(const RunArgs& a, const Config& cfg) { return !a.no_isolation && cfg.isolation.value_or(true); }

RunSettings run_settings(const RunArgs& a, const Config& cfg) {
  RunSettings settings;
  settings.options = cfg.options;
  settings.raw_dir = !a.raw_dir.empty() ? std::filesystem::path(a.raw_dir) : std::filesystem::path(cfg.raw_dir.value_or(""));
  settings.time_limit_s = cfg.time_limit_s.value_or(0);
  settings.probe_time_limits_s = cfg.probe_time_limits_s;
  return settings;
}

RunDevice open_run_device(const RunArgs& a, const Config& cfg, const Registry& reg, const RunSettings& settings,
                          bool isolated, const std::atomic<int>* stop_requests) {
  RunDevice d;
  if (!isolated) {
    d.in_process = open_device_arg(a, cfg, reg.replay_map());
    d.info = d.in_process->info();
    d.description = d.in_process->description();
    d.executor = std::make_unique<InProcessExecutor>(d.in_process->info(), d.in_process->backend());
    spdlog::debug("probes run in this process (--no-isolation or [run] isolation = false)");
    return d;
  }
  WorkerSetup setup;
  setup.registry = &reg;
  setup.device_spec = !a.device.empty() ? a.device : cfg.device.value_or("auto");
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
  d.executor = std::move(worker);
  return d;
}

}  // namespace memtopo::host::cli
