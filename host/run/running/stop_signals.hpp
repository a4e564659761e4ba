// SIGINT, SIGTERM and SIGHUP while `memtopo run` measures (docs/host.md, "Isolation"): each
// means "stop after the current probe". Internal to memtopo_run.
#pragma once

#include <atomic>
#include <csignal>

namespace memtopo::host::cli {

// Installs the handlers for its lifetime and ignores SIGPIPE (a worker's pipe may close under
// a write). The first signal sets cancel(); with `isolated`, the second is counted too (the
// worker executor ends the probe at once and the output is still written) and the third ends
// the process; without, the second ends the process.
class StopSignals {
 public:
  explicit StopSignals(bool isolated);
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  static const std::atomic<bool>& cancel();
  static const std::atomic<int>& count();

 private:
  struct sigaction previous_[4];
};

}  // namespace memtopo::host::cli
