#include "memtopo_host/journal.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "output/new_file.hpp"

namespace memtopo::host {

std::filesystem::path journal_path_for(const std::filesystem::path& output) {
  return std::filesystem::path(output.string() + ".journal");
}

namespace {

const char* bound_text(mt_bound b) {
  return b == MT_BOUND_AT_LEAST ? "at_least" : b == MT_BOUND_AT_MOST ? "at_most" : "exact";
}

mt_bound bound_from_text(const std::string& s) {
  if (s == "at_least") return MT_BOUND_AT_LEAST;
  if (s == "at_most") return MT_BOUND_AT_MOST;
  if (s == "exact") return MT_BOUND_EXACT;
  throw std::runtime_error("unknown bound '" + s + "'");
}

Status status_from_text(const std::string& s) {
  if (s == "ok") return Status::Ok;
  if (s == "failed") return Status::Failed;
  if (s == "skipped") return Status::Skipped;
  if (s == "not_determinable") return Status::NotDeterminable;
  throw std::runtime_error("unknown status '" + s + "'");
}

// One line of JSON; text that is not UTF-8 (a probe's message cut mid-character) becomes
// U+FFFD instead of throwing, so a record is never lost over one byte.
std::string dump_line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

nlohmann::json outcome_to_json(const ProbeOutcome& o) {
  nlohmann::json j;
  j["probe"] = o.probe;
  j["version"] = o.version;
  j["status"] = status_name(o.status);
  j["reason"] = o.reason;
  j["duration_s"] = o.duration_s;
  // Travels from a worker to the host, where it decides the exit status (docs/host.md).
  if (!o.raw_write_errors.empty()) j["raw_write_errors"] = o.raw_write_errors;
  j["results"] = nlohmann::json::array();
  for (const auto& r : o.results) {
    // The type travels with the value: 2.0 must come back as a float, not an integer.
    nlohmann::json rec = {{"key", r.key},
                          {"type", static_cast<int>(r.value.type)},
                          {"value", to_json(r.value)},
                          {"confidence", r.confidence},
                          {"bound", bound_text(r.bound)},
                          {"note", r.note}};
    if (r.key_flags) rec["key_flags"] = r.key_flags;
    if (!r.verified.empty()) {
      rec["verified"] = r.verified;
      rec["counted_bytes"] = r.counted_bytes;
      rec["verify_note"] = r.verify_note;
    }
    j["results"].push_back(std::move(rec));
  }
  return j;
}

ProbeOutcome outcome_from_json(const nlohmann::json& j) {
  try {
    ProbeOutcome o;
    o.probe = j.at("probe").get<std::string>();
    o.version = j.at("version").get<std::string>();
    o.status = status_from_text(j.at("status").get<std::string>());
    o.reason = j.at("reason").get<std::string>();
    o.duration_s = j.at("duration_s").get<double>();
    if (j.contains("raw_write_errors")) o.raw_write_errors = j.at("raw_write_errors").get<std::vector<std::string>>();
    for (const auto& r : j.at("results")) {
      ResultRecord rec;
      rec.key = r.at("key").get<std::string>();
      // Checked before the cast: a float or an unknown tag would be undefined behaviour.
      const nlohmann::json& tag = r.at("type");
      if (!tag.is_number_integer() || tag.get<int64_t>() < MT_VALUE_INT || tag.get<int64_t>() > MT_VALUE_STRING_ARRAY)
        throw std::runtime_error("type of " + rec.key + " is not a value type (1..7): " + tag.dump());
      const auto type = static_cast<mt_value_type>(tag.get<int>());
      if (r.at("value").is_null())
        throw std::runtime_error(o.probe + ": the value of " + rec.key +
                                 " is null (a NaN or infinity, which results may not hold); the probe is measured again");
      auto v = from_json(r.at("value"), type);
      if (!v) throw std::runtime_error("value of " + rec.key + " does not match its type");
      rec.value = *v;
      rec.confidence = r.at("confidence").get<double>();
      rec.bound = bound_from_text(r.at("bound").get<std::string>());
      rec.note = r.at("note").get<std::string>();
      // Set again from the plugin's declaration where a record is checked (result_check.cpp).
      if (r.contains("key_flags") && r.at("key_flags").is_number_unsigned())
        rec.key_flags = r.at("key_flags").get<uint32_t>() & kKnownKeyFlags;
      if (r.contains("verified")) {
        rec.verified = r.at("verified").get<std::string>();
        rec.counted_bytes = r.at("counted_bytes").get<double>();
        rec.verify_note = r.at("verify_note").get<std::string>();
      }
      rec.probe = o.probe;
      o.results.push_back(std::move(rec));
    }
    return o;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(e.what());
  }
}

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
      for (const char* k : {"device_spec", "backend", "tool_version", "created_utc"})
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
