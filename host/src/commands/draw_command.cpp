// `memtopo draw TOPOLOGY`: the GPU at a glance as text (draw_text.cpp), to stdout or -o FILE.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "commands/cli_internal.hpp"
#include "memtopo_host/draw.hpp"
#include "output/output_file.hpp"

namespace memtopo::host::cli {
namespace {

struct DrawArgs {
  std::string file, output;
};

int cmd_draw(const DrawArgs& a) {
  const std::string ext = std::filesystem::path(a.output).extension().string();
  if (ext == ".svg" || ext == ".png")
    throw UsageError("draw -o " + a.output + ": memtopo draw writes text so far; the " + ext.substr(1) +
                     " drawing is not built yet (memtopo report draws the series); drop -o to print the text");
  refuse_output_over_inputs("-o", a.output, {{"the topology", a.file}});
  const auto doc = read_topology_or_report(a.file, "memtopo draw draws a topology file");
  if (!doc) return kExitUsage;
  try {
    write_output(resolve_output(a.output.empty() ? "-" : a.output), draw_topology_text(*doc));
  } catch (const std::exception& e) {
    std::cerr << "memtopo: " << e.what() << "\n";
    return kExitIncomplete;
  }
  return kExitOk;
}

}  // namespace

ExtraCommand add_draw_command(CLI::App& app) {
  auto args = std::make_shared<DrawArgs>();
  CLI::App* sub = app.add_subcommand("draw", "Draw the GPU's memory hierarchy from a topology file, as text");
  sub->add_option("file", args->file, "Topology file (TOML or JSON)")->required();
  sub->add_option("-o,--output", args->output, "File to write (replaced atomically); - or none: stdout");
  return {sub, [args] { return cmd_draw(*args); }};
}

}  // namespace memtopo::host::cli
