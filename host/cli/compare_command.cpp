// `memtopo compare A.toml B.toml [C.toml ...]`: the headline values of several topologies
// (GPUs or runs) side by side, one row per known key of each element (the rows of the
// multi-GPU summary), with each file's ratio to the first where both are numbers; as aligned
// text, Markdown or CSV (docs/host.md, "memtopo compare"). `diff` says what changed; this says
// how they compare.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"
#include "cli/subcommand.hpp"
#include "topology/base/csv.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/document/summary.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/text_table.hpp"
#include "topology/values/value.hpp"
#include "topology/base/output_file.hpp"

namespace memtopo::host::cli {
namespace {

namespace fs = std::filesystem;

struct CompareCmdArgs {
  std::vector<std::string> files;
  std::string format, output;  // format "": the one -o names, else text
};


std::string shown_csv_number(double v);

// "x1.07": the second over the first; "" where either is no number or the first is 0, and
// "bound" where either is one (">= 1" against ">= 0" has no ratio).
std::string ratio_text(const SummaryTable& t, size_t r, size_t c) {
  if (t.bounded[r][0] || t.bounded[r][c]) return "bound";
  const double first = t.numbers[r][0], other = t.numbers[r][c];
  if (!std::isfinite(first) || !std::isfinite(other) || first == 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "x%.3g", other / first);
  return buf;
}

// Column labels: file names, with their folders where two names are the same.
std::vector<std::string> labels_of(const std::vector<std::string>& files) {
  std::map<std::string, int> seen;
  for (const auto& f : files) ++seen[fs::path(f).filename().string()];
  std::vector<std::string> out;
  for (const auto& f : files) {
    const std::string name = fs::path(f).filename().string();
    out.push_back(seen[name] > 1 ? f : name);
  }
  return out;
}

// Per row and later file, "method changed (probe 1 -> 2)" where the key's probe ran as another
// major version there than in the first file: no ratio between two methods.
using MethodChanges = std::vector<std::vector<std::string>>;
MethodChanges method_changes(const SummaryTable& t, const std::vector<std::string>& files) {
  std::vector<std::optional<FleetMember>> members;
  for (const auto& f : files) {
    try {
      members.emplace_back(read_fleet_member(f));
    } catch (const std::exception&) {
      members.emplace_back();
    }
  }
  MethodChanges out(t.rows.size(), std::vector<std::string>(files.size()));
  for (size_t r = 0; r < t.rows.size(); ++r)
    for (size_t c = 1; c < files.size(); ++c)
      if (members[0] && members[c]) out[r][c] = method_change(*members[0], *members[c], t.keys[r]);
  return out;
}

// The table as cells: header, then a row per key with each file's value and, after the
// values, each later file's ratio to the first (or that the method changed).
std::vector<std::vector<std::string>> cells(const SummaryTable& t, const std::vector<SummaryColumn>& columns,
                                            const MethodChanges& changed) {
  std::vector<std::string> header{"key"};
  header.insert(header.end(), t.header.begin(), t.header.end());
  for (size_t c = 1; c < t.header.size(); ++c) header.push_back(t.header[c] + " / " + t.header[0]);
  std::vector<std::vector<std::string>> out{header};
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::vector<std::string> row = t.rows[r];
    for (size_t c = 1; c < t.header.size(); ++c)
      row.push_back(!changed[r][c].empty() ? changed[r][c] : ratio_text(t, r, c));
    out.push_back(std::move(row));
  }
  std::vector<std::string> tally{"probes"};
  for (const auto& c : columns) tally.push_back(c.tally);
  tally.resize(header.size());
  out.push_back(std::move(tally));
  return out;
}

std::string markdown(const std::vector<std::vector<std::string>>& rows) {
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    out += "|";
    for (const auto& cell : rows[r]) out += " " + markdown_cell(cell) + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t c = 0; c < rows[0].size(); ++c) out += c ? "---:|" : "---|";
      out += "\n";
    }
  }
  return out;
}

// CSV for a spreadsheet: the key and its unit, then each file's value in that unit (numbers; a
// list's joined by ';'), then each later file's ratio to the first.
std::string csv(const SummaryTable& t, const MethodChanges& changed) {
  std::vector<std::string> header{"key", "unit"};
  header.insert(header.end(), t.header.begin(), t.header.end());
  for (size_t c = 1; c < t.header.size(); ++c) header.push_back(t.header[c] + " / " + t.header[0]);
  std::vector<std::vector<std::string>> rows{header};
  for (size_t r = 0; r < t.rows.size(); ++r) {
    std::vector<std::string> row{t.keys[r], unit_of_key(t.keys[r])};
    row.insert(row.end(), t.plain[r].begin(), t.plain[r].end());
    for (size_t c = 1; c < t.header.size(); ++c) {
      const double first = t.numbers[r][0], other = t.numbers[r][c];
      row.push_back(!changed[r][c].empty()                                        ? changed[r][c]
                    : t.bounded[r][0] || t.bounded[r][c]                          ? "bound"
                    : std::isfinite(first) && std::isfinite(other) && first != 0 ? shown_csv_number(other / first)
                                                                                 : "");
    }
    rows.push_back(std::move(row));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) line += (c ? "," : "") + csv_field(row[c]);
    out += line + "\n";
  }
  return out;
}

std::string shown_csv_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

