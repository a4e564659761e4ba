#include "topology/base/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "topology/base/usage_error.hpp"
#include "topology/base/new_file.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

// Follows a chain of symlinks to the path that would be written (it may not exist yet).
fs::path resolve_links(const std::string& arg, fs::path p) {
  for (int depth = 0; depth < 40; ++depth) {
    std::error_code ec;
    if (!fs::is_symlink(p, ec)) return p;
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw UsageError("-o " + arg + ": cannot read the symlink " + p.string() + ": " + ec.message());
    p = target.is_absolute() ? target : p.parent_path() / target;
  }
  throw UsageError("-o " + arg + ": too many levels of symlinks; name the file itself");
}

void write_through(const fs::path& path, const std::string& text) {
  // No O_CREAT, no O_TRUNC: the node exists and is what the user pointed at.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("cannot open " + path.string() + " for writing: " + std::strerror(errno));
  try {
    write_all_to(fd, text, path.string());
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::close(fd) != 0) throw std::runtime_error("cannot write " + path.string() + ": " + std::strerror(errno));
}

void write_stdout(const std::string& text) {
  std::fflush(stdout);
  write_all_to(STDOUT_FILENO, text, "stdout");
}

// Files are written beside the output under longer names (OUT.journal.prev, and the journal's
// new file .OUT.journal.tmp.PID.N, 24 bytes longer with a 7-digit pid): a name that leaves no
// room for them would fail only after measuring.
void check_name_length(const std::string& arg, const fs::path& path, const fs::path& dir) {
  constexpr size_t kLongestSuffix = 24;
  const long limit = ::pathconf(dir.c_str(), _PC_NAME_MAX);
  const size_t name_max = limit > 0 ? static_cast<size_t>(limit) : 255;
  const size_t length = path.filename().string().size();
  if (length + kLongestSuffix <= name_max) return;
  throw UsageError("-o " + arg + ": the file name is " + std::to_string(length) +
                   " bytes long; memtopo writes files beside it with names up to " + std::to_string(kLongestSuffix) +
                   " bytes longer (.OUT.journal.tmp.PID.N), and this file system allows " + std::to_string(name_max) +
                   ": use a name of at most " + std::to_string(name_max - kLongestSuffix) + " bytes");
}

fs::path temp_folder() {
  const char* t = std::getenv("TMPDIR");
  return (t && *t) ? fs::path(t) : fs::path("/tmp");
}

}  // namespace

std::string OutputTarget::shown() const { return kind == OutputKind::Stdout ? "stdout" : path.string(); }

OutputTarget resolve_output(const std::string& arg, OutputNamedBy named_by) {
  if (arg.empty()) throw UsageError("-o: the file name is empty; name the topology file to write (- for stdout)");
  OutputTarget t;
  if (arg == "-") {
    t.kind = OutputKind::Stdout;
    return t;
  }
  std::error_code ec;
  const bool user = named_by == OutputNamedBy::User;
  const fs::file_status st = user ? fs::status(arg, ec) : fs::symlink_status(arg, ec);
  if (fs::is_directory(st)) throw UsageError("-o " + arg + ": is a folder; name the output file");
  if (user && fs::exists(st) && !fs::is_regular_file(st)) {
    // Opened by the name given: /dev/stdout's link leads to "pipe:[...]", which is no path.
    t.kind = OutputKind::Through;
    t.path = arg;
    return t;
  }
  t.path = user ? resolve_links(arg, fs::path(arg)) : fs::path(arg);
  const fs::path dir = t.path.has_parent_path() ? t.path.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    throw UsageError("-o " + arg + ": folder " + dir.string() + " does not exist; create it or name another file");
  check_name_length(arg, t.path, dir);
  return t;
}

namespace {

bool same_file(const std::string& a, const std::string& b) {
  struct stat sa {}, sb {};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea), cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  return !ea && !eb && ca == cb;
}

