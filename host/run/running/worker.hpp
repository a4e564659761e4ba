// Probe isolation (docs/host.md, "Isolation"): a worker process, forked from `memtopo run`
// after the plugins and the config are loaded, opens the device and runs the probes one at a
// time; the parent plans, journals, enforces time limits and handles signals, so a probe that
// crashes, exits or hangs fails alone. The parent never touches CUDA: a process that
// initialised it cannot use it in a forked child.
//
// Protocol: JSON lines over a pipe pair. Worker -> parent: {"hello": {"device", "description",
// "fallback"}} or {"error": text} once, then per probe {"progress": f, "stage": s}... and
// {"outcome": journal record, "exiting": bool}. Parent -> worker: {"run": probe name,
// "inputs": journal record holding the results the probe may read}. The worker's stdout and
// stderr go to a third pipe; the parent forwards them line by line and keeps a tail per probe.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <filesystem>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "memtopo/engine.hpp"
#include "run/running/probe_executor.hpp"
#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// What a worker needs from the parent; fork copies it into the child.
struct WorkerSetup {
  const Registry* registry = nullptr;
  engine::DeviceSpec device;  // resolved from --device once (run/planning/run_choice.hpp)
  OptionOverrides options;
  std::filesystem::path raw_dir;
};

// The device a worker opened, as its hello message describes it.
struct WorkerDevice {
  mt_device_info info{};
  std::string description;      // engine::Device::description()
  std::string fallback_reason;  // set when "auto" fell back to the simulated GPU
};

// Every field of mt_device_info, and back (missing fields stay 0; throws std::runtime_error
// for a field of the wrong type).
nlohmann::json device_info_to_json(const mt_device_info& info);
mt_device_info device_info_from_json(const nlohmann::json& j);

class WorkerProcess;

// Runs each probe in the worker; starts a new worker after one died.
class WorkerExecutor final : public BackgroundExecutor {
 public:
  // `stop_requests` counts stop signals (SIGINT, SIGTERM, SIGHUP): after the first the running
  // probe sees cancelled() and is killed if it has not returned kStopGraceS later; after the
  // second it is killed at once. Either way it is recorded as skipped (interrupted).
  WorkerExecutor(WorkerSetup setup, const std::atomic<int>* stop_requests);
  ~WorkerExecutor() override;
  WorkerExecutor(const WorkerExecutor&) = delete;
  WorkerExecutor& operator=(const WorkerExecutor&) = delete;

  // Starts the first worker and returns the device it opened. Throws std::runtime_error
  // ("cannot open device: ...") when it cannot.
  WorkerDevice start();
  // What its workers open: after start(), the device the first one opened (cuda:N, sim:FILE, sim).
  const WorkerSetup& setup() const { return setup_; }
  // Sends the probe to the worker (BackgroundExecutor).
  void begin(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
             const RunSettings& settings) override;
  std::optional<ProbeOutcome> poll(int wait_ms) override;
  // Ends the worker: closes its command pipe and waits for it (killing it after a while).
  void stop();

  static constexpr double kStopGraceS = 5;
  static constexpr int kMaxFailedStarts = 3;

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {  // the probe begin() sent
    const ProbeInfo* probe = nullptr;
    const RunSettings* settings = nullptr;
    ProbeOutcome outcome;
    bool ended = false;  // the outcome is decided (no worker could start)
    double limit_s = 0;
    std::string limit_source;
    // A limit in CPU time: the worker's CPU seconds when the probe began; `deadline` is then
    // the backstop on the wall clock (kWallPerCpuTimeLimit).
    std::optional<double> cpu0;
    Clock::time_point t0, deadline, stop_deadline = Clock::time_point::max();
  };
  bool restart();
  void spawn_spare();
  void await_spare();
  // One look at the worker: the outcome once the probe ended (ok, failed, killed or interrupted).
  std::optional<ProbeOutcome> step(Pending& p, int wait_ms);
  ProbeOutcome worker_died(const ProbeInfo& probe, ProbeOutcome outcome, int wait_status);

  WorkerSetup setup_;
  const std::atomic<int>* stop_requests_;
  std::unique_ptr<WorkerProcess> worker_;
  std::unique_ptr<WorkerProcess> spare_;  // opened beside a probe of its own process, for the next
  std::string last_death_;  // "t-faults/crash crashed with SIGSEGV (signal 11)"
  std::string gave_up_;     // set once no new worker could open the device
  bool worker_used_ = false;  // the current worker has run a probe
  std::optional<Pending> pending_;
};

}  // namespace memtopo::host
