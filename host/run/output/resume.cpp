#include "run/output/resume.hpp"

#include <spdlog/spdlog.h>

#include "topology/document/device_identity.hpp"
#include "run/running/result_check.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Refuses a journal of another device (or one without the identity to tell).
void check_same_device(const fs::path& journal_path, const nlohmann::json& journal_header,
                       const nlohmann::json& header) {
  const std::string where = "--resume: " + journal_path.string() + ":1";
  if (!journal_header.contains("device") || !journal_header.at("device").is_object())
    throw UsageError(where + ": the journal does not record the device's identity (written by an older memtopo), so "
                             "its measurements cannot be checked against this device; delete it or run without --resume");
  const auto diffs = identity_differences(journal_header.at("device"), header.at("device"));
  if (diffs.empty()) return;
  std::string text;
  for (const auto& d : diffs) text += (text.empty() ? "" : "; ") + d;
  throw UsageError(where + ": the journal was recorded on another device (" + text +
                   "); use the same device, or run without --resume to measure this one");
}

// The build that journaled the measurements is the one the file will name: another build's
// (a rebuilt memtopo, another commit) are not reused. A header without the fields (an older
// journal) is taken as it is.
void check_same_build(const fs::path& journal_path, const nlohmann::json& journal_header,
                      const nlohmann::json& header) {
  auto text = [](const nlohmann::json& h, const char* k) {
    const auto it = h.find(k);
    return it != h.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto build = [&](const nlohmann::json& h) {
    return "memtopo " + text(h, "tool_version") + (text(h, "git_commit").empty() ? "" : " (" + text(h, "git_commit") + ")");
  };
  for (const char* k : {"tool_version", "git_commit"}) {
    const std::string was = text(journal_header, k), now = text(header, k);
    if (was.empty() || now.empty() || was == now) continue;
    throw UsageError("--resume: " + journal_path.string() + ":1: the journal was written by " + build(journal_header) +
                     ", this is " + build(header) + "; its measurements would be filed as this build's: resume with "
                     "the build that wrote it, or run without --resume");
  }
}

void start_new_journal(const fs::path& journal_path, const nlohmann::json& header, JournalWriter& journal) {
  std::error_code ec;
  if (fs::exists(journal_path, ec)) {
    // The run that wrote it is not live (the lock is ours): keep its measurements.
    const fs::path prev(journal_path.string() + ".prev");
    fs::rename(journal_path, prev, ec);
    if (ec)
      throw UsageError("cannot keep the earlier journal " + journal_path.string() + " as " + prev.string() + ": " +
                       ec.message() + "; run with --resume to continue it, or delete it");
    spdlog::warn("kept the journal of an earlier run as {} (replacing any older one); `memtopo run --resume` "
                 "would have continued it",
                 prev.string());
  }
  try {
    journal.open_new(journal_path, header);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
}

// Takes the kept outcomes of the journal; returns every probe it names. Each record passes the
// checks a probe's results pass when they are stored (result_check.hpp): one that does not is
// measured again, so nothing in the journal can make the output invalid.
std::set<std::string> reuse_outcomes(JournalContents& jc, const Registry& reg, RunSettings& settings) {
  std::set<std::string> journaled;
  for (auto& o : jc.outcomes) {
    journaled.insert(o.probe);
    // Not determinable is an answer (measured, with the reason), kept like ok.
    if (!keeps_results(o.status)) {
      settings.already_done.erase(o.probe);
      continue;
    }
    const ProbeInfo* p = reg.find(o.probe);
    if (!p) {
      spdlog::info("{}: in the journal, but no loaded plugin has it: its results are not used", o.probe);
      settings.already_done.erase(o.probe);
      continue;
    }
    if (auto bad = check_outcome(*p, o)) {
      spdlog::warn("{}: journal record ignored: {}; measuring it again", o.probe, *bad);
      settings.already_done.erase(o.probe);
      continue;
    }
    if (p->plugin_version != o.version) {
      spdlog::info("{}: measured by version {} in the journal, plugin is now {}: measuring again", o.probe, o.version,
                   p->plugin_version);
      continue;
    }
    settings.already_done[o.probe] = o;
  }
  return journaled;
}

void report_reuse(const fs::path& journal_path, const Plan& plan, const RunSettings& settings) {
  std::vector<std::string> reused, outside;
  for (const auto& [name, _] : settings.already_done) (plan.step(name) ? reused : outside).push_back(name);
  spdlog::info("resuming from {}: reusing {} measured probe(s){}{}", journal_path.string(), reused.size(),
               reused.empty() ? "" : ": ", join_names(reused));
  if (!outside.empty())
    spdlog::info("kept in the journal, outside this selection: {}", join_names(outside));
}

}  // namespace

nlohmann::json journal_header(const Meta& meta, const nlohmann::json& identity) {
  return {{"memtopo_journal", kJournalFormat}, {"tool_version", meta.tool_version},
          {"git_commit", meta.git_commit},     {"device_spec", meta.device_spec},
          {"backend", meta.backend},           {"created_utc", meta.created_utc},
          {"device", identity}};
}

JournalState open_journal(const RunRequest& a, const OutputTarget& out, const Registry& reg, const Plan& plan,
                          const nlohmann::json& header, RunSettings& settings, JournalWriter& journal) {
  JournalState js;
  if (out.kind != OutputKind::File) return js;  // resume is refused earlier for these
  js.path = journal_path_for(out.path);
  std::error_code ec;
  if (!a.resume || !fs::exists(js.path, ec)) {
    if (a.resume) spdlog::warn("--resume: no journal {}; measuring everything", js.path.string());
    start_new_journal(js.path, header, journal);
    return js;
  }
  if (fs::is_regular_file(js.path, ec) && fs::file_size(js.path, ec) == 0 && !ec) {
    // Left by a run that could not write even the header (a full disk): nothing to resume.
    spdlog::warn("--resume: the journal {} is empty (its run could not write it); measuring everything",
                 js.path.string());
    start_new_journal(js.path, header, journal);
    return js;
  }
  JournalContents jc;
  try {
    jc = read_journal(js.path);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--resume: ") + e.what());
  }
  for (const auto& w : jc.warnings) spdlog::warn("{}", w);
  check_same_build(js.path, jc.header, header);
  check_same_device(js.path, jc.header, header);
  js.journaled = reuse_outcomes(jc, reg, settings);
  report_reuse(js.path, plan, settings);
  try {
    journal.open_append(js.path);
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  return js;
}

void JournalRecorder::record(const ProbeOutcome& outcome) {
  if (!journal_) return;
  if (failure_.empty()) {
    try {
      journal_->append(outcome);
      return;
    } catch (const std::exception& e) {
      failure_ = e.what();
      spdlog::error("{}; the run goes on, the results from {} on are not journaled", failure_, outcome.probe);
    }
  }
  not_journaled_.push_back(outcome.probe);
}

std::string JournalRecorder::missing_text(const fs::path& journal_path) const {
  return "the journal " + journal_path.string() + " could not be written (" + failure_ + "): the results of " +
         join_names(not_journaled_) + " are not in it";
}

void settle_journal(const JournalState& js, const RunReport& report) {
  if (js.path.empty()) return;
  std::vector<std::string> outside;
  for (const auto& name : js.journaled) {
    bool in_output = false;
    for (const auto& o : report.outcomes) in_output = in_output || o.probe == name;
    if (!in_output) outside.push_back(name);
  }
  if (report.interrupted) return;  // the interruption message says how to resume
  if (!outside.empty()) {
    spdlog::info("kept {}: it holds {} probe(s) outside this selection ({}); a --resume run that includes them "
                 "consumes it",
                 js.path.string(), outside.size(), join_names(outside));
    return;
  }
  std::error_code ec;
  fs::remove(js.path, ec);
}

}  // namespace memtopo::host::cli
