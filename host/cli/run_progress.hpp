// `memtopo run`'s progress on stderr. Not installed.
#pragma once

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "run/running/runner.hpp"

namespace memtopo::host::cli {

// On a terminal one status line under the log (LiveLine): a bar of the probes ended, the probe
// running with its share done and stage, the time taken and, once a probe has ended, about how
// long the rest takes at the run's pace. Each probe as it ends, on a terminal or not, is one line
// "[i/N] probe: status (t s)" numbered in the order probes end (every probe of the plan is
// counted, those settled without running too), so that a log reads in order whatever ran at
// once (--jobs).
class StderrProgress : public RunObserver {
 public:
  StderrProgress(bool quiet, size_t total);
  ~StderrProgress() override;
  void probe_started(size_t index, size_t total, const std::string& probe) override;
  void progress(const std::string& probe, double fraction, const std::string& stage) override;
  void probe_finished(const ProbeOutcome& o) override;

 private:
  std::string status_line() const;  // under mutex_
  void redraw();                    // under mutex_

  std::mutex mutex_;
  bool quiet_;
  size_t total_, ended_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  std::string current_, stage_;  // the probe last started or heard from
  double fraction_ = 0;
  std::map<std::string, bool> running_;
};

}  // namespace memtopo::host::cli
