#include "topology/base/new_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>


namespace memtopo::host {

namespace fs = std::filesystem;

NewFile::~NewFile() {
  if (fd >= 0) ::close(fd);
}

NewFile& NewFile::operator=(NewFile&& o) noexcept {
  if (this != &o) {
    if (fd >= 0) ::close(fd);
    fd = o.fd;
    path = std::move(o.path);
    o.fd = -1;
  }
  return *this;
}

void NewFile::close() {
  const int f = fd;
  fd = -1;
  if (f >= 0 && ::close(f) != 0)
    throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

int create_new_file(const fs::path& path, unsigned mode) {
  // O_EXCL fails on anything at the name, a dangling symlink included; O_NOFOLLOW says so too.
  return ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, static_cast<mode_t>(mode));
}

NewFile create_temp_beside(const fs::path& target) {
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  const std::string base = "." + target.filename().string() + ".tmp." + std::to_string(::getpid());
  // output_file.cpp leaves room beside the output's name for ".journal", ".tmp.PID" and ".99".
  for (int n = 0; n < 100; ++n) {
    const fs::path tmp = dir / (n == 0 ? base : base + "." + std::to_string(n));
    const int fd = create_new_file(tmp);
    if (fd >= 0) return NewFile(fd, tmp);
    if (errno != EEXIST) throw std::runtime_error("cannot create " + tmp.string() + ": " + std::strerror(errno));
  }
  throw std::runtime_error("100 temporary names beside " + target.string() + " (" + base +
                           "...) are taken; remove them");
}

int open_lock_file(const fs::path& path) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    int fd = create_new_file(path);
    if (fd >= 0) {
      ::close(fd);  // created write-only: reopened below for reading the holder's pid as well
    } else if (errno != EEXIST) {
      throw std::runtime_error("cannot create the lock file " + path.string() + ": " + std::strerror(errno) +
                               "; the output's folder must be writable");
    }
    // O_NONBLOCK: a FIFO planted at the name must not block the open.
    fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) continue;  // removed by the run that held it: create it again
    if (fd < 0 && errno == ELOOP)
      throw std::runtime_error("the lock file " + path.string() +
                               " is a symlink, which memtopo never writes through; remove it (someone who can write "
                               "the folder may have planted it)");
    if (fd < 0) throw std::runtime_error("cannot open the lock file " + path.string() + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
      ::close(fd);
      throw std::runtime_error("the lock file " + path.string() +
                               " is not a regular file of its own (a device, FIFO, folder or hard link); remove it");
    }
    return fd;
  }
  throw std::runtime_error("cannot take the lock " + path.string() +
                           ": it keeps being removed; is another run ending?");
}

void write_all_to(int fd, const std::string& text, const std::string& where) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw std::runtime_error("cannot write " + where + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  NewFile tmp;
  try {
    tmp = create_temp_beside(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot write " + path.string() + ": " + e.what());
  }
  auto fail = [&](const std::string& what) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp.path.c_str());
    throw std::runtime_error("cannot write " + path.string() + ": " + what + ": " + why);
  };
  // The replacement keeps the mode the user gave the file (0600 stays 0600); lstat: a symlink
  // at the name is replaced, never followed, so its target's mode is not the file's.
  struct stat existing {};
  if (::lstat(path.c_str(), &existing) == 0 && S_ISREG(existing.st_mode) &&
      ::fchmod(tmp.fd, existing.st_mode & 07777) != 0)
    fail("fchmod");
  try {
    write_all_to(tmp.fd, text, tmp.path.string());
  } catch (const std::exception&) {
    fail("write");
  }
  if (::fsync(tmp.fd) != 0) fail("fsync");
  try {
    tmp.close();
  } catch (const std::exception&) {
    fail("close");
  }
  if (::rename(tmp.path.c_str(), path.c_str()) != 0) fail("rename");
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace memtopo::host
