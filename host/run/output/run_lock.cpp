#include "run/output/run_lock.hpp"

#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "topology/base/usage_error.hpp"
#include "topology/base/new_file.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

fs::path lock_path_for(const fs::path& output) { return fs::path(output.string() + ".lock"); }

namespace {

std::string holder_pid(int fd) {
  char buf[32] = {0};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

// The file at the path is still the one locked: the run that held it removes it when done,
// and a lock on a removed file would let two runs proceed.
bool still_at_path(int fd, const fs::path& path) {
  struct stat held {}, now {};
  return ::fstat(fd, &held) == 0 && ::stat(path.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
         held.st_ino == now.st_ino;
}

}  // namespace

OutputLock::OutputLock(const fs::path& output) : owner_(::getpid()), path_(lock_path_for(output)) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = -1;
    try {
      fd = open_lock_file(path_);  // never through a symlink planted at the name
    } catch (const std::runtime_error& e) {
      throw UsageError(e.what());
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      const std::string pid = holder_pid(fd);
      ::close(fd);
      if (err == EWOULDBLOCK)
        throw UsageError("another memtopo run (pid " + pid + ") is writing " + output.string() +
                         "; wait for it or pick another -o");
      throw UsageError("cannot lock " + path_.string() + ": " + std::strerror(err));
    }
    if (!still_at_path(fd, path_)) {
      ::close(fd);
      continue;
    }
    const std::string pid = std::to_string(owner_) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
      const int err = errno;
      ::unlink(path_.c_str());  // locked and still at its name: ours, and no empty lock file stays
      ::close(fd);
      throw UsageError("cannot write the lock file " + path_.string() + ": " + std::strerror(err));
    }
    fd_ = fd;
    return;
  }
  throw UsageError("cannot take the lock " + path_.string() + ": it keeps being replaced; is another run starting?");
}

OutputLock::~OutputLock() {
  if (fd_ < 0 || ::getpid() != owner_) return;
  ::unlink(path_.c_str());
  ::close(fd_);
}

}  // namespace memtopo::host::cli
