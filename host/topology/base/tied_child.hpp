// Child processes tied to this one (docs/host.md, "Guarantees": signals): a fleet run's
// per-device runs and the Python of report, draw and fleet --report. Internal to the host.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace memtopo::host {

struct TiedChildSpec {
  std::vector<std::string> argv;  // argv[0] looked up on PATH when it has no slash
  std::vector<std::string> env;   // empty: this process's environment
  bool stdout_to_null = false;
  int stderr_fd = -1;             // -1: this process's stderr; else dup2'd onto it
  bool stderr_to_stdout = false;  // after stdout_to_null: both silent
  // Its own process group: a Ctrl-C at the terminal reaches only memtopo, which passes each
  // signal on exactly once.
  bool own_process_group = true;
};

// Starts `spec` with fork and exec. The child gets SIGKILL when this process dies, by any
// signal, SIGKILL included (PR_SET_PDEATHSIG, set after fork and followed by a getppid()
// check, so a parent that died in between is seen too). Stop signals are blocked around the
// fork and the child starts with default actions. Returns the pid; throws std::system_error
// with the exec's errno when the program cannot be started (ENOENT: no such program).
pid_t spawn_tied_child(const TiedChildSpec& spec);

}  // namespace memtopo::host
