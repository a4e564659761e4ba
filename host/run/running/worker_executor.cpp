// The parent's side of probe isolation (worker.hpp): one request per probe, the outcome or
// the worker's end, time limits and stop signals.
#include <sys/wait.h>

#include <algorithm>
#include <csignal>
#include <chrono>
#include <limits>
#include <cstdio>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "topology/base/child_process.hpp"
#include "run/running/outcome_json.hpp"
#include "run/planning/device_spec.hpp"
#include "run/running/worker_process.hpp"

namespace memtopo::host {

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kStartTimeoutS = 300;  // opening a CUDA device can take a while on a busy node
constexpr size_t kReasonOutputChars = 200;

std::string seconds_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", s);
  return buf;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

int ms_until(Clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now()).count();
  return ms < 0 ? 0 : ms > 200 ? 200 : static_cast<int>(ms);
}

// CPU seconds a probe has left of a limit in CPU time; infinite without one, or where the
// worker's CPU time cannot be read (the wall clock's backstop then ends it).
double cpu_time_left(const std::optional<double>& cpu0, double limit_s, const WorkerProcess& worker) {
  const std::optional<double> now = cpu0 ? worker.cpu_seconds() : std::nullopt;
  if (!now) return std::numeric_limits<double>::infinity();
  return limit_s - (*now - *cpu0);
}

// "30 s", "30 s of CPU time", or the wall clock's backstop of a CPU limit.
std::string time_limit_text(double limit_s, bool cpu_limit, bool cpu_spent) {
  if (!cpu_limit) return seconds_text(limit_s) + " s";
  if (cpu_spent) return seconds_text(limit_s) + " s of CPU time";
  return seconds_text(std::min(limit_s * kWallPerCpuTimeLimit, kMaxTimeLimitS)) + " s on the clock, " +
         seconds_text(kWallPerCpuTimeLimit) + " times its limit of " + seconds_text(limit_s) +
         " s of CPU time, which it did not use up: it waited";
}

// The last line of output, short, for a reason; the log gets the whole tail.
std::string last_output(const std::deque<std::string>& tail) {
  for (auto it = tail.rbegin(); it != tail.rend(); ++it) {
    if (it->find_first_not_of(" \t\r") == std::string::npos) continue;
    return it->size() > kReasonOutputChars ? it->substr(0, kReasonOutputChars) + "..." : *it;
  }
  return "";
}

void log_failure(const std::string& probe, const std::string& reason, const std::deque<std::string>& tail) {
  std::string text = probe + ": failed: " + reason;
  if (!tail.empty()) {
    text += "\n  last output of its worker:";
    for (const auto& line : tail) text += "\n    " + line;
  }
  spdlog::error("{}", text);
}

// The request: the probe and the results it may read (its required and used keys).
nlohmann::json request_for(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs) {
  ProbeOutcome carrier;
  carrier.probe = probe.name;
  carrier.status = Status::Ok;
  for (const auto* keys : {&probe.required, &probe.used})
    for (const auto& k : *keys)
      if (auto it = inputs.find(k); it != inputs.end()) carrier.results.push_back(it->second);
  return {{"run", probe.name}, {"inputs", outcome_to_json(carrier)}};
}

// Waits for the hello of a new worker: the device it opened, or why it could not.
WorkerDevice await_hello(WorkerProcess& worker) {
  const auto deadline = Clock::now() + std::chrono::seconds(static_cast<int>(kStartTimeoutS));
  nlohmann::json msg;
  while (Clock::now() < deadline) {
    switch (worker.next(msg, ms_until(deadline))) {
      case WorkerProcess::Event::Idle: continue;
      case WorkerProcess::Event::Closed:
        throw std::runtime_error("cannot open device: the worker process " + describe_wait_status(worker.finish(2)) +
                                 " while opening it");
      case WorkerProcess::Event::Message: break;
    }
    if (msg.contains("error")) throw std::runtime_error(msg["error"].get<std::string>());
    if (!msg.contains("hello")) continue;
    WorkerDevice d;
    d.info = device_info_from_json(msg["hello"].at("device"));
    d.description = msg["hello"].value("description", "");
    d.fallback_reason = msg["hello"].value("fallback", "");
    return d;
  }
  worker.kill_and_wait();
  throw std::runtime_error("cannot open device: the worker did not open it within " + seconds_text(kStartTimeoutS) +
                           " s");
}

}  // namespace

