// One worker process seen from the parent (worker.hpp): its pipes, its output and its end.
// Internal to memtopo_run.
#pragma once

#include <sys/types.h>

#include <deque>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "run/running/worker.hpp"

namespace memtopo::host {

// The child side: opens the device, says hello, runs probes until its command pipe closes.
[[noreturn]] void worker_main(const WorkerSetup& setup, int command_fd, int message_fd);

class WorkerProcess {
 public:
  static constexpr size_t kTailLines = 20;

  // Forks a worker running worker_main. Throws std::runtime_error when pipe or fork fails.
  static std::unique_ptr<WorkerProcess> spawn(const WorkerSetup& setup);
  ~WorkerProcess();  // kills a worker still running
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  // One message as a line; false when the worker is gone.
  bool send(const nlohmann::json& message);

  enum class Event { Message, Closed, Idle };
  // Waits up to `timeout_ms` for the next message. Worker output read meanwhile goes to
  // stderr and into tail(). Idle: nothing yet (timeout, a signal, only output); Closed: the
  // worker closed its message pipe (it ended).
  Event next(nlohmann::json& message, int timeout_ms);

  void signal(int sig);
  // The CPU time the worker has used so far (all its threads), in seconds; nullopt once it has
  // ended or where the system cannot tell.
  std::optional<double> cpu_seconds() const;
  // Ends the worker at once (SIGKILL); returns its wait status.
  int kill_and_wait();
  // Closes the command pipe and waits up to `timeout_s` for the worker to end (then kills
  // it); returns its wait status. Output left in the pipe is forwarded first.
  int finish(double timeout_s);

  // The last kTailLines lines the worker wrote since clear_tail().
  const std::deque<std::string>& tail() const { return tail_; }
  void clear_tail() { tail_.clear(); }

 private:
  WorkerProcess() = default;
  bool read_output();  // false at end of file
  void drain_output(double timeout_s);
  void take_output_line(std::string line);
  int wait_status(double timeout_s);

  pid_t pid_ = -1;
  int command_fd_ = -1, message_fd_ = -1, output_fd_ = -1;
  std::string message_buffer_, output_buffer_;
  std::deque<std::string> tail_;
  bool waited_ = false;
  int status_ = 0;
};

}  // namespace memtopo::host
