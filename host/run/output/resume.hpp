// The run's journal: which one it writes, what --resume takes from it, and when it may be
// deleted (docs/host.md, "Journal and resume"). Not installed.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/base/usage_error.hpp"
#include "run/planning/config.hpp"
#include "topology/document/document.hpp"
#include "run/output/journal.hpp"
#include "run/running/runner.hpp"
#include "topology/base/output_file.hpp"
#include "run/planning/run_request.hpp"

namespace memtopo::host::cli {

// The first line of a journal: format, tool, device spec and the device's identity
// (device_identity.hpp).
nlohmann::json journal_header(const Meta& meta, const nlohmann::json& identity);

struct JournalState {
  std::filesystem::path path;         // empty: no journal (the output is not a regular file)
  std::set<std::string> journaled;    // probes with a record in the journal before this run
};

// Starts a new journal (an earlier one is kept as OUT.journal.prev) or, with --resume, checks
// the journal's device against `header`'s and puts its kept outcomes in settings.already_done.
// Every problem is a UsageError, before anything is measured.
JournalState open_journal(const RunRequest& a, const OutputTarget& out, const Registry& reg, const Plan& plan,
                          const nlohmann::json& header, RunSettings& settings, JournalWriter& journal);

// Appends each finished probe to the journal; never throws. After the first failure nothing
// more is written (a torn line would swallow the next record) and the probes are listed.
class JournalRecorder {
 public:
  explicit JournalRecorder(JournalWriter* journal) : journal_(journal) {}
  void record(const ProbeOutcome& outcome);
  bool complete() const { return not_journaled_.empty(); }
  // "the journal J could not be written (reason): the results of a, b are not in it"
  std::string missing_text(const std::filesystem::path& journal_path) const;

 private:
  JournalWriter* journal_;
  std::string failure_;
  std::vector<std::string> not_journaled_;
};

// After the output was written: deletes the journal when the run was complete and its output
// holds every journaled probe; otherwise says why it is kept.
void settle_journal(const JournalState& js, const RunReport& report);

}  // namespace memtopo::host::cli
