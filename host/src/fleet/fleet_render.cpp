// memtopo fleet's three forms of one FleetReport: the table a person reads, the JSON a script
// reads (and the fleet page draws), and JUnit XML for CI systems (one test case per GPU).
#include <cstdio>

#include "memtopo_host/fleet.hpp"
#include "memtopo_host/terminal_text.hpp"
#include "memtopo_host/text_encoding.hpp"
#include "memtopo_host/text_table.hpp"

namespace memtopo::host {

using ojson = nlohmann::ordered_json;

namespace {

// The first 12 characters of a UUID ("GPU-abc6453f") identify a GPU in a table; JSON has all.
std::string short_uuid(const std::string& uuid) { return uuid.size() > 12 ? uuid.substr(0, 12) : uuid; }

std::string expected_text(const FleetFinding& f) {
  std::string s = f.expected.is_null() ? "(no majority)" : shown_value(f.expected);
  return f.against == "reference" ? s + " (reference)" : s;
}

std::string deviation_text(const FleetFinding& f) {
  std::string s = f.deviation_percent ? shown_percent(*f.deviation_percent) : f.kind == "value" ? "" : f.kind;
  return f.counts ? s : s + (s.empty() ? "" : " ") + "(varies: not flagged)";
}

std::string value_text(const FleetFinding& f) { return f.value.is_null() ? "-" : shown_value(f.value); }

void render_group(const FleetReport& r, const FleetGroup& g, std::string& out) {
  out += "\n" + terminal_text(g.name) + ": " + counted(g.members.size(), "GPU", "GPUs") + ", " +
         counted(g.keys_compared, "key", "keys") + " compared\n";
  std::vector<std::vector<std::string>> rows{{"host", "device", "uuid", "result", "key", "value", "expected", "deviation"}};
  for (size_t m : g.members) {
    const FleetMember& member = r.members[m];
    const FleetGpu& gpu = r.gpus[m];
    std::vector<std::string> first{terminal_text(member.host), terminal_text(member.device), short_uuid(member.uuid),
                                   gpu.flagged() ? "FLAGGED" : "ok"};
    if (gpu.findings.empty()) rows.push_back(first);
    for (size_t i = 0; i < gpu.findings.size(); ++i) {
      const FleetFinding& f = gpu.findings[i];
      std::vector<std::string> row = i == 0 ? first : std::vector<std::string>(4, "");
      row.insert(row.end(), {f.key, terminal_text(value_text(f)), terminal_text(expected_text(f)), deviation_text(f)});
      rows.push_back(std::move(row));
    }
    for (const auto& w : member.state_warnings)
      rows.push_back({"", "", "", "", "state: " + terminal_text(w)});
  }
  if (g.members.size() == 1 && g.keys_compared == 0) out += "  (alone in its model: nothing to compare it with)\n";
  out += aligned(rows);
}

std::string finding_line(const FleetFinding& f) {
  std::string line = f.key + ": " + value_text(f) + ", expected " + expected_text(f);
  if (f.deviation_percent) line += " (" + shown_percent(*f.deviation_percent) + ")";
  return line + (f.counts ? "" : " [varies: not flagged]");
}

ojson finding_json(const FleetFinding& f) {
  return ojson{{"key", f.key},
               {"kind", f.kind},
               {"value", ojson::parse(f.value.dump())},
               {"expected", ojson::parse(f.expected.dump())},
               {"deviation_percent", f.deviation_percent ? ojson(*f.deviation_percent) : ojson(nullptr)},
               {"against", f.against},
               {"flagged", f.counts}};
}

}  // namespace

std::string render_fleet_text(const FleetReport& r) {
  char tol[64];
  std::snprintf(tol, sizeof tol, "tolerance %g %%, spread factor %g", r.tolerance_percent, r.spread_factor);
  std::string out = "memtopo fleet: " + counted(r.members.size(), "GPU", "GPUs") + " in " +
                    counted(r.groups.size(), "model", "models") + ", " + std::to_string(r.flagged()) + " flagged (" +
                    tol + ")\n";
  for (const auto& g : r.groups) render_group(r, g, out);
  return out;
}

ojson fleet_to_json(const FleetReport& r) {
  ojson groups = ojson::array();
  for (const auto& g : r.groups) {
    ojson series = ojson::array();
    for (const auto& s : g.series)
      series.push_back({{"key", s.key}, {"median", s.median}, {"values", ojson::parse(nlohmann::json(s.values).dump())}});
    groups.push_back({{"name", g.name}, {"members", g.members}, {"keys_compared", g.keys_compared}, {"series", series}});
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
               {"spread_factor", r.spread_factor}, {"groups", groups},       {"gpus", gpus}};
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
