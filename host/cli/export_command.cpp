// `memtopo export`: a topology file as JSON, as canonical TOML, as one flat CSV table, as the
// cache and latency lines of a gpgpusim.config, in MT4G's layout, or attached to the host's hwloc
// topology (one or more GPUs); `--schema` writes the topology JSON Schema (docs/host.md, "export").
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"
#include "cli/subcommand.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "topology/values/schema.hpp"
#include "tools/export/topology_export.hpp"
#include "topology/base/output_file.hpp"

namespace memtopo::host::cli {

namespace fs = std::filesystem;

namespace {

struct ExportArgs {
  std::vector<std::string> files;
  std::string file, output, format, base;  // file: the first of files
  bool accel_sim = false, hwloc = false, schema = false;
};

std::string export_format_error(const std::string& value) {
  if (parse_topology_format(value)) return "";
  return "'" + value + "' is not a format export writes; use json, toml, csv, accel-sim, mt4g or hwloc";
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// --format, or --accel-sim, else csv or toml for an output ending in .csv or .toml, else json.
TopologyFormat chosen_format(const ExportArgs& a) {
  std::optional<TopologyFormat> format;
  if (!a.format.empty()) format = parse_topology_format(a.format);
  if (a.accel_sim) {
    if (format && *format != TopologyFormat::AccelSim)
      throw UsageError("export: --accel-sim and --format " + a.format + " ask for different forms; give one of them");
    format = TopologyFormat::AccelSim;
  }
  if (a.hwloc) {
    if (format && *format != TopologyFormat::Hwloc)
      throw UsageError("export: --hwloc and --format " + a.format + " ask for different forms; give one of them");
    format = TopologyFormat::Hwloc;
  }
  // The format the output's name says: .json, .toml, .csv, .config (gpgpusim.config).
  const std::string ext = lowercase_extension(a.output);
  const std::map<std::string, TopologyFormat> by_name{{".json", TopologyFormat::Json},
                                                      {".toml", TopologyFormat::Toml},
                                                      {".csv", TopologyFormat::Csv},
                                                      {".config", TopologyFormat::AccelSim},
                                                      {".xml", TopologyFormat::Hwloc}};
  const auto named = by_name.find(ext);
  std::error_code ec;  // a device or a FIFO (an existing file that is not regular) has no format in its name
  const bool to_stdout = a.output.empty() || a.output == "-" ||
                         (std::filesystem::exists(a.output, ec) && !std::filesystem::is_regular_file(a.output, ec));
  if (!to_stdout && named == by_name.end())
    throw UsageError("export -o " + a.output + ": the name says no format export writes; name it .json, .toml, .csv "
                     "or .config (Accel-Sim) or .xml (hwloc), or write to stdout with --format");
  // MT4G's layout is JSON: a .json name fits it.
  const bool mt4g_json = format == TopologyFormat::Mt4g && !to_stdout && named->second == TopologyFormat::Json;
  if (format && !to_stdout && named->second != *format && !mt4g_json)
    throw UsageError("export -o " + a.output + ": the name says " + ext.substr(1) + ", the options another format; "
                     "name the file by the format you ask for");
  if (format) return *format;
  return to_stdout ? TopologyFormat::Json : named->second;
}

// Whether the file passes the topology schema; each error is reported with its line.
bool valid_topology(const std::string& file, const toml::table& doc) {
  const auto errors = validate_topology(toml_to_json(doc));
  for (const auto& e : errors) {
    std::cerr << position_of(file, doc, e.path) << ": " << e.text() << "\n";
  }
  if (!errors.empty())
    std::cerr << file << ": not a valid topology file, so nothing was written (`memtopo validate " << file
              << "` checks it)\n";
  return errors.empty();
}

// The --base config's text; UsageError with the reader's reason ("is a folder", "is a FIFO",
// "no such file", too large) otherwise.
std::string read_base_config(const std::string& base) {
  try {
    return engine::read_input_file(base,
                                   "a complete gpgpusim.config (e.g. Accel-Sim's "
                                   "configs/tested-cfgs/SM90_H100/gpgpusim.config)",
                                   size_t{16} << 20);
  } catch (const Error& e) {
    throw UsageError(std::string("export --base ") + e.what());
  }
}

std::string render(TopologyFormat format, const toml::table& doc, const std::string& file, const std::string& base,
                   const std::string& base_text) {
  switch (format) {
    case TopologyFormat::Json: return topology_json_text(doc);
    case TopologyFormat::AccelSim: {
      const std::string ours = accel_sim_config_text(doc, fs::path(file).filename().string());
      if (base.empty()) return ours;
      return accel_sim_on_base(base_text, fs::path(base).filename().string(), ours);
    }
    case TopologyFormat::Csv: return topology_csv_text(doc);
    case TopologyFormat::Mt4g: return mt4g_json_text(doc, fs::path(file).filename().string());
    default: return topology_toml_text(doc);
  }
}

int write_or_report(const OutputTarget& out, const std::string& text) {
  try {
    write_output(out, text);
  } catch (const std::exception& e) {
    std::cerr << "memtopo: " << e.what() << "\n";
    return kExitIncomplete;
  }
  return kExitOk;
}

// --hwloc: every topology read and checked, then the host's hwloc topology with each GPU attached.
int cmd_export_hwloc(const ExportArgs& a, const OutputTarget& out) {
  std::vector<std::pair<std::string, toml::table>> docs;
  for (const std::string& file : a.files) {
    refuse_output_over_inputs("-o", a.output, {{"the topology", file}});
    std::optional<toml::table> doc = read_toml_or_report(file, "a topology file written by `memtopo run`");
    if (!doc) return kExitUsage;
    if (!valid_topology(file, *doc)) return kExitIncomplete;
    docs.emplace_back(fs::path(file).filename().string(), std::move(*doc));
  }
  std::vector<std::pair<std::string, const toml::table*>> gpus;
  for (const auto& [name, doc] : docs) gpus.emplace_back(name, &doc);
  try {
    return write_or_report(out, hwloc_xml_text(gpus));
  } catch (const TopologyExportError& e) {
    std::cerr << "memtopo export --hwloc: " << e.what() << "; nothing was written\n";
    return kExitIncomplete;
  }
}

int cmd_export(const ExportArgs& given) {
  ExportArgs a = given;
  a.file = a.files.empty() ? "" : a.files.front();
  if (a.schema && (a.accel_sim || !a.format.empty()))
    throw UsageError("export --schema writes the topology JSON Schema; it takes no --format or --accel-sim");
  if (a.schema && !a.file.empty())
    throw UsageError("export --schema reads no topology file; drop " + a.file + " or --schema");
  if (!a.schema && a.file.empty())
    throw UsageError("export: name the topology file to read, e.g. memtopo export --format json -o topo.json topo.toml");
  const TopologyFormat format = chosen_format(a);
  if (a.files.size() > 1 && format != TopologyFormat::Hwloc)
    throw UsageError("export: one topology file at a time (--hwloc takes one per GPU)");
  if (!a.base.empty() && format != TopologyFormat::AccelSim)
    throw UsageError("export --base " + a.base + ": a base config is for --accel-sim only");
  // Read now, by the one input reader: a folder, a FIFO or /dev/zero is named as what it is.
  const std::string base_text = a.base.empty() ? "" : read_base_config(a.base);
  const OutputTarget out = resolve_output(a.output.empty() ? "-" : a.output);
  if (a.schema) return write_or_report(out, std::string(topology_schema_text()));
  if (format == TopologyFormat::Hwloc) return cmd_export_hwloc(a, out);
  refuse_output_over_inputs("-o", a.output, {{"the topology", a.file}, {"the --base config", a.base}});
  const std::optional<toml::table> doc = read_toml_or_report(a.file, "a topology file written by `memtopo run`");
  if (!doc) return kExitUsage;
  if (!valid_topology(a.file, *doc)) return kExitIncomplete;
  std::string text;
  try {
    text = render(format, *doc, a.file, a.base, base_text);
  } catch (const TopologyExportError& e) {
    std::cerr << a.file << ":" << e.line << ": " << e.what() << "; nothing was written\n";
    return kExitIncomplete;
  } catch (const std::exception& e) {  // the base config unreadable
    std::cerr << "memtopo export: " << e.what() << "; nothing was written\n";
    return kExitIncomplete;
  }
  return write_or_report(out, text);
}

}  // namespace

ExtraCommand add_export_command(CLI::App& app) {
  const auto options = [](CLI::App* sub, ExportArgs& a) {
    sub->add_option("file", a.files, "Topology file to read (TOML or JSON); with --hwloc, one per GPU");
    sub->add_option("--format", a.format,
                    "json, toml, csv, accel-sim, mt4g (MT4G's JSON layout, docs/mt4g.md) or hwloc (default: by -o's ending, else json)")
        ->check(export_format_error);
    sub->add_flag("--accel-sim", a.accel_sim, "Same as --format accel-sim: gpgpusim.config lines (docs/accel-sim.md)");
    sub->add_flag("--hwloc", a.hwloc,
                  "Same as --format hwloc: this host's hwloc topology as XML, each GPU's memory hierarchy attached "
                  "(lstopo --input; docs/links.md)");
    sub->add_option("--base", a.base,
                    "With --accel-sim: a complete gpgpusim.config whose values the topology's replace (docs/accel-sim.md)");
    sub->add_flag("--schema", a.schema, "Write the topology JSON Schema (reads no file)");
    add_output_option(sub, a.output);
  };
  return subcommand<ExportArgs>(
      app, "export",
      "Write a topology file as JSON, TOML, CSV, gpgpusim.config lines, MT4G's JSON or hwloc XML",
      options, cmd_export);
}

}  // namespace memtopo::host::cli
