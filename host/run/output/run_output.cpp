#include "run/output/run_output.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "topology/checks/invariants.hpp"
#include "topology/values/schema.hpp"
#include "topology/document/summary.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/values/topology_text.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The form of -o: --format, else json for a name ending in .json, else toml.
TopologyFormat output_format(const RunRequest& a) {
  if (!a.format.empty()) return a.format == "json" ? TopologyFormat::Json : TopologyFormat::Toml;
  return ends_with(a.output, ".json") ? TopologyFormat::Json : TopologyFormat::Toml;
}

// The host's own check of what it is about to write: TOML syntax and the schema, and for JSON
// output the JSON form against the same schema. Sets *output to the text -o gets.
std::vector<std::string> check_document(const std::string& text, const std::string& name, TopologyFormat format,
                                        std::string* output) {
  std::vector<std::string> problems;
  try {
    const auto doc = toml::parse(text, name);
    for (const auto& e : validate_topology(toml_to_json(doc))) problems.push_back(e.text());
    *output = text;
    if (format == TopologyFormat::Json && problems.empty()) {
      *output = topology_json_text(doc);
      for (const auto& e : validate_topology(nlohmann::json::parse(*output))) problems.push_back("JSON " + e.text());
    }
  } catch (const toml::parse_error& e) {
    problems.push_back("not valid TOML at line " + std::to_string(e.source().begin.line) + ": " +
                       std::string(e.description()));
  }
  return problems;
}

// Where the measurements are when the output was not written, for the error message.
std::string where_kept(const JournalState& js, const JournalRecorder& recorder) {
  if (js.path.empty()) return "";
  if (!recorder.complete()) return "; " + recorder.missing_text(js.path);
  return "; the measurements are kept in " + js.path.string() + " (`memtopo run --resume` writes them)";
}

// Where the TOML text goes when -o does not take it (write_fallback): for JSON output a target
// named as TOML, so out.json's fallbacks are out.json.partial.toml and memtopo-PID-out.json.toml.
OutputTarget fallback_target(const RunRequest& a, const OutputTarget& out) {
  OutputTarget t = out;
  if (output_format(a) == TopologyFormat::Json && t.kind == OutputKind::File) t.path += ".toml";
  return t;
}

// Writes the text somewhere else after the output failed; returns the exit status.
int save_elsewhere(const OutputTarget& out, bool beside, const std::string& text, const std::string& why,
                   const JournalState& js, const JournalRecorder& recorder) {
  std::vector<std::string> failures;
  const std::string where = write_fallback(out, beside, text, &failures);
  for (const auto& f : failures) spdlog::error("fallback failed: {}", f);
  if (where.empty())
    spdlog::error("{}; the topology could not be written anywhere{}", why, where_kept(js, recorder));
  else
    spdlog::error("{}; wrote the topology to {} instead{}", why, where, where_kept(js, recorder));
  return kExitIncomplete;
}

// The text failed the host's own validation: a memtopo bug. Nothing is written to the output.
int refuse_invalid(const OutputTarget& out, const OutputTarget& fallback, const std::string& text,
                   const std::vector<std::string>& problems, const JournalState& js, const JournalRecorder& recorder) {
  for (const auto& p : problems) spdlog::error("internal: the topology does not pass memtopo's own validation: {}", p);
  const std::string why = "did not write " + out.shown() + ": the topology fails validation (a memtopo bug; please "
                          "report it with these messages)";
  if (!js.path.empty() && recorder.complete()) {
    spdlog::error("{}{}", why, where_kept(js, recorder));
    return kExitIncomplete;
  }
  if (text.empty()) {
    spdlog::error("{}", why);
    return kExitIncomplete;
  }
  // No complete journal: keep the rejected text for the report rather than lose it.
  std::vector<std::string> failures;
  const std::string where = write_fallback(fallback, false, text, &failures);
  spdlog::error("{}{}", why, where.empty() ? "" : "; the rejected text is in " + where);
  return kExitIncomplete;
}

