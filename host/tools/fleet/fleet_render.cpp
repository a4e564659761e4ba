// memtopo fleet's three forms of one FleetReport: the table a person reads, the JSON a script
// reads (and the fleet page draws), and JUnit XML for CI systems (one test case per GPU).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>

#include "tools/fleet/fleet.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/text_encoding.hpp"
#include "topology/base/text_table.hpp"
#include "tools/compare/topology_diff.hpp"

namespace memtopo::host {

namespace fs = std::filesystem;

using ojson = nlohmann::ordered_json;

namespace {

// The first 12 characters of a UUID ("GPU-abc6453f") identify a GPU in a table; JSON has all.
std::string short_uuid(const std::string& uuid) { return uuid.size() > 12 ? uuid.substr(0, 12) : uuid; }

// Values in the unit the key's name says (174 GB/s, 26.6 MB), a list as a list.
std::string shown_for(const FleetFinding& f, const nlohmann::json& v) {
  if (f.kind == "state" || f.kind == "probe" || f.kind == "bound" || f.kind == "health") return v.is_string() ? v.get<std::string>() : v.dump();
  return format_json_value(f.key, v);
}

// A list judged by its worst element shows that element: "[37] 215 cycles" against "208 cycles".
std::string expected_text(const FleetFinding& f) {
  std::string s = f.element                ? shown_for(f, f.element_expected)
                  : f.expected.is_null()   ? (f.not_flagged == "no majority" ? "(no majority)" : "-")
                                           : shown_for(f, f.expected);
  return f.against == "reference" ? s + " (reference)" : s;
}

// An index array's change is how many entries differ, not a percentage (topology_diff.hpp).
std::string change_of(const FleetFinding& f) {
  if (f.element) return f.deviation_percent ? shown_percent(*f.deviation_percent) : "";
  if (const std::string n = changed_entries_text(f.value, f.expected); !n.empty()) return n;
  return f.deviation_percent ? shown_percent(*f.deviation_percent) : "";
}

std::string deviation_text(const FleetFinding& f) {
  std::string s = change_of(f);
  if (s.empty() && f.kind != "value") s = f.kind;
  if (!f.counts) s += std::string(s.empty() ? "" : " ") + "(" + f.not_flagged + ": not flagged)";
  if (!f.confirmation.empty()) s += std::string(s.empty() ? "" : "; ") + terminal_text(f.confirmation);
  return s;
}

std::string value_text(const FleetFinding& f) {
  if (f.element) return "[" + std::to_string(*f.element) + "] " + shown_for(f, f.element_value);
  if (f.value.is_null()) return f.absent_reason.empty() ? "-" : "- (absent: " + terminal_text(f.absent_reason) + ")";
  return shown_for(f, f.value);
}

std::string member_name(const FleetMember& m) {
  return terminal_text(m.host) + " " + terminal_text(m.device) + (m.uuid.empty() ? "" : " " + short_uuid(m.uuid));
}

// How the group's GPUs were built where they differ (floor sweeping): never a fault.
void render_configuration(const FleetReport& r, const FleetGroup& g, std::string& out) {
  if (g.configuration.empty()) return;
  out += "  configuration (how each GPU was built; it differs between healthy GPUs, never flagged):\n";
  std::vector<std::vector<std::string>> rows{{"    key", "value", "GPUs"}};
  for (const auto& c : g.configuration)
    for (size_t i = 0; i < c.variants.size(); ++i) {
      const auto& v = c.variants[i];
      std::string who = counted(v.members.size(), "GPU", "GPUs");
      if (i > 0 && v.members.size() <= 4) {
        who += ":";
        for (size_t m : v.members) who += " " + member_name(r.members[m]);
      }
      rows.push_back({i == 0 ? "    " + c.key : "", terminal_text(format_json_value(c.key, v.value)), who});
    }
  out += aligned_within(rows);
}

// An aligned table's text split into its rows: a row's first line has its first cell at
// `indent`, the lines a narrowed cell continues on are blank there.
std::vector<std::string> table_rows(const std::string& table, size_t indent) {
  std::vector<std::string> rows;
  for (size_t begin = 0; begin < table.size();) {
    const size_t end = std::min(table.find('\n', begin), table.size() - 1) + 1;
    const std::string line = table.substr(begin, end - begin);
    if (rows.empty() || (line.size() > indent && line[indent] != ' ')) rows.emplace_back();
    rows.back() += line;
    begin = end;
  }
  return rows;
}

// The GPUs of a group a row each, and under each GPU its findings, in one table of their own
// indented below it: both within 120 columns, long cells continued on the lines below.
void render_group(const FleetReport& r, const FleetGroup& g, std::string& out) {
  out += "\n" + terminal_text(g.name) + ": " + counted(g.members.size(), "GPU", "GPUs") + ", " +
         counted(g.keys_compared, "key", "keys") + " compared\n";
  // Where host, device and UUID do not tell two GPUs apart (simulated ones, files of one GPU
  // from another host), each row names its file.
  std::set<std::string> names;
  bool by_file = false;
  for (size_t m : g.members) by_file = by_file || !names.insert(member_name(r.members[m])).second;
  std::vector<std::vector<std::string>> gpu_rows{{"host", "device", "uuid", "result"}};
  if (by_file) gpu_rows[0].insert(gpu_rows[0].begin(), "file");
  std::vector<std::vector<std::string>> finding_rows{{"key", "value", "expected", "deviation"}};
  std::vector<size_t> findings_of;  // each GPU's count of finding rows
  for (size_t m : g.members) {
    const FleetMember& member = r.members[m];
    const FleetGpu& gpu = r.gpus[m];
    const std::string host = terminal_text(member.host);
    gpu_rows.push_back({host.empty() ? "-" : host, terminal_text(member.device), short_uuid(member.uuid),
                        gpu.flagged() ? "FLAGGED" : "ok"});
    if (by_file) gpu_rows.back().insert(gpu_rows.back().begin(), terminal_text(fs::path(member.file).filename().string()));
    for (const FleetFinding& f : gpu.findings)
      finding_rows.push_back({f.key, terminal_text(value_text(f)), terminal_text(expected_text(f)), deviation_text(f)});
    findings_of.push_back(gpu.findings.size());
  }
  if (g.members.size() == 1 && g.keys_compared == 0)
    out += r.reference_keys_compared ? "  (alone in its model: compared with the reference only)\n"
                                     : "  (alone in its model: nothing to compare it with)\n";
  constexpr size_t kFindingIndent = 6;
  const std::vector<std::string> gpus = table_rows(aligned_within(gpu_rows, 2), 2);
  const std::vector<std::string> findings = table_rows(aligned_within(finding_rows, kFindingIndent), kFindingIndent);
  out += gpus[0];
  if (findings.size() > 1) out += findings[0];
  for (size_t i = 0, next_finding = 1; i < g.members.size(); ++i) {
    out += gpus[i + 1];
    for (size_t k = 0; k < findings_of[i]; ++k) out += findings[next_finding++];
    const FleetMember& member = r.members[g.members[i]];
    if (!r.gpus[g.members[i]].flagged())  // a flagged GPU leads with its state (the "gpu state" finding)
      for (const auto& w : member.state_warnings)
        out += wrapped_lines(std::string(kFindingIndent, ' ') + "state: " + terminal_text(w), kFindingIndent + 7) + "\n";
  }
  render_configuration(r, g, out);
}

std::string finding_line(const FleetFinding& f) {
  std::string line = f.key + ": " + value_text(f) + ", expected " + expected_text(f);
  if (const std::string change = change_of(f); !change.empty()) line += " (" + change + ")";
  if (!f.confirmation.empty()) line += "; " + f.confirmation;
  return line + (f.counts ? "" : " [" + f.not_flagged + ": not flagged]");
}

ojson finding_json(const FleetFinding& f) {
  return ojson{{"key", f.key},
               {"kind", f.kind},
               {"value", ojson::parse(f.value.dump())},
               {"expected", ojson::parse(f.expected.dump())},
               {"deviation_percent", f.deviation_percent ? ojson(*f.deviation_percent) : ojson(nullptr)},
               {"against", f.against},
               {"flagged", f.counts},
               {"not_flagged", f.not_flagged},
               {"element", f.element ? ojson(*f.element) : ojson(nullptr)},
               {"element_value", ojson::parse(f.element_value.dump())},
               {"element_expected", ojson::parse(f.element_expected.dump())},
               {"confirmation", f.confirmation},
               {"absent_reason", f.absent_reason}};
}

}  // namespace

std::string render_fleet_text(const FleetReport& r) {
  char tol[64];
  std::snprintf(tol, sizeof tol, "tolerance %g %%, spread factor %g", r.tolerance_percent, r.spread_factor);
  std::string out = "memtopo fleet: " + counted(r.members.size(), "GPU", "GPUs") + " in " +
                    counted(r.groups.size(), "group", "groups") + ", " + std::to_string(r.flagged()) + " flagged (" +
                    tol + ")\n";
  if (r.reference_keys_compared) out += counted(r.reference_keys_compared, "key", "keys") + " compared with the reference\n";
  for (const auto& n : r.notes) out += "note: " + terminal_text(n) + "\n";
  for (const auto& g : r.groups) render_group(r, g, out);
  return out;
}

ojson fleet_to_json(const FleetReport& r) {
  ojson groups = ojson::array();
  for (const auto& g : r.groups) {
    ojson series = ojson::array();
    for (const auto& s : g.series)
      series.push_back({{"key", s.key}, {"median", s.median}, {"values", ojson::parse(nlohmann::json(s.values).dump())}});
    ojson configuration = ojson::array();
    for (const auto& c : g.configuration) {
      ojson variants = ojson::array();
      for (const auto& v : c.variants) variants.push_back({{"value", ojson::parse(v.value.dump())}, {"members", v.members}});
      configuration.push_back({{"key", c.key}, {"variants", variants}});
    }
    groups.push_back({{"name", g.name},
                      {"members", g.members},
                      {"keys_compared", g.keys_compared},
                      {"series", series},
                      {"configuration", configuration}});
  }
  ojson gpus = ojson::array();
  for (size_t m = 0; m < r.members.size(); ++m) {
    const FleetMember& member = r.members[m];
    ojson findings = ojson::array();
    for (const auto& f : r.gpus[m].findings) findings.push_back(finding_json(f));
    // A file name need not be UTF-8; JSON must be (nlohmann's dump throws otherwise).
    gpus.push_back({{"file", utf8_escaped(member.file)},
                    {"host", member.host},
                    {"device", member.device},
                    {"uuid", member.uuid},
                    {"group", member.group},
                    {"flagged", r.gpus[m].flagged()},
                    {"findings", findings},
                    {"state_warnings", member.state_warnings}});
  }
  return ojson{{"gpus_total", r.members.size()}, {"flagged", r.flagged()},     {"tolerance_percent", r.tolerance_percent},
               {"spread_factor", r.spread_factor}, {"reference_keys_compared", r.reference_keys_compared},
               {"notes", r.notes},                 {"groups", groups},       {"gpus", gpus}};
}

std::string render_fleet_junit(const FleetReport& r) {
  size_t failures = r.flagged();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"memtopo fleet\" tests=\"" +
                    std::to_string(r.members.size()) + "\" failures=\"" + std::to_string(failures) + "\">\n";
  for (const auto& g : r.groups) {
    size_t group_failures = 0;
    for (size_t m : g.members) group_failures += r.gpus[m].flagged();
    out += "  <testsuite name=\"" + xml_escaped(g.name) + "\" tests=\"" + std::to_string(g.members.size()) +
           "\" failures=\"" + std::to_string(group_failures) + "\">\n";
    for (size_t m : g.members) {
      const FleetMember& member = r.members[m];
      const std::string name = member.host + " " + member.device + (member.uuid.empty() ? "" : " " + member.uuid);
      out += "    <testcase classname=\"" + xml_escaped(member.host) + "\" name=\"" + xml_escaped(name) + "\"";
      std::string details;
      for (const auto& f : r.gpus[m].findings) details += finding_line(f) + "\n";
      for (const auto& w : member.state_warnings) details += "state: " + w + "\n";
      if (!r.gpus[m].flagged() && details.empty()) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (r.gpus[m].flagged()) {
        size_t n = 0;
        for (const auto& f : r.gpus[m].findings) n += f.counts;
        out += "      <failure message=\"" + xml_escaped(counted(n, "key differs", "keys differ") + " from the group") +
               "\">" + xml_escaped(details) + "</failure>\n";
      } else {
        out += "      <system-out>" + xml_escaped(details) + "</system-out>\n";
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace memtopo::host
