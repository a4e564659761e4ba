// memtopo list: the loadable probes, or those named. One line per probe (name, version, what
// it needs of the device, summary; on a terminal cut to its width); -v adds what each
// provides, requires and uses, its file, budget, options, keys and invariants, wrapped to
// kColumns; --format json gives all of it as data.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include <sys/ioctl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/cli_internal.hpp"
#include "topology/base/usage_error.hpp"
#include "topology/checks/invariants.hpp"
#include "topology/base/suggest.hpp"
#include "topology/values/value.hpp"

namespace memtopo::host::cli {
namespace {

constexpr size_t kColumns = 100;

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ", ") + s;
  return out.empty() ? "-" : out;
}

// `head` then `text` in lines of at most kColumns, continuation lines indented by `indent`
// spaces: broken at the last space that fits, else after the last comma (a list without
// spaces), else where the line is full.
std::string wrapped(const std::string& head, const std::string& text, size_t indent) {
  std::string rest = head + text, out;
  size_t lead = 0;  // the current line's indentation, already written
  while (lead + rest.size() > kColumns) {
    const size_t room = kColumns - lead;
    size_t cut = rest.rfind(' ', room);
    size_t skip = 1;
    if (cut == std::string::npos || cut == 0 || rest.find_first_not_of(' ') >= cut) {
      cut = rest.rfind(',', room - 1);
      cut = cut == std::string::npos || cut == 0 ? room : cut + 1;
      skip = 0;
    }
    out += rest.substr(0, cut) + "\n" + std::string(indent, ' ');
    rest = rest.substr(cut + skip);
    lead = indent;
  }
  return out + rest + "\n";
}

// The one-line form's width: the terminal's, where it is one; none in a pipe, where grep and
// a pager see every word.
size_t one_line_columns() {
  if (::isatty(STDOUT_FILENO) == 0) return 0;
  winsize w{};
  if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
  return kColumns;
}

// The one-line form: "name  version  [needs]  summary", the summary cut with "..." to fit
// `columns` (0: whole).
std::string one_line(const ProbeInfo& p, size_t name_width, size_t columns) {
  std::string head = p.name + std::string(name_width > p.name.size() ? name_width - p.name.size() : 0, ' ') + "  " +
                     p.plugin_version + "  ";
  const std::string needs = needs_text(p);
  if (!needs.empty()) head += "[needs " + needs + "]  ";
  if (p.opt_in) head += "[opt-in]  ";
  std::string summary = p.summary.empty() ? "-" : p.summary;
  if (columns > 0 && head.size() + summary.size() > columns) {
    const size_t room = columns > head.size() + 3 ? columns - head.size() - 3 : 0;
    summary = summary.substr(0, room) + "...";
  }
  return head + summary;
}

void print_details(const ProbeInfo& p) {
  std::cout << wrapped("    summary: ", p.summary.empty() ? "-" : p.summary, 13);
  std::cout << wrapped("    provides: ", join(p.provided), 14);
  std::cout << wrapped("    requires: ", join(p.required), 14);
  if (!p.used.empty()) std::cout << wrapped("    uses: ", join(p.used), 10);
  if (const std::string needs = needs_text(p); !needs.empty()) std::cout << wrapped("    needs: ", needs, 11);
  std::cout << "    file: " << p.file << "\n";
  if (p.budget_s > 0)
    std::cout << "    budget: " << short_number(p.budget_s) << " s (time limit unless the config sets time_limit_s)\n";
  if (p.own_process) std::cout << "    runs in a worker process of its own\n";
  if (p.opt_in) std::cout << "    opt-in: not in a default run; runs when named (--only " << p.name << ")\n";
  for (const auto& o : p.options)
    std::cout << wrapped("    option " + o.name + " (" + type_name(o.type) + ", default \"" + o.default_text + "\"" +
                             (o.range_text().empty() ? "" : ", range " + o.range_text()) + "): ",
                         o.help, 8);
  for (const auto& k : p.keys)
    std::cout << wrapped("    key " + k.key + " (" + type_name(k.type) + (k.unit.empty() ? "" : ", " + k.unit) + "): ",
                         k.meaning, 8);
  for (const auto& [key, role] : p.roles) std::cout << wrapped("    role " + key + ": ", role, 8);
  for (const auto& i : p.invariants) std::cout << wrapped("    invariant: ", invariant_text(i) + ": " + i.why, 8);
}

