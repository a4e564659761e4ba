// `memtopo fleet DIR|FILES...`: the GPU that differs from its siblings (docs/fleet.md). Exit 0
// when no GPU is flagged, 1 when one is, 2 for bad input (a file that is no topology, nothing
// to compare, a bad profile).
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"
#include "cli/subcommand.hpp"
#include "tools/fleet/fleet_confirm.hpp"
#include "tools/fleet/fleet.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/output_file.hpp"

namespace memtopo::host::cli {

namespace {

struct FleetArgs {
  std::vector<std::string> paths;
  std::string format, output, reference;  // format "": the one -o names, else text
  CompareArgs compare;
  double spread_factor = 5;
  bool report = false;
  bool confirm = false;
};

// Where --confirm keeps what it measured: kConfirmFolder/<time> under the first folder named
// (beside the first file named), each run in a folder of its own.
std::filesystem::path confirm_folder(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path first(paths.front());
  const fs::path base = fs::is_directory(first, ec) ? first : first.parent_path();
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  const fs::path dir = (base.empty() ? fs::path(".") : base) / kConfirmFolder / stamp;
  fs::create_directories(dir, ec);
  if (ec) throw UsageError("fleet --confirm: cannot make " + dir.string() + " for the measurements again: " +
                           ec.message() + "; name a folder you can write");
  return dir;
}

std::string render(const FleetReport& r, const std::string& format) {
  if (format == "json") return fleet_to_json(r).dump(2) + "\n";
  if (format == "junit") return render_fleet_junit(r);
  return terminal_lines(render_fleet_text(r));
}

// The fleet page: the JSON handed to the report script, which draws every key that spreads.
int write_fleet_page(const FleetReport& r, const OutputTarget& out) {
  const TempFolder scratch("memtopo-fleet");
  const auto json_file = scratch.path / "fleet.json";
  write_output(resolve_output(json_file.string()), fleet_to_json(r).dump());
  return write_report_page("fleet --report", {"--fleet", json_file.string()}, out);
}

int cmd_fleet(const FleetArgs& a) {
  FleetOptions options;
  options.policy = key_policy_of(a.compare);
  options.spread_factor = a.spread_factor;
  if (a.report && a.output.empty()) throw UsageError("fleet --report: name the HTML page to write with -o fleet.html");
  const OutputTarget out = resolve_output(a.output.empty() ? "-" : a.output);
  const std::string ext = lowercase_extension(a.output);
  if (a.report && out.kind == OutputKind::File && ext != ".html" && ext != ".htm")
    throw UsageError("fleet --report -o " + a.output + ": the report is one HTML page; name it .html");
  std::vector<NamedInput> inputs;
  for (const auto& p : a.paths) inputs.push_back({"an input", p});
  inputs.push_back({"--reference", a.reference});
  refuse_output_over_inputs("-o", a.output, inputs);
  const std::string format =
      a.report ? a.format
               : format_for_output("fleet", a.output, out, a.format,
                                   {{".txt", "text"}, {".text", "text"}, {".json", "json"}, {".xml", "junit"}}, "text");
  if (!a.reference.empty()) {
    try {
      options.reference = read_fleet_member(a.reference);
    } catch (const std::exception& e) {
      std::cerr << "--reference: " << terminal_text(e.what()) << "\n";
      return kExitUsage;
    }
  }
  std::vector<std::string> errors, notes;
  std::vector<FleetMember> members = read_fleet(a.paths, &errors, &notes);
  for (const auto& e : errors) std::cerr << terminal_text(e) << "\n";
  for (const auto& n : notes) std::cerr << "note: " << terminal_text(n) << "\n";
  if (members.empty()) {
    std::cerr << "memtopo fleet: no topology to compare; name the folder `memtopo run --device all -o DIR/` wrote, "
                 "or the files\n";
    return kExitUsage;
  }
  FleetReport report = compare_fleet(std::move(members), options);
  if (a.confirm && report.flagged()) {
    const ConfirmSettings settings{this_host_name(), confirm_folder(a.paths), run_confirmation};
    for (const auto& line : confirm_findings(report, options, settings))
      std::cerr << "confirm: " << terminal_text(line) << "\n";
  }
  if (a.report) {
    std::cout << terminal_lines(render_fleet_text(report));
    const int page = write_fleet_page(report, out);
    if (page != kExitOk) return page;
  } else {
    try {
      write_output(out, render(report, format));
    } catch (const std::exception& e) {
      std::cerr << "memtopo fleet: " << e.what() << "\n";
      return kExitIncomplete;
    }
  }
  if (!errors.empty()) return kExitUsage;
  return report.flagged() ? kExitIncomplete : kExitOk;
}

}  // namespace

ExtraCommand add_fleet_command(CLI::App& app) {
  const auto options = [](CLI::App* sub, FleetArgs& a) {
    sub->add_option("paths", a.paths, "Folders of topologies (memtopo run -o DIR/) or topology files")->required();
    add_format_option(sub, a.format, "text (default), json or junit", {"text", "json", "junit"});
    add_output_option(sub, a.output, "File to write (default: stdout); with --report, the HTML page");
    sub->add_option("--reference", a.reference, "A known-good topology every GPU is compared with as well");
    sub->add_option("--spread-factor", a.spread_factor,
                    "Robust standard deviations a value must lie from its group's median to be flagged (default 5)")
        ->check(number_between(1, 100, "a spread factor from 1 to 100; give e.g. 5"));
    sub->add_flag("--report", a.report, "Write one offline HTML page (-o): a plot of every key that varies");
    sub->add_flag("--confirm", a.confirm,
                  "Measure again, on this host, the probes behind each flagged GPU's findings on that GPU and on an "
                  "unflagged sibling; keep the findings that show again");
    add_compare_options(sub, a.compare);
  };
  return subcommand<FleetArgs>(
      app, "fleet",
      "Compare the topologies of many GPUs: the one that differs from its siblings (exit 1 if any)",
      options, cmd_fleet);
}

}  // namespace memtopo::host::cli
