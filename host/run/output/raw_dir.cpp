// `memtopo run --raw-dir DIR` (or [run] raw_dir): the folder is made and checked before
// anything is measured, so that a folder that cannot be written ends the run at once (exit 2)
// instead of losing every series of a long run.
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <string>

#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include "topology/base/usage_error.hpp"
#include "topology/base/new_file.hpp"
#include "run/output/raw_dir.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

fs::path prepare_raw_dir(const RunChoice& run) {
  const fs::path& dir = run.raw_dir;
  if (dir.empty()) return dir;
  const std::string& named = run.raw_dir_named;
  const std::string what_to_do = "; choose a folder you can write";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError(named + ": cannot create the folder: " + ec.message() + what_to_do);
  if (!fs::is_directory(dir, ec)) throw UsageError(named + ": is not a folder" + what_to_do);
  // Permission bits alone do not say whether a file can be created (root, read-only mounts).
  const fs::path test_file = dir / (".memtopo-write-test-" + std::to_string(::getpid()));
  const int fd = memtopo::host::create_new_file(test_file);  // never through a link planted at the name
  if (fd < 0) throw UsageError(named + ": cannot create files in the folder: " + std::strerror(errno) + what_to_do);
  ::close(fd);
  fs::remove(test_file, ec);
  return dir;
}

void write_raw_dir_identity(const fs::path& dir, const Meta& meta) {
  const toml::table run{{"created_utc", meta.created_utc}, {"host", meta.host}, {"device_spec", meta.device_spec}};
  std::ostringstream text;
  text << "# The run that wrote these series: memtopo report takes them with that run's topology only.\n" << run << "\n";
  try {
    write_atomically(dir / "run.toml", text.str());
  } catch (const std::exception& e) {
    spdlog::warn("{}: the raw folder does not say which run wrote it: {}", (dir / "run.toml").string(), e.what());
  }
}

}  // namespace memtopo::host::cli
