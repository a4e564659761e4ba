#include "run/running/worker_process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "run/running/nvml_library.hpp"
#include "topology/base/child_process.hpp"

namespace memtopo::host {

namespace {

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool pop_line(std::string& buffer, std::string& line) {
  const size_t nl = buffer.find('\n');
  if (nl == std::string::npos) return false;
  line = buffer.substr(0, nl);
  buffer.erase(0, nl + 1);
  return true;
}

// Closes every descriptor from 3 on but `keep_a` and `keep_b`: a copy of a sibling worker's
// command pipe would keep that worker from ever reading its end, and the parent's files are
// none of the worker's business.
void close_other_fds(int keep_a, int keep_b) {
  std::vector<int> open;
  if (DIR* d = ::opendir("/proc/self/fd")) {
    const int own = ::dirfd(d);
    while (const dirent* e = ::readdir(d)) {
      const int fd = std::atoi(e->d_name);
      if (fd > 2 && fd != own) open.push_back(fd);
    }
    ::closedir(d);
  } else {
    const long most = std::min(::sysconf(_SC_OPEN_MAX), 65536L);
    for (int fd = 3; fd < most; ++fd) open.push_back(fd);
  }
  for (int fd : open)
    if (fd != keep_a && fd != keep_b) ::close(fd);
}

// The child's end of fork: its own process, tied to the parent's life.
[[noreturn]] void become_worker(const WorkerSetup& setup, int command_fd, int message_fd, int output_fd,
                                pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);  // the parent died before prctl
  ::prctl(PR_SET_NAME, "memtopo-worker");
  const int devnull = ::open("/dev/null", O_RDONLY);
  if (devnull >= 0) ::dup2(devnull, STDIN_FILENO);
  ::dup2(output_fd, STDOUT_FILENO);
  ::dup2(output_fd, STDERR_FILENO);
  close_other_fds(command_fd, message_fd);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  worker_main(setup, command_fd, message_fd);
}

}  // namespace

std::unique_ptr<WorkerProcess> WorkerProcess::spawn(const WorkerSetup& setup) {
  int command[2], message[2], output[2];
  if (::pipe2(command, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(message, O_CLOEXEC) != 0 || ::pipe2(output, O_CLOEXEC) != 0) {
    const int err = errno;
    for (int fd : {command[0], command[1], message[0], message[1]}) ::close(fd);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(err));
  }
  std::fflush(stdout);
  std::fflush(stderr);
  close_nvml();  // else the worker cannot open NVML; the parent opens it again when it reads
  // The parent's stop handlers must not run in the child before it installs its own.
  sigset_t stop_signals, previous;
  sigemptyset(&stop_signals);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, s);
  ::sigprocmask(SIG_BLOCK, &stop_signals, &previous);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(command[1]);
    ::close(message[0]);
    ::close(output[0]);
    become_worker(setup, command[0], message[1], output[1], parent);
  }
  const int fork_errno = errno;
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  ::close(command[0]);
  ::close(message[1]);
  ::close(output[1]);
  if (pid < 0) {
    for (int fd : {command[1], message[0], output[0]}) ::close(fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(fork_errno));
  }
  std::unique_ptr<WorkerProcess> w(new WorkerProcess());
  w->pid_ = pid;
  w->command_fd_ = command[1];
  w->message_fd_ = message[0];
  w->output_fd_ = output[0];
  return w;
}

WorkerProcess::~WorkerProcess() {
  if (!waited_ && pid_ > 0) kill_and_wait();
  close_fd(command_fd_);
  close_fd(message_fd_);
  close_fd(output_fd_);
}

bool WorkerProcess::send(const nlohmann::json& message) {
  if (command_fd_ < 0) return false;
  const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(command_fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;  // EPIPE: the worker is gone (SIGPIPE is ignored while a run measures)
    done += static_cast<size_t>(n);
  }
  return true;
}

WorkerProcess::Event WorkerProcess::next(nlohmann::json& message, int timeout_ms) {
  auto take_message = [&]() {
    std::string line;
    if (!pop_line(message_buffer_, line)) return false;
    message = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded()) message = {{"unreadable", line}};
    return true;
  };
  if (take_message()) return Event::Message;
  if (message_fd_ < 0) return Event::Closed;
  pollfd fds[2] = {{message_fd_, POLLIN, 0}, {output_fd_, POLLIN, 0}};
  if (::poll(fds, 2, timeout_ms) <= 0) return Event::Idle;  // timeout or EINTR (a signal)
  if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) read_output();
  if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
    char buf[65536];
    const ssize_t n = ::read(message_fd_, buf, sizeof buf);
    if (n > 0) message_buffer_.append(buf, static_cast<size_t>(n));
    else if (n == 0 || errno != EINTR) close_fd(message_fd_);
  }
  if (take_message()) return Event::Message;
  // Output written before the last message is forwarded before the caller acts on it.
  if (message_fd_ < 0) return Event::Closed;
  return Event::Idle;
}

bool WorkerProcess::read_output() {
  if (output_fd_ < 0) return false;
  char buf[65536];
  const ssize_t n = ::read(output_fd_, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) {
    if (!output_buffer_.empty()) take_output_line(std::move(output_buffer_));
    output_buffer_.clear();
    close_fd(output_fd_);
    return false;
  }
  output_buffer_.append(buf, static_cast<size_t>(n));
  std::string line;
  while (pop_line(output_buffer_, line)) take_output_line(std::move(line));
  return true;
}

void WorkerProcess::take_output_line(std::string line) {
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  tail_.push_back(std::move(line));
  if (tail_.size() > kTailLines) tail_.pop_front();
}

void WorkerProcess::drain_output(double timeout_s) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (output_fd_ >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{output_fd_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) > 0) read_output();
  }
}

std::optional<double> WorkerProcess::cpu_seconds() const {
  clockid_t clock;
  timespec t{};
  if (waited_ || pid_ <= 0 || clock_getcpuclockid(pid_, &clock) != 0 || clock_gettime(clock, &t) != 0) return std::nullopt;
  return double(t.tv_sec) + double(t.tv_nsec) * 1e-9;
}

void WorkerProcess::signal(int sig) {
  if (!waited_ && pid_ > 0) ::kill(pid_, sig);
}

int WorkerProcess::wait_status(double timeout_s) {
  if (!waited_) {
    status_ = reap_child(pid_, timeout_s);
    waited_ = true;
  }
  // A grandchild may hold the output pipe open: do not wait on it for long.
  drain_output(0.5);
  return status_;
}

int WorkerProcess::kill_and_wait() {
  signal(SIGKILL);
  return wait_status(5);
}

int WorkerProcess::finish(double timeout_s) {
  close_fd(command_fd_);
  return wait_status(timeout_s);
}

}  // namespace memtopo::host
