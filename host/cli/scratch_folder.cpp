// Temporary folders of report, draw and fleet --report (docs/host.md, "Guarantees": signals):
// all of one process's under one folder, $TMPDIR/memtopo-PID-XXXXXX, removed with the last of
// them, on a stop signal, and, for a process that was killed (SIGKILL leaves no chance to
// clean), by the next memtopo that makes such a folder: a folder of a pid that no longer runs
// is stale.
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>

#include "cli/cli_internal.hpp"
#include "topology/base/child_process.hpp"
#include "run/running/signal_relay.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

constexpr const char* kRootPrefix = "memtopo-";

// The process's folder and the stop signals recorded while it exists.
struct ScratchRoot {
  fs::path path;
  SignalRelay relay;
  int users = 0;
};

ScratchRoot* g_root = nullptr;

fs::path temp_base() {
  std::error_code ec;
  const fs::path base = fs::temp_directory_path(ec);
  if (ec || !fs::is_directory(base, ec)) {
    const char* tmpdir = std::getenv("TMPDIR");
    throw UsageError(std::string("TMPDIR") + (tmpdir ? "=" + std::string(tmpdir) : std::string()) +
                     ": not a folder; memtopo needs a temporary folder it can write: set TMPDIR to one, or unset it");
  }
  return base;
}

// Folders memtopo-PID-XXXXXX of this user whose process no longer runs.
void remove_stale_roots(const fs::path& base) {
  static const std::regex name(R"(memtopo-([0-9]{1,10})-[A-Za-z0-9]{6})");
  std::error_code ec;
  for (auto it = fs::directory_iterator(base, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    std::smatch m;
    const std::string leaf = it->path().filename().string();
    if (!std::regex_match(leaf, m, name)) continue;
    const long pid = std::strtol(m[1].str().c_str(), nullptr, 10);
    struct stat st {};
    if (pid <= 0 || pid == ::getpid() || ::lstat(it->path().c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
        st.st_uid != ::geteuid())
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH) continue;  // still running, or not ours
    std::error_code ignored;
    fs::remove_all(it->path(), ignored);
  }
}

ScratchRoot& acquire_root() {
  if (!g_root) {
    const fs::path base = temp_base();
    remove_stale_roots(base);
    std::string pattern = (base / (kRootPrefix + std::to_string(::getpid()) + "-XXXXXX")).string();
    if (!::mkdtemp(pattern.data()))
      throw std::runtime_error("cannot create a temporary folder in " + base.string() + ": " + std::strerror(errno) +
                               "; set TMPDIR to a folder you can write");
    auto root = std::make_unique<ScratchRoot>();
    root->path = pattern;
    g_root = root.release();
  }
  ++g_root->users;
  return *g_root;
}

[[noreturn]] void die_by(int sig) {
  if (g_root) {
    std::error_code ec;
    fs::remove_all(g_root->path, ec);
  }
  ::signal(sig, SIG_DFL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  ::raise(sig);
  std::_Exit(128 + sig);  // not reached: the default action of a stop signal ends the process
}

void release_temp_folders() {
  if (!g_root) return;
  std::error_code ec;
  fs::remove_all(g_root->path, ec);
  const int sig = SignalRelay::count() ? SignalRelay::last() : 0;
  delete g_root;
  g_root = nullptr;
  if (sig) die_by(sig);  // a signal that came while no child ran ends the process now
}

}  // namespace

TempFolder::TempFolder(const std::string& prefix) {
  ScratchRoot& root = acquire_root();
  std::string pattern = (root.path / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    const int err = errno;
    if (--root.users == 0) release_temp_folders();
    throw std::runtime_error("cannot create a temporary folder in " + root.path.string() + ": " + std::strerror(err));
  }
  path = pattern;
}

TempFolder::~TempFolder() {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (g_root && --g_root->users == 0) release_temp_folders();
}

void die_if_stopped() {
  if (g_root && SignalRelay::count()) die_by(SignalRelay::last());
}

int wait_for_script(pid_t pid) {
  for (;;) {
    int status = 0;
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid || (r < 0 && errno != EINTR)) return status;
    if (g_root && SignalRelay::count()) {
      ::kill(pid, SIGTERM);
      reap_child(pid, 2);  // SIGKILL after 2 s
      die_by(SignalRelay::last());
    }
    pollfd wake{g_root ? SignalRelay::wake_fd() : -1, POLLIN, 0};
    ::poll(&wake, 1, 50);  // a signal wakes it at once; the child's end within 50 ms
  }
}

}  // namespace memtopo::host::cli
