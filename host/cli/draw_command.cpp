// `memtopo draw TOPOLOGY`: the GPU at a glance as text (draw_text.cpp) to stdout or -o FILE, or
// as a picture (-o F.svg, -o F.png).
#include <cctype>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"
#include "cli/subcommand.hpp"
#include "tools/draw/draw.hpp"
#include "topology/base/terminal_text.hpp"
#include "topology/base/output_file.hpp"

namespace memtopo::host::cli {
namespace {

struct DrawArgs {
  std::string file, output;
};

// -o gpu.svg or gpu.png: the picture, drawn on matplotlib by host/report/gpu_picture.py from
// the model the text is drawn from; anything else: the text.
int cmd_draw(const DrawArgs& a) {
  const std::string ext = lowercase_extension(a.output);
  // A file whose name says a format draw does not write is refused, never filled with text.
  if (resolve_output(a.output.empty() ? "-" : a.output).kind == OutputKind::File && !ext.empty() && ext != ".svg" &&
      ext != ".png" && ext != ".pdf" && ext != ".txt" && ext != ".text") {
    std::cerr << "memtopo: draw -o " << a.output << ": draw writes text (-o F.txt, or stdout), SVG, PNG or PDF "
              << "(-o F.svg, F.png, F.pdf); name the file by the format you want\n";
    return kExitUsage;
  }
  refuse_output_over_inputs("-o", a.output, {{"the topology", a.file}});
  const auto doc = read_topology_or_report(a.file, "memtopo draw draws a topology file");
  if (!doc) return kExitUsage;
  const OutputTarget out = resolve_output(a.output.empty() ? "-" : a.output);
  const GpuDrawing drawing = gpu_drawing(*doc);
  if (ext == ".svg" || ext == ".png" || ext == ".pdf") {
    const TempFolder scratch("memtopo-draw");
    const std::filesystem::path model = scratch.path / "model.json";
    write_output(resolve_output(model.string()), gpu_drawing_json(drawing));
    return write_script_output("draw", "gpu_picture.py", {model.string()}, out, "gpu" + ext, false);
  }
  try {
    write_output(out, terminal_lines(draw_text(drawing)));
  } catch (const std::exception& e) {
    std::cerr << "memtopo: " << e.what() << "\n";
    return kExitIncomplete;
  }
  return kExitOk;
}

}  // namespace

ExtraCommand add_draw_command(CLI::App& app) {
  const auto options = [](CLI::App* sub, DrawArgs& a) {
    sub->add_option("file", a.file, "Topology file (TOML or JSON)")->required();
    add_output_option(sub, a.output,
                      "File to write (replaced atomically): .svg, .png or .pdf a picture, .txt or no extension text; - "
                      "or none: stdout");
  };
  return subcommand<DrawArgs>(
      app, "draw",
      "Draw the GPU's memory hierarchy from a topology file: text, or a picture with -o F.svg / F.png / F.pdf",
      options, cmd_draw);
}

}  // namespace memtopo::host::cli
