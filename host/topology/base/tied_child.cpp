#include "topology/base/tied_child.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <system_error>

extern char** environ;

namespace memtopo::host {

namespace {

constexpr int kChildDefaultSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> v;
  for (auto& s : strings) v.push_back(s.data());
  v.push_back(nullptr);
  return v;
}

// Between fork and exec: async-signal-safe calls only. Reports exec's errno on `report_fd`.
[[noreturn]] void become_child(const TiedChildSpec& spec, char** argv, char** envp, pid_t parent, int report_fd,
                               const sigset_t& mask) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  if (spec.own_process_group) ::setpgid(0, 0);
  for (int s : kChildDefaultSignals) ::signal(s, SIG_DFL);  // SIGPIPE may be ignored here
  ::sigprocmask(SIG_SETMASK, &mask, nullptr);
  if (spec.stdout_to_null) {
    const int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, STDOUT_FILENO);
  }
  if (spec.stderr_to_stdout) ::dup2(STDOUT_FILENO, STDERR_FILENO);
  if (spec.stderr_fd >= 0) ::dup2(spec.stderr_fd, STDERR_FILENO);
  const bool search = spec.argv[0].find('/') == std::string::npos;
  if (search)
    ::execvpe(argv[0], argv, envp);
  else
    ::execve(argv[0], argv, envp);
  const int err = errno;
  (void)!::write(report_fd, &err, sizeof err);
  ::_exit(127);
}

}  // namespace

pid_t spawn_tied_child(const TiedChildSpec& spec) {
  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = spec.env;
  if (env.empty())
    for (char** e = environ; *e; ++e) env.emplace_back(*e);
  std::vector<char*> argv = c_strings(args), envp = c_strings(env);
  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) throw std::system_error(errno, std::generic_category(), "pipe");
  std::fflush(stdout);
  std::fflush(stderr);
  // The parent's handlers must not run in the child before exec resets them.
  sigset_t stop, previous;
  sigemptyset(&stop);
  for (int s : kChildDefaultSignals) sigaddset(&stop, s);
  ::sigprocmask(SIG_BLOCK, &stop, &previous);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) become_child(spec, argv.data(), envp.data(), parent, report[1], previous);
  const int fork_errno = errno;
  ::sigprocmask(SIG_SETMASK, &previous, nullptr);
  ::close(report[1]);
  if (pid < 0) {
    ::close(report[0]);
    throw std::system_error(fork_errno, std::generic_category(), "fork");
  }
  if (spec.own_process_group) ::setpgid(pid, pid);  // also here: no signal may find it half set
  int exec_errno = 0;
  ssize_t n;
  while ((n = ::read(report[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
  }
  ::close(report[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw std::system_error(exec_errno, std::generic_category(), spec.argv[0]);
  }
  return pid;
}

}  // namespace memtopo::host
