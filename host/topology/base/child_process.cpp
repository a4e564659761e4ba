#include "topology/base/child_process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <thread>

#include "memtopo/abi.h"

namespace memtopo::host {

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

std::string describe_wait_status(int wait_status) {
  if (WIFSIGNALED(wait_status)) {
    const int sig = WTERMSIG(wait_status);
    const std::string what = signal_name(sig) + " (signal " + std::to_string(sig) + ")";
    if (sig == SIGKILL) return "was killed with " + what + ", by the out-of-memory killer or another process";
    return "crashed with " + what;
  }
  if (WIFEXITED(wait_status)) return "called exit(" + std::to_string(WEXITSTATUS(wait_status)) + ")";
  return "ended with wait status " + std::to_string(wait_status);
}

int reap_child(pid_t pid, double timeout_s) {
  using clock = std::chrono::steady_clock;
  const auto deadline = clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return status;
    if (r < 0 && errno != EINTR) return status;
    if (clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ::kill(pid, SIGKILL);
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

namespace {

// The child of check_library_loads: load, call the entry point, report success, end.
[[noreturn]] void load_in_child(const std::filesystem::path& library, int ok_fd, pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  // The host's own load prints whatever the library prints; the check stays silent on stdout.
  const int devnull = ::open("/dev/null", O_WRONLY);
  if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
  if (void* handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL)) {
    if (auto entry = reinterpret_cast<mt_plugin_entry_fn>(::dlsym(handle, MEMTOPO_ENTRY_POINT_NAME)))
      entry(MEMTOPO_ABI_MAJOR, MEMTOPO_ABI_MINOR);
  }
  const char ok = 1;
  (void)!::write(ok_fd, &ok, 1);
  ::_exit(0);
}

}  // namespace

std::optional<std::string> check_library_loads(const std::filesystem::path& library, double timeout_s) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;  // no check possible: load as before
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(fds[0]);
    load_in_child(library, fds[1], parent);
  }
  ::close(fds[1]);
  pollfd p{fds[0], POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, static_cast<int>(timeout_s * 1000));
  } while (ready < 0 && errno == EINTR);
  char ok = 0;
  const bool loaded = ready > 0 && ::read(fds[0], &ok, 1) == 1;
  ::close(fds[0]);
  if (ready == 0) {
    reap_child(pid, 0);
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", timeout_s);
    return std::string("did not finish loading within ") + limit + " s; remove or fix it";
  }
  const int status = reap_child(pid, 5);
  if (loaded) return std::nullopt;
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return "crashed while loading (" + signal_name(sig) + ", signal " + std::to_string(sig) + "); remove or fix it";
  }
  return describe_wait_status(status) + " while loading; remove or fix it";
}

}  // namespace memtopo::host
