// `memtopo report`: one self-contained HTML page of a topology file and its raw series
// (docs/report.md). The page and its plots are made by a Python script on matplotlib
// (host/report/memtopo_report.py); this command checks the input, finds a Python that has
// matplotlib and the script, and runs it. The plotting dependency stays optional: without it
// only this command is unavailable, and it says what to install.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include "cli/cli_internal.hpp"
#include "cli/subcommand.hpp"
#include "tools/draw/draw.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/values/schema.hpp"
#include "topology/document/summary.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/output_file.hpp"

namespace memtopo::host::cli {

namespace {

namespace fs = std::filesystem;

struct ReportArgs {
  std::string topology, raw_dir, output;
};

// The topology must exist, parse (FILE:LINE:COL for a syntax error, as `memtopo validate`), be
// a topology and hold a measured value: a page of nothing is not a report.
std::optional<toml::table> reportable_topology(const std::string& file) {
  std::optional<toml::table> doc = read_topology_or_report(file, "memtopo report draws one");
  if (!doc) return std::nullopt;
  for (const auto& [name, node] : *doc)
    if (is_element_table(std::string(name.str())) && node.is_table() && !node.as_table()->empty()) return doc;
  std::cerr << terminal_text(file) << ": holds no measured values (no element table has a key); nothing to report\n";
  return std::nullopt;
}

// The inputs -o must not be: the topology and every file under --raw-dir.
std::vector<NamedInput> report_inputs(const ReportArgs& a) {
  std::vector<NamedInput> inputs{{"the topology", a.topology}};
  if (!a.raw_dir.empty()) inputs.push_back({"--raw-dir", a.raw_dir});
  return inputs;
}

// Every path is checked before anything is plotted; the output is checked as `run` checks it.
OutputTarget check_paths(const ReportArgs& a) {
  std::error_code ec;
  if (!a.raw_dir.empty() && !fs::is_directory(a.raw_dir, ec))
    throw UsageError("--raw-dir " + a.raw_dir + ": not a folder; name the folder `memtopo run --raw-dir` wrote");
  OutputTarget out = resolve_output(a.output);
  refuse_output_over_inputs("-o", a.output, report_inputs(a));
  const std::string ext = lowercase_extension(a.output);
  if (out.kind == OutputKind::File && ext != ".html" && ext != ".htm")
    throw UsageError("report -o " + a.output + ": a report is one HTML page; name it .html (memtopo draw -o F.pdf "
                     "draws the picture as PDF)");
  return out;
}

int cmd_report(const ReportArgs& a) {
  const OutputTarget out = check_paths(a);
  const std::optional<toml::table> doc = reportable_topology(a.topology);
  if (!doc) return kExitUsage;
  // The page starts with the picture `memtopo draw -o F.svg` draws, from the same model.
  const TempFolder scratch("memtopo-report-model");
  const fs::path model = scratch.path / "model.json";
  write_output(resolve_output(model.string()), gpu_drawing_json(gpu_drawing(*doc)));
  // Then the headline values, as the run's summary shows them (the keys probes declare).
  const fs::path headline = scratch.path / "headline.txt";
  write_output(resolve_output(headline.string()), render_summary(summary_column_of(a.topology, "").outcomes));
  // And every value as the headline shows it: one formatter for the page (the tables agree with
  // the headline: 81079 MiB in both, not 79.18 GiB in one).
  const fs::path values = scratch.path / "values.json";
  nlohmann::json shown = nlohmann::json::object();
  const nlohmann::json tables = toml_to_json(*doc);
  for (auto t = tables.begin(); t != tables.end(); ++t) {
    if (!is_element_table(t.key()) || !t->is_object()) continue;
    for (auto k = t->begin(); k != t->end(); ++k)
      if (!k->is_object()) shown[t.key() + "." + k.key()] = format_json_value(t.key() + "." + k.key(), *k, 12);
  }
  write_output(resolve_output(values.string()), shown.dump() + "\n");
  std::vector<std::string> args = {"--picture-model", model.string(), "--headline-file", headline.string(),
                                   "--values-file", values.string()};
  if (!a.raw_dir.empty()) args.insert(args.end(), {"--raw-dir", a.raw_dir});
  args.insert(args.end(), {"--", a.topology});
  return write_report_page("report", args, out);
}

}  // namespace

ExtraCommand add_report_command(CLI::App& app) {
  const auto options = [](CLI::App* sub, ReportArgs& a) {
    sub->add_option("topology", a.topology, "Topology file, TOML or JSON (memtopo run -o)")->required();
    sub->add_option("--raw-dir", a.raw_dir, "The run's --raw-dir: every CSV series in it is plotted");
    add_output_option(sub, a.output, "HTML file to write")->required();
  };
  return subcommand<ReportArgs>(
      app, "report",
      "Write one self-contained HTML page: every value, its provenance, a plot of every raw series",
      options, cmd_report);
}

}  // namespace memtopo::host::cli