WorkerExecutor::WorkerExecutor(WorkerSetup setup, const std::atomic<int>* stop_requests)
    : setup_(std::move(setup)), stop_requests_(stop_requests) {}

WorkerExecutor::~WorkerExecutor() {
  stop();
  if (spare_) spare_->finish(5);
}

WorkerDevice WorkerExecutor::start() {
  worker_ = WorkerProcess::spawn(setup_);
  worker_used_ = false;
  WorkerDevice d;
  try {
    d = await_hello(*worker_);
  } catch (...) {
    worker_.reset();
    throw;
  }
  // A new worker after a crash must open the same device, not resolve "auto" again.
  const std::string backend = d.info.backend;
  if (backend == "cuda") setup_.device = DeviceSpec{DeviceSpec::Kind::Cuda, d.info.ordinal, ""};
  else if (setup_.device.kind != DeviceSpec::Kind::Sim) setup_.device = DeviceSpec{DeviceSpec::Kind::Sim, 0, ""};
  return d;
}

void WorkerExecutor::spawn_spare() {
  try {
    spare_ = WorkerProcess::spawn(setup_);
  } catch (const std::exception& e) {
    spdlog::debug("no spare worker: {}", e.what());
  }
}

void WorkerExecutor::await_spare() {
  if (!spare_) return;
  try {
    (void)await_hello(*spare_);
  } catch (const std::exception& e) {
    spare_.reset();  // the next probe starts a worker of its own
    spdlog::debug("no spare worker: {}", e.what());
  }
}

void WorkerExecutor::stop() {
  if (worker_) worker_->finish(5);
  worker_.reset();
}

bool WorkerExecutor::restart() {
  std::string why;
  for (int attempt = 0; attempt < kMaxFailedStarts; ++attempt) {
    try {
      start();
      return true;
    } catch (const std::exception& e) {
      why = e.what();
      if (last_death_.empty()) spdlog::warn("starting a worker: {}", why);
      else spdlog::warn("starting a new worker after {}: {}", last_death_, why);
    }
  }
  gave_up_ = last_death_.empty() ? "not run: no worker could open the device (" + why + ")"
                                 : "not run: no new worker could open the device after " + last_death_ + " (" + why + ")";
  return false;
}

void WorkerExecutor::begin(const ProbeInfo& probe, const std::map<std::string, ResultRecord>& inputs,
                           const RunSettings& settings) {
  Pending p;
  p.probe = &probe;
  p.settings = &settings;
  p.outcome.probe = probe.name;
  p.outcome.version = probe.plugin_version;
  p.outcome.status = Status::Failed;
  // A probe of its own process gets a worker no probe has run in, and none after it inherits it.
  if (probe.own_process && worker_ && worker_used_) {
    stop();
    last_death_ = "ending the worker before " + probe.name + " (it runs in a process of its own)";
  }
  if (gave_up_.empty() && !worker_ && spare_) {
    worker_ = std::move(spare_);
    worker_used_ = false;
  }
  // The worker for the probes after one of its own process opens the device beside that one's,
  // before it measures: the spare only waits while the probe runs.
  const bool spare_wanted = gave_up_.empty() && probe.own_process && !spare_ && !worker_;
  if (spare_wanted) spawn_spare();
  if (gave_up_.empty() && !worker_) restart();
  if (spare_wanted) await_spare();
  if (!gave_up_.empty()) {
    p.outcome.reason = gave_up_;
    p.ended = true;
    spdlog::error("{}: failed: {}", probe.name, p.outcome.reason);
    pending_ = std::move(p);
    return;
  }
  worker_->clear_tail();
  worker_used_ = true;
  worker_->send(request_for(probe, inputs));  // a worker that is gone shows as Closed in poll
  const TimeLimit limit = time_limit_for(probe, settings);
  p.limit_s = limit.seconds;
  p.limit_source = limit.source;
  p.t0 = Clock::now();
  if (limit.cpu_time) p.cpu0 = worker_->cpu_seconds();
  const double wall_s = p.cpu0 ? std::min(limit.seconds * kWallPerCpuTimeLimit, kMaxTimeLimitS) : limit.seconds;
  p.deadline = p.t0 + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wall_s));
  pending_ = std::move(p);
}

