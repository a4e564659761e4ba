// The device `memtopo run` measures and what runs its probes: a worker process that opened
// it (the default) or this process (--no-isolation). Internal to memtopo_host.
#pragma once

#include <memory>
#include <string>

#include "commands/cli_internal.hpp"
#include "memtopo_host/worker.hpp"

namespace memtopo::host::cli {

struct RunDevice {
  mt_device_info info{};
  std::string description;  // engine::Device::description()
  std::unique_ptr<engine::Device> in_process;  // --no-isolation only
  std::unique_ptr<ProbeExecutor> executor;
  WorkerExecutor* worker = nullptr;  // the executor, when isolated
};

// Whether probes run in a worker: --no-isolation, else [run] isolation, else yes.
bool isolation_wanted(const RunArgs& a, const Config& cfg);

// Options, raw folder and time limits from the command line and the config.
RunSettings run_settings(const RunArgs& a, const Config& cfg);

// Opens the device (in the first worker when isolated); a device that cannot be opened is a
// UsageError with the same message either way.
RunDevice open_run_device(const RunArgs& a, const Config& cfg, const Registry& reg, const RunSettings& settings,
                          bool isolated, const std::atomic<int>* stop_requests);

}  // namespace memtopo::host::cli