// The relations between keys that the plan's probes declare and `text` breaks: each a warning
// naming both keys (validate refuses such a file).
void warn_contradictions(const Plan& plan, const std::string& text) {
  std::vector<const ProbeInfo*> probes;
  for (const auto& [key, probe] : plan.providers) probes.push_back(probe);
  const std::vector<Invariant> invariants = invariants_of(probes);
  if (invariants.empty()) return;
  try {
    for (const auto& c : find_contradictions(toml_to_json(toml::parse(text)), invariants))
      spdlog::warn("contradiction: {}", c.text);
  } catch (const toml::parse_error&) {  // checked before; nothing to add
  }
}

void report_end(const RunRequest& a, const OutputTarget& out, const std::string& written, const Plan& plan,
                const RunReport& report, const std::string& text, int* status) {
  // What was measured, for a reader; on stderr when stdout carries the topology.
  std::FILE* summary_to = writes_to_stdout(out) ? stderr : stdout;
  std::fputs(terminal_lines(render_summary(report.outcomes)).c_str(), summary_to);
  std::fflush(summary_to);
  warn_contradictions(plan, text);
  const auto missing = missing_requested_keys(plan, report.outcomes);
  for (const auto& m : missing) spdlog::error("{}", m);
  // A probe named in --only that did not run: why, even under -q (it may skip itself by default).
  for (const auto& o : report.outcomes)
    if (o.status == Status::Skipped &&
        std::find(plan.requested_probes.begin(), plan.requested_probes.end(), o.probe) != plan.requested_probes.end())
      spdlog::warn("{} was asked for by name and skipped: {}", o.probe, o.reason);
  if (!a.quiet && !plan.left_out.empty()) {
    std::string names;
    for (const ProbeInfo* p : plan.left_out) names += (names.empty() ? "" : ", ") + p->name;
    spdlog::info("left out (opt-in, each runs when named with --only): {}", names);
  }
  if (!a.quiet && !plan.unrun_uses.empty()) {
    std::string names;
    for (const auto& [provider, keys] : plan.unrun_uses) names += (names.empty() ? "" : ", ") + provider;
    spdlog::info("not run, though the selection uses their keys: {}; {}", names, unrun_uses_hint(plan));
  }
  if (report.interrupted) {
    if (out.kind == OutputKind::File)
      spdlog::warn("interrupted: wrote what was measured to {}; {} is untouched; `memtopo run --resume -o {}` "
                   "continues",
                   written, out.shown(), a.output);
    else
      spdlog::warn("interrupted: wrote what was measured to {}", written);
  }
  *status = run_exit_status(report, missing);
  if (!a.quiet || *status != kExitOk)
    std::fprintf(stderr, "%s in %.1f s; wrote %s\n", tally(report.outcomes).text().c_str(), report.wall_s,
                 written.c_str());
}

}  // namespace

std::string run_format_error(const std::string& value) {
  if (value == "toml" || value == "json") return "";
  return "'" + value + "' is not a format run writes; use toml or json (memtopo export converts a topology to others)";
}

int finish(const RunRequest& a, const OutputTarget& out, const Plan& plan, const Meta& meta, const RunReport& report,
           const JournalState& js, const JournalRecorder& recorder) {
  std::string text;    // TOML: also the form of the partial file and of fallbacks
  std::string output;  // in the form of -o (--format)
  std::vector<std::string> problems;
  try {
    text = render_topology(meta, report.outcomes);
    problems = check_document(text, out.shown(), output_format(a), &output);
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  if (!problems.empty()) return refuse_invalid(out, fallback_target(a, out), text, problems, js, recorder);
  // An interrupted run never replaces a complete file: it writes NAME.partial.toml beside it.
  OutputTarget dest = out;
  const bool partial = report.interrupted && out.kind == OutputKind::File;
  if (partial) dest.path = partial_path_for(out.path);
  try {
    write_output(dest, partial ? text : output);
  } catch (const std::exception& e) {
    // NAME.partial.toml is a fallback only when it was not the file that just failed.
    return save_elsewhere(fallback_target(a, out), !report.interrupted, text, e.what(), js, recorder);
  }
  std::error_code ec;
  if (!report.interrupted && out.kind == OutputKind::File) fs::remove(partial_path_for(out.path), ec);  // superseded
  int status = kExitOk;
  report_end(a, out, dest.shown(), plan, report, text, &status);
  if (!recorder.complete()) spdlog::warn("{}", recorder.missing_text(js.path));
  settle_journal(js, report);
  return status;
}

}  // namespace memtopo::host::cli