std::optional<ProbeOutcome> WorkerExecutor::poll(int wait_ms) {
  if (!pending_) return std::nullopt;
  std::optional<ProbeOutcome> done;
  if (pending_->ended) done = std::move(pending_->outcome);
  else done = step(*pending_, wait_ms);
  if (!done) return done;
  const bool own = pending_->probe->own_process;
  pending_.reset();
  if (own) stop();
  return done;
}

ProbeOutcome WorkerExecutor::worker_died(const ProbeInfo& probe, ProbeOutcome outcome, int wait_status) {
  const std::string how = describe_wait_status(wait_status);
  outcome.reason = how;
  if (WIFEXITED(wait_status)) outcome.reason += " (a probe must return its status, not end the process)";
  const std::string output = last_output(worker_->tail());
  if (!output.empty()) outcome.reason += "; last output: " + output;
  log_failure(probe.name, outcome.reason, worker_->tail());
  last_death_ = probe.name + " " + how;
  worker_.reset();
  return outcome;
}

std::optional<ProbeOutcome> WorkerExecutor::step(Pending& p, int wait_ms) {
  const ProbeInfo& probe = *p.probe;
  ProbeOutcome& outcome = p.outcome;
  auto interrupted = [&](const std::string& why) {
    worker_->kill_and_wait();
    worker_.reset();
    outcome.status = Status::Skipped;
    outcome.reason = "interrupted: " + why;
    outcome.duration_s = seconds_since(p.t0);
    spdlog::warn("{}: {}", probe.name, outcome.reason);
    return std::move(outcome);
  };
  const int stops = stop_requests_ ? stop_requests_->load() : 0;
  if (stops >= 2) return interrupted("a second stop signal ended it at once");
  if (stops == 1 && p.stop_deadline == Clock::time_point::max()) {
    worker_->signal(SIGINT);  // the probe sees cancelled()
    p.stop_deadline = Clock::now() + std::chrono::seconds(static_cast<int>(kStopGraceS));
  }
  const auto now = Clock::now();
  if (now >= p.stop_deadline)
    return interrupted("it did not return within " + seconds_text(kStopGraceS) + " s of the stop signal");
  const double cpu_left_s = cpu_time_left(p.cpu0, p.limit_s, *worker_);
  if (now >= p.deadline || cpu_left_s <= 0) {
    worker_->kill_and_wait();
    outcome.duration_s = seconds_since(p.t0);
    outcome.reason = "exceeded its time limit of " + time_limit_text(p.limit_s, bool(p.cpu0), cpu_left_s <= 0) +
                     " (from " + p.limit_source + "; set time_limit_s in [probes.\"" + probe.name + "\"] to change it)";
    log_failure(probe.name, outcome.reason, worker_->tail());
    last_death_ = probe.name + " exceeding its time limit";
    worker_.reset();
    return std::move(outcome);
  }
  nlohmann::json msg;
  // The CPU time left bounds the wait too: a worker of one thread (the simulated GPU's) cannot
  // use it up sooner.
  const int cpu_wait_ms = int(std::min(cpu_left_s * 1000.0 + 1, double(wait_ms)));
  const int wait = std::min({wait_ms, cpu_wait_ms, ms_until(p.deadline), ms_until(p.stop_deadline)});
  const auto event = worker_->next(msg, wait);
  if (event == WorkerProcess::Event::Idle) return std::nullopt;
  if (event == WorkerProcess::Event::Closed) {
    const int status = worker_->finish(2);
    outcome.duration_s = seconds_since(p.t0);
    return worker_died(probe, std::move(outcome), status);
  }
  if (msg.contains("progress")) {
    if (p.settings->observer)
      p.settings->observer->progress(probe.name, msg.value("progress", 0.0), msg.value("stage", std::string()));
    return std::nullopt;
  }
  if (!msg.contains("outcome")) return std::nullopt;
  try {
    outcome = outcome_from_json(msg["outcome"]);
  } catch (const std::exception& e) {
    outcome.status = Status::Failed;
    outcome.results.clear();
    outcome.duration_s = seconds_since(p.t0);
    outcome.reason = std::string("internal: the host cannot read the outcome its worker sent: ") + e.what();
    spdlog::error("{}: failed: {}", probe.name, outcome.reason);
  }
  if (msg.value("exiting", false)) {
    last_death_ = probe.name + " leaving the device in an error state";
    stop();
  }
  return std::move(outcome);
}

}  // namespace memtopo::host
