// The run journal: one JSON line per finished probe, appended and flushed as each probe
// finishes, so an interrupted run loses nothing (docs/host.md, "Journal and resume").
#pragma once

#include <cstdio>
#include <filesystem>
#include <istream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "run/running/outcome_json.hpp"
#include "run/running/runner.hpp"

namespace memtopo::host {

// The journal format this memtopo writes (2: the header holds the device identity); it reads
// 1 to this.
constexpr int kJournalFormat = 2;

// OUT.toml -> OUT.toml.journal
std::filesystem::path journal_path_for(const std::filesystem::path& output);

class JournalWriter {
 public:
  JournalWriter() = default;
  JournalWriter(const JournalWriter&) = delete;
  JournalWriter& operator=(const JournalWriter&) = delete;
  ~JournalWriter();
  // Starts a new journal whose first line is `header` (it appears whole, by rename, or not at
  // all), or appends to an existing one (after a newline when its last line is torn). Throws
  // std::runtime_error naming the file on failure.
  void open_new(const std::filesystem::path& path, const nlohmann::json& header);
  void open_append(const std::filesystem::path& path);
  // Appends one record and forces it to disk.
  void append(const ProbeOutcome& outcome);
  void close();

 private:
  void write_line(const std::string& line);
  void write_raw(const std::string& text);
  std::FILE* file_ = nullptr;
  std::filesystem::path path_;
};

struct JournalContents {
  nlohmann::json header;                // {"memtopo_journal": 1, "device_spec": ..., ...}
  std::vector<ProbeOutcome> outcomes;   // in the order they were written
  std::vector<std::string> warnings;    // e.g. a torn last line
};

// Throws std::runtime_error when the file cannot be read or its header is not a journal's.
JournalContents read_journal(const std::filesystem::path& path);
// Same, from a stream (`name` stands for the file in messages; the fuzzer feeds it text).
JournalContents read_journal(std::istream& in, const std::string& name);

}  // namespace memtopo::host
