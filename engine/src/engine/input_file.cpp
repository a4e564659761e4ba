// The one reader of a file a user names as input (a config, a device description, a
// topology, a journal): only a regular file, and at most a documented size, so that a FIFO,
// /dev/zero or a runaway file is refused with a message instead of blocking or exhausting
// memory (docs/host.md, "Guarantees").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"

namespace memtopo::engine {

namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string mib(size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

[[noreturn]] void refuse(const std::string& path, const std::string& why, const std::string& what) {
  throw Error(path + ": " + why + "; name " + what);
}

}  // namespace

std::string read_input_file(const std::string& path, const std::string& what, size_t max_bytes) {
  struct stat st {};
  // stat before open: opening a FIFO for reading blocks until a writer comes.
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) refuse(path, "no such file", what);
    refuse(path, std::string("cannot read: ") + std::strerror(errno), what);
  }
  if (!S_ISREG(st.st_mode)) refuse(path, std::string("is ") + kind_of(st.st_mode) + ", not a regular file", what);
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) refuse(path, std::string("cannot open: ") + std::strerror(errno), what);
  std::string text;
  try {
    // The file may have been replaced between stat and open: check what was opened.
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
      refuse(path, "is not a regular file", what);
    auto too_large = [&] {
      refuse(path, "is larger than the " + mib(max_bytes) + " an input may have (docs/host.md, \"Guarantees\")",
             what);
    };
    if (static_cast<unsigned long long>(st.st_size) > max_bytes) too_large();
    text.resize(static_cast<size_t>(st.st_size));
    size_t done = 0;
    for (;;) {
      if (done == text.size()) {
        if (text.size() > max_bytes) too_large();
        text.resize(text.size() + 4096);  // a file that grows while read
      }
      const ssize_t n = ::read(fd, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) refuse(path, std::string("cannot read: ") + std::strerror(errno), what);
      if (n == 0) break;
      done += static_cast<size_t>(n);
    }
    text.resize(done);
    if (text.size() > max_bytes) too_large();
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return text;
}

}  // namespace memtopo::engine
