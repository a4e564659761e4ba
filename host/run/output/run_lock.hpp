// One run per output file: an flock()ed OUT.lock holding the owner's process id, so a second
// run on the same output fails at once instead of sharing the journal. Not installed.
#pragma once

#include <sys/types.h>

#include <filesystem>

namespace memtopo::host::cli {

// OUT.toml -> OUT.toml.lock
std::filesystem::path lock_path_for(const std::filesystem::path& output);

class OutputLock {
 public:
  // Takes the lock beside `output` without waiting; throws UsageError naming the process
  // that holds it ("another memtopo run (pid 1234) is writing out.toml; ...").
  explicit OutputLock(const std::filesystem::path& output);
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  // Removes the lock file, then releases the lock (only in the process that took it).
  ~OutputLock();

 private:
  int fd_ = -1;
  pid_t owner_ = 0;
  std::filesystem::path path_;
};

}  // namespace memtopo::host::cli