nlohmann::json probe_json(const ProbeInfo& p) {
  nlohmann::json j = {{"name", p.name},         {"plugin", p.plugin},     {"version", p.plugin_version},
                      {"summary", p.summary},   {"provides", p.provided}, {"requires", p.required},
                      {"uses", p.used},         {"needs", needs_text(p)}, {"file", p.file},
                      {"own_process", p.own_process}, {"opt_in", p.opt_in}};
  if (p.budget_s > 0) j["budget_s"] = p.budget_s;
  j["options"] = nlohmann::json::array();
  for (const auto& o : p.options)
    j["options"].push_back({{"name", o.name}, {"type", type_name(o.type)}, {"default", o.default_text},
                            {"range", o.range_text()}, {"help", o.help}});
  j["keys"] = nlohmann::json::array();
  for (const auto& k : p.keys)
    j["keys"].push_back({{"key", k.key}, {"type", type_name(k.type)}, {"unit", k.unit}, {"meaning", k.meaning}});
  j["roles"] = nlohmann::json::object();
  for (const auto& [key, role] : p.roles) j["roles"][key] = role;
  j["invariants"] = nlohmann::json::array();
  for (const auto& i : p.invariants) j["invariants"].push_back({{"relation", invariant_text(i)}, {"why", i.why}});
  return j;
}

// The probes `names` selects, in the registry's order: each a probe's name or its family
// (the part before '/'); none selects all. A name that selects nothing is a usage error.
std::vector<ProbeInfo> selected(const Registry& reg, const std::vector<std::string>& names) {
  if (names.empty()) return reg.probes();
  auto family_of = [](const std::string& probe) { return probe.substr(0, probe.find('/')); };
  std::vector<std::string> known;
  for (const auto& p : reg.probes()) {
    known.push_back(p.name);
    if (std::find(known.begin(), known.end(), family_of(p.name)) == known.end()) known.push_back(family_of(p.name));
  }
  for (const auto& n : names)
    if (std::find(known.begin(), known.end(), n) == known.end())
      throw UsageError("list: no probe or family '" + n + "' among the loadable probes" + did_you_mean(n, known) +
                       " (memtopo list shows them all)");
  std::vector<ProbeInfo> out;
  for (const auto& p : reg.probes())
    if (std::any_of(names.begin(), names.end(), [&](const std::string& n) { return n == p.name || n == family_of(p.name); }))
      out.push_back(p);
  return out;
}

}  // namespace

int cmd_list(const std::vector<std::string>& plugin_paths, const std::vector<std::string>& names, bool verbose,
             const std::string& format) {
  Registry reg = load_registry(plugin_paths, false);
  const std::vector<ProbeInfo> probes = selected(reg, names);
  if (format == "json") {
    nlohmann::json out = {{"probes", nlohmann::json::array()}, {"loading_errors", reg.errors()}};
    for (const auto& p : probes) out["probes"].push_back(probe_json(p));
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  size_t name_width = 0;
  for (const auto& p : probes) name_width = std::max(name_width, p.name.size());
  name_width = std::min<size_t>(name_width, 40);
  const size_t columns = one_line_columns();
  for (const auto& p : probes) {
    std::cout << one_line(p, name_width, columns) << "\n";
    if (verbose) print_details(p);
  }
  if (probes.empty()) std::cout << "no probes found\n";
  if (!reg.errors().empty()) {
    std::cout << "loading errors:\n";
    for (const auto& e : reg.errors()) std::cout << "  " << e << "\n";
  }
  return kExitOk;
}

}  // namespace memtopo::host::cli
