// SIGINT, SIGTERM and SIGHUP while memtopo waits on children it started (a fleet run's
// per-device runs, the Python of report and draw): the signals are recorded, never acted on in
// the handler, and the waiting code passes them on or ends its child (docs/host.md,
// "Guarantees": signals). Internal to memtopo_run.
#pragma once

#include <signal.h>

namespace memtopo::host {

// Installs the handlers for its lifetime (nested instances share them). Each signal is counted,
// kept as the last one, and wakes a poll() on wake_fd().
class SignalRelay {
 public:
  SignalRelay();
  ~SignalRelay();
  SignalRelay(const SignalRelay&) = delete;
  SignalRelay& operator=(const SignalRelay&) = delete;

  static int count();    // stop signals so far
  static int last();     // the last one (0: none)
  static int wake_fd();  // readable after a signal; drain() empties it
  static void drain();

 private:
  struct sigaction previous_[3];
  bool outer_ = false;
};

}  // namespace memtopo::host
