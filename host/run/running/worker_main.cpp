// The worker process (worker.hpp): opens the device, then runs one probe per request.
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <string>

#include <spdlog/spdlog.h>

#include "memtopo/engine.hpp"
#include "run/running/outcome_json.hpp"
#include "run/running/worker_process.hpp"

namespace memtopo::host {

namespace {

std::atomic<bool> g_worker_cancel{false};

// The parent forwards its stop request as SIGINT; a terminal sends the stop signals to the
// whole process group. Either way the probe only sees cancelled(); the parent decides the rest.
extern "C" void on_worker_stop(int) { g_worker_cancel.store(true); }

void install_handlers() {
  struct sigaction action {};
  action.sa_handler = on_worker_stop;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &action, nullptr);
  std::signal(SIGPIPE, SIG_DFL);  // the parent gone: end quietly
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, s);
  ::sigprocmask(SIG_UNBLOCK, &stop_signals, nullptr);
}

void send_line(int fd, const nlohmann::json& message) {
  const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) ::_exit(1);  // the parent is gone
    done += static_cast<size_t>(n);
  }
}

// Blocking read of the next request line; false at end of file (the parent is done).
bool read_line(int fd, std::string& buffer, std::string& line) {
  while (true) {
    const size_t nl = buffer.find('\n');
    if (nl != std::string::npos) {
      line = buffer.substr(0, nl);
      buffer.erase(0, nl + 1);
      return true;
    }
    char buf[65536];
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    buffer.append(buf, static_cast<size_t>(n));
  }
}

// Progress to the parent, thinned to what its display shows (whole percents, stage changes).
class ProgressSender : public RunObserver {
 public:
  explicit ProgressSender(int fd) : fd_(fd) {}
  void progress(const std::string&, double fraction, const std::string& stage) override {
    if (stage == last_stage_ && std::fabs(fraction - last_fraction_) < 0.01) return;
    last_stage_ = stage;
    last_fraction_ = fraction;
    send_line(fd_, {{"progress", fraction}, {"stage", stage}});
  }
  void reset() { last_fraction_ = -1, last_stage_.clear(); }

 private:
  int fd_;
  double last_fraction_ = -1;
  std::string last_stage_;
};

// Runs the probe a request names; a request it cannot read becomes the probe's failure.
ProbeOutcome run_request(const nlohmann::json& request, const WorkerSetup& setup, const engine::Device& device,
                         const RunSettings& settings) {
  ProbeOutcome failed;
  failed.status = Status::Failed;
  const std::string name = request.value("run", "");
  failed.probe = name;
  const ProbeInfo* probe = setup.registry->find(name);
  if (!probe) {
    failed.reason = "internal: the worker has no probe named '" + name + "'";
    return failed;
  }
  failed.version = probe->plugin_version;
  std::map<std::string, ResultRecord> inputs;
  try {
    for (auto& r : outcome_from_json(request.at("inputs")).results) inputs[r.key] = std::move(r);
  } catch (const std::exception& e) {
    failed.reason = std::string("internal: the worker could not read the probe's inputs: ") + e.what();
    return failed;
  }
  return run_probe(*probe, device.info(), device.backend(), settings, inputs);
}

}  // namespace

void worker_main(const WorkerSetup& setup, int command_fd, int message_fd) {
  install_handlers();
  std::unique_ptr<engine::Device> device;
  std::string fallback;
  try {
    device = engine::open_device(setup.device, &fallback, setup.registry->replay_map());
  } catch (const std::exception& e) {
    std::fflush(stderr);
    send_line(message_fd, {{"error", std::string("cannot open device: ") + e.what()}});
    ::_exit(0);
  }
  send_line(message_fd, {{"hello",
                          {{"device", device_info_to_json(device->info())},
                           {"description", device->description()},
                           {"fallback", fallback}}}});
  ProgressSender progress(message_fd);
  RunSettings settings;
  settings.options = setup.options;
  settings.raw_dir = setup.raw_dir;
  settings.cancel = &g_worker_cancel;
  settings.observer = &progress;
  std::string buffer, line;
  while (read_line(command_fd, buffer, line)) {
    const auto request = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!request.is_object()) break;
    progress.reset();
    device->begin_probe();
    ProbeOutcome outcome = run_request(request, setup, *device, settings);
    // A sticky device error poisons every later call in this process: end it, so the next
    // probe gets a fresh worker and context.
    const std::string sticky = device->sticky_error();
    if (!sticky.empty()) {
      spdlog::error("{}: left the device in an error state: {}", outcome.probe, sticky);
      outcome.status = Status::Failed;
      outcome.reason = "left the device in an error state (" + sticky + "); the next probe runs in a new worker";
      outcome.results.clear();
    }
    std::fflush(stdout);
    std::fflush(stderr);
    send_line(message_fd, {{"outcome", outcome_to_json(outcome)}, {"exiting", !sticky.empty()}});
    if (!sticky.empty()) break;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);
}

}  // namespace memtopo::host
