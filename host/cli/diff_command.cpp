// `memtopo diff`: compare two topology files (docs/host.md, "memtopo diff"). The comparison
// and its rendering live in topology_diff.cpp; this file reads the files and maps the result
// to the exit status: 0 equal within tolerance, 1 different, 2 usage or unreadable file.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"
#include "cli/subcommand.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/base/terminal_text.hpp"
#include "tools/compare/topology_diff.hpp"

namespace memtopo::host::cli {

namespace {

namespace fs = std::filesystem;

struct DiffArgs {
  std::string a, b;
  std::string format = "text";
  CompareArgs compare;
  std::vector<std::string> only;
};

std::string only_entry_error(const std::string& value) {
  if (!value.empty() && value.front() != ',' && value.back() != ',' && value.find(",,") == std::string::npos) return "";
  return "'" + value + "' has an empty entry; name element tables separated by commas (e.g. l1d,l2)";
}

int cmd_diff(const DiffArgs& args) {
  DiffOptions options;
  options.policy = key_policy_of(args.compare);  // a bad profile is a usage error before any file is read
  const std::string hint = "memtopo diff compares two (memtopo diff A.toml B.toml)";
  const std::optional<toml::table> a = read_topology_or_report(args.a, hint);
  const std::optional<toml::table> b = read_topology_or_report(args.b, hint);
  if (!a || !b) return kExitUsage;
  options.only = split_lists(args.only);
  // Two runs of one model: a key that healthy GPUs of it spread more than the tolerance over is
  // compared as memtopo fleet compares it (host/data/fleet_spreads.toml); --tolerance keeps its own.
  const std::string model_a = model_name(*a), model_b = model_name(*b);
  // GPUs only: a simulated replay carries the model's name but none of its spread.
  const bool gpus = (*a)["meta"]["backend"].value_or(std::string()) == "cuda" &&
                    (*b)["meta"]["backend"].value_or(std::string()) == "cuda";
  if (!args.compare.tolerance_percent && gpus && !model_a.empty() && model_a == model_b) {
    const auto& spreads = shipped_spreads(model_a).least_tolerance_percent;
    if (!spreads.empty()) {
      options.policy = options.policy.with_least_tolerances(spreads);
      options.spreads_model = model_a;
    }
  }
  TopologyDiff diff;
  try {
    diff = diff_topologies(*a, *b, options);
  } catch (const DiffError& e) {
    throw UsageError(std::string("diff: ") + e.what());
  }
  const DiffSide side_a = diff_side(args.a, *a), side_b = diff_side(args.b, *b);
  if (args.format == "json")
    std::cout << diff_to_json(diff, side_a, side_b).dump(2) << "\n";
  else
    std::cout << terminal_lines(render_diff_text(diff, side_a, side_b));
  return diff.equal() ? kExitOk : kExitIncomplete;
}

}  // namespace

ExtraCommand add_diff_command(CLI::App& app) {
  const auto options = [](CLI::App* sub, DiffArgs& a) {
    sub->add_option("A", a.a, "The first topology file (before)")->required();
    sub->add_option("B", a.b, "The second topology file (after)")->required();
    add_format_option(sub, a.format, "text (default) or json", {"text", "json"});
    add_compare_options(sub, a.compare);
    sub->add_option("--only", a.only, "Compare only these element tables (comma-separated or repeated: l1d,l2)")
        ->allow_extra_args(false)
        ->check(only_entry_error);
  };
  return subcommand<DiffArgs>(
      app, "diff",
      "Compare two topology files: values beyond the tolerance, keys in one only, probe versions (exit 1 if any)",
      options, cmd_diff);
}

}  // namespace memtopo::host::cli