// Each input, and for a folder every regular file under it as well: what the command reads
// from a folder is among them, whatever the command's own rule for choosing.
std::vector<NamedInput> expand_folders(const std::vector<NamedInput>& inputs) {
  std::vector<NamedInput> out;
  for (const auto& in : inputs) {
    out.push_back(in);
    std::error_code ec;
    if (in.path.empty() || !fs::is_directory(in.path, ec)) continue;
    const std::string what = "a file in " + in.what + " " + in.path + ":";
    for (auto it = fs::recursive_directory_iterator(in.path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
      if (it->is_regular_file(ec)) out.push_back({what, it->path().string()});
  }
  return out;
}

}  // namespace

void refuse_output_over_inputs(const std::string& option, const std::string& output,
                               const std::vector<NamedInput>& inputs) {
  if (output.empty() || output == "-") return;
  for (const auto& in : expand_folders(inputs)) {
    if (in.path.empty() || !same_file(output, in.path)) continue;
    throw UsageError(option + " " + output + ": is the same file as " + in.what + " " + in.path +
                     ", which writing it would destroy; name another output");
  }
}

bool writes_to_stdout(const OutputTarget& target) {
  if (target.kind == OutputKind::Stdout) return true;
  if (target.kind != OutputKind::Through) return false;
  struct stat out {}, std_out {};
  return ::stat(target.path.c_str(), &out) == 0 && ::fstat(STDOUT_FILENO, &std_out) == 0 &&
         out.st_dev == std_out.st_dev && out.st_ino == std_out.st_ino && out.st_rdev == std_out.st_rdev;
}

void write_output(const OutputTarget& target, const std::string& text) {
  switch (target.kind) {
    case OutputKind::Stdout: write_stdout(text); return;
    case OutputKind::Through: write_through(target.path, text); return;
    case OutputKind::File: write_atomically(target.path, text); return;
  }
}

fs::path partial_path_for(const fs::path& output) {
  const std::string name = output.filename().string();
  const std::string stem = name.size() > 5 && name.compare(name.size() - 5, 5, ".toml") == 0
                               ? name.substr(0, name.size() - 5)
                               : name;
  return output.parent_path() / (stem + ".partial.toml");
}

std::string write_fallback(const OutputTarget& target, bool beside, const std::string& text,
                           std::vector<std::string>* failures) {
  std::vector<fs::path> files;
  if (beside && target.kind == OutputKind::File) files.push_back(partial_path_for(target.path));
  const std::string name = target.kind == OutputKind::File ? target.path.filename().string() : "topology.toml";
  files.push_back(temp_folder() / ("memtopo-" + std::to_string(::getpid()) + "-" + name));
  for (const auto& f : files) {
    try {
      write_atomically(f, text);
      return f.string();
    } catch (const std::exception& e) {
      failures->push_back(e.what());
    }
  }
  if (target.kind == OutputKind::Stdout) return "";
  try {
    write_stdout(text);
    return "stdout";
  } catch (const std::exception& e) {
    failures->push_back(e.what());
  }
  return "";
}

std::string format_for_output(const std::string& command, const std::string& output, const OutputTarget& target,
                              const std::string& asked, const std::map<std::string, std::string>& by_name,
                              const std::string& fallback) {
  const std::string ext = lowercase_extension(output);
  if (target.kind != OutputKind::File || ext.empty()) return asked.empty() ? fallback : asked;
  const auto named = by_name.find(ext);
  if (named == by_name.end()) {
    std::string names;
    for (const auto& [e, f] : by_name) names += (names.empty() ? "" : ", ") + e;
    throw UsageError(command + " -o " + output + ": the name says no format " + command + " writes; name it " + names +
                     ", or give no extension");
  }
  if (!asked.empty() && asked != named->second)
    throw UsageError(command + " -o " + output + ": the name says " + named->second + ", --format " + asked +
                     "; name the file by the format you ask for");
  return named->second;
}

std::string lowercase_extension(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

}  // namespace memtopo::host::cli
