#include "run/output/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "topology/base/new_file.hpp"

namespace memtopo::host {

std::filesystem::path journal_path_for(const std::filesystem::path& output) {
  return std::filesystem::path(output.string() + ".journal");
}

namespace {

// One line of JSON; text that is not UTF-8 (a probe's message cut mid-character) becomes
// U+FFFD instead of throwing, so a record is never lost over one byte.
std::string dump_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

JournalWriter::~JournalWriter() { close(); }

void JournalWriter::open_new(const std::filesystem::path& path, const nlohmann::json& header) {
  close();
  // The header is written to a new file beside the journal and renamed into place: a full
  // disk leaves no journal rather than an empty one that every later --resume would stumble on.
  NewFile temp;
  try {
    temp = create_temp_beside(path);
  } catch (const std::exception& e) {
    throw std::runtime_error("cannot create journal " + path.string() + ": " + e.what());
  }
  path_ = temp.path;
  file_ = ::fdopen(temp.fd, "w");
  if (!file_) throw std::runtime_error("cannot create journal " + temp.path.string() + ": " + std::strerror(errno));
  temp.fd = -1;  // the stream owns it now
  try {
    write_line(dump_line(header));
  } catch (...) {
    close();
    std::remove(temp.path.c_str());
    throw;
  }
  if (std::rename(temp.path.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    close();
    std::remove(temp.path.c_str());
    throw std::runtime_error("cannot create journal " + path.string() + ": " + why);
  }
  path_ = path;  // the open stream now writes the renamed file
}

void JournalWriter::open_append(const std::filesystem::path& path) {
  close();
  path_ = path;
  // The journal --resume just read: appended to only where it is a regular file, never
  // through a symlink put at its name since.
  const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  struct stat st {};
  if (fd >= 0 && (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    ::close(fd);
    throw std::runtime_error("cannot open journal " + path.string() + ": not a regular file; delete it");
  }
  if (fd >= 0) file_ = ::fdopen(fd, "a+");
  if (fd >= 0 && !file_) ::close(fd);
  if (!file_) throw std::runtime_error("cannot open journal " + path.string() + ": " + std::strerror(errno));
  // A run killed mid-record leaves a torn last line: the next record starts on a line of its
  // own, or it would be glued to the torn one and lost with it.
  if (std::fseek(file_, 0, SEEK_END) == 0 && std::ftell(file_) > 0 && std::fseek(file_, -1, SEEK_END) == 0 &&
      std::fgetc(file_) != '\n') {
    std::fseek(file_, 0, SEEK_END);
    write_raw("\n");
  }
}

void JournalWriter::append(const ProbeOutcome& outcome) { write_line(dump_line(outcome_to_json(outcome))); }

void JournalWriter::write_line(const std::string& line) { write_raw(line + "\n"); }

void JournalWriter::write_raw(const std::string& text) {
  if (!file_) throw std::runtime_error("journal is not open");
  if (std::fputs(text.c_str(), file_) < 0 || std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0)
    throw std::runtime_error("cannot write journal " + path_.string() + ": " + std::strerror(errno));
}

void JournalWriter::close() {
  if (file_) std::fclose(file_);
  file_ = nullptr;
}

JournalContents read_journal(const std::filesystem::path& path) {
  std::string text;
  try {
    text = engine::read_input_file(path.string(), "the journal of an earlier run (OUT.journal)");
  } catch (const Error& e) {
    throw std::runtime_error(std::string("cannot read journal: ") + e.what());
  }
  std::istringstream in(text);
  return read_journal(in, path.string());
}

JournalContents read_journal(std::istream& in, const std::string& path) {
  JournalContents c;
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    // The header is the first line, blank or not: skipping a blank one left no header.
    if (number > 1 && line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (number == 1) {
      if (j.is_discarded() || !j.is_object() || !j.contains("memtopo_journal"))
        throw std::runtime_error(path + ":1: not a memtopo journal");
      const nlohmann::json& format = j["memtopo_journal"];
      if (!format.is_number_integer() || format.get<int64_t>() < 1 || format.get<int64_t>() > kJournalFormat)
        throw std::runtime_error(path + ":1: journal format " + format.dump() + " is not one this memtopo reads (1 to " +
                                 std::to_string(kJournalFormat) +
                                 "); it was written by another memtopo: resume with that one, or delete the journal");
      // Resume reads these as strings; any other type would escape it as a JSON type error.
      for (const char* k : {"device_spec", "backend", "tool_version", "git_commit", "created_utc"})
        if (j.contains(k) && !j[k].is_string())
          throw std::runtime_error(path + ":1: the journal header's " + k +
                                   " is not a string; delete the journal or run without --resume");
      c.header = j;
      continue;
    }
    try {
      if (j.is_discarded()) throw std::runtime_error("not valid JSON");
      c.outcomes.push_back(outcome_from_json(j));
    } catch (const std::exception& e) {
      // A crash can tear the last line; earlier records are still good.
      c.warnings.push_back(path + ":" + std::to_string(number) + ": record ignored: " + e.what());
    }
  }
  if (number == 0) throw std::runtime_error(path + ": empty journal");
  return c;
}

}  // namespace memtopo::host