// A list of values with one unit ("32.0 cyc/273.7 cyc/557.2 cyc") with the unit once
// ("32.0/273.7/557.2 cyc"): a table cell stays narrow.
std::string unit_once(const std::string& cell) {
  const size_t space = cell.rfind(' ');
  if (space == std::string::npos || cell.find('/') == std::string::npos) return cell;
  const std::string unit = cell.substr(space);  // " cyc"
  std::string out, part;
  size_t start = 0;
  while (start <= cell.size()) {
    size_t slash = cell.find('/', start);
    if (slash == std::string::npos) slash = cell.size();
    part = cell.substr(start, slash - start);
    if (part.size() <= unit.size() || part.compare(part.size() - unit.size(), unit.size(), unit) != 0) return cell;
    out += (out.empty() ? "" : "/") + part.substr(0, part.size() - unit.size());
    start = slash + 1;
  }
  return out + unit;
}

// Aligned text no wider than `width` columns where the cells allow: the key column, then as
// many of the other columns as fit, block after block (a terminal wraps nothing). A column
// counts as at most kCellColumns wide: a longer cell (a device's name, a best configuration, a
// method change) continues on the lines below, so that three files' values share a block.
std::string wrapped_table(std::vector<std::vector<std::string>> rows, size_t width) {
  constexpr size_t kCellColumns = 22;
  for (auto& row : rows)
    for (auto& cell : row) cell = unit_once(cell);
  std::vector<size_t> widest(rows.empty() ? 0 : rows[0].size(), 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size() && c < widest.size(); ++c)
      widest[c] = std::max(widest[c], c == 0 ? row[c].size() : std::min(row[c].size(), kCellColumns));
  std::string out;
  for (size_t first = 1; first < widest.size();) {
    size_t used = 1 + widest[0], last = first;
    while (last < widest.size() && (last == first || used + 2 + widest[last] <= width)) used += 2 + widest[last++];
    std::vector<std::vector<std::string>> block;
    for (const auto& row : rows) {
      std::vector<std::string> part{row[0]};
      for (size_t c = first; c < last && c < row.size(); ++c) part.push_back(row[c]);
      block.push_back(std::move(part));
    }
    out += (out.empty() ? "" : "\n") + aligned_within(block, 0, width);
    first = last;
  }
  return out;
}

// One file as text: the summary `memtopo run` printed at its end, from the file alone (the
// README's example is regenerated so, scripts/readme-example).
std::string run_summary(const std::string& file) {
  const SummaryColumn c = summary_column_of(file, "");
  std::map<std::string, size_t> count;
  for (const auto& [_, state] : read_fleet_member(file).probes) ++count[state.substr(state.rfind(' ') + 1)];
  return render_summary(c.outcomes) + std::to_string(count["ok"]) + " ok, " + std::to_string(count["not_determinable"]) +
         " not determinable, " + std::to_string(count["skipped"]) + " skipped, " + std::to_string(count["failed"]) +
         " failed\n";
}

int cmd_compare(const CompareCmdArgs& a) {
  if (a.files.empty())
    throw UsageError("compare: name one topology file (its summary) or more (memtopo compare h100.toml h200.toml)");
  std::vector<NamedInput> inputs;
  for (const auto& f : a.files) inputs.push_back({"a topology", f});
  refuse_output_over_inputs("-o", a.output, inputs);
  const OutputTarget out = resolve_output(a.output.empty() ? "-" : a.output);
  const std::string format = format_for_output(
      "compare", a.output, out, a.format,
      {{".txt", "text"}, {".text", "text"}, {".md", "markdown"}, {".markdown", "markdown"}, {".csv", "csv"}}, "text");
  const std::vector<std::string> labels = labels_of(a.files);
  std::vector<SummaryColumn> columns;
  for (size_t i = 0; i < a.files.size(); ++i) {
    if (!read_topology_or_report(a.files[i], "memtopo compare compares topology files")) return kExitUsage;
    columns.push_back(summary_column_of(a.files[i], labels[i]));
    // A file the schema refuses is no column of dashes: named, with why, as diff does.
    if (const std::string& t = columns.back().tally; t.rfind(kUnreadable, 0) == 0) {
      std::fprintf(stderr, "memtopo compare: %s\n", t.substr(kUnreadable.size()).c_str());
      return kExitUsage;
    }
  }
  const SummaryTable table = summary_table(columns);
  const MethodChanges changed = method_changes(table, a.files);
  const auto rows = cells(table, columns, changed);
  const std::string text = format == "markdown"  ? markdown(rows)
                           : format == "csv"     ? csv(table, changed)
                           : a.files.size() == 1 ? run_summary(a.files[0])
                                                 : wrapped_table(rows, kTextColumns);
  try {
    write_output(out, text);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memtopo: %s\n", e.what());
    return kExitIncomplete;
  }
  return kExitOk;
}

}  // namespace

ExtraCommand add_compare_command(CLI::App& app) {
  const auto options = [](CLI::App* sub, CompareCmdArgs& a) {
    sub->add_option("files", a.files,
                    "Topology files (TOML or JSON); one alone: its summary as `memtopo run` printed it")
        ->required();
    add_format_option(sub, a.format, "text (default), markdown or csv", {"text", "markdown", "csv"});
    add_output_option(sub, a.output);
  };
  return subcommand<CompareCmdArgs>(
      app, "compare",
      "Headline values of several topology files side by side, with ratios to the first (one file: its summary)",
      options, cmd_compare);
}

}  // namespace memtopo::host::cli
