// `memtopo draw` without -o: the GPU at a glance in the terminal, as lstopo-no-graphics draws a
// CPU machine: the model of draw_model.cpp as a tree, the labels of one level in one column.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "memtopo_host/draw.hpp"

namespace memtopo::host {
namespace {

struct Line {
  std::string label, text;
};

// Tree lines: "├── label  text" with the labels of one level in one column.
void emit(std::string& out, const std::string& indent, const std::vector<Line>& lines, size_t width) {
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool last = i + 1 == lines.size();
    out += indent + (last ? "└── " : "├── ") + lines[i].label +
           std::string(width > lines[i].label.size() ? width - lines[i].label.size() : 0, ' ') + "  " +
           lines[i].text + "\n";
  }
}

}  // namespace

std::string draw_text(const GpuDrawing& g) {
  std::string out = g.title, head;
  for (const auto& h : g.head) head += (head.empty() ? "" : ", ") + h;
  if (!head.empty()) out += "  (" + head + ")";
  if (!g.simulated.empty()) out += "  [simulated: " + g.simulated + "]";
  out += "\n";
  std::vector<Line> top, sm;
  for (const DrawLevel& l : g.per_sm) sm.push_back({l.label, l.text});
  if (!g.gpc_text.empty()) top.push_back({"GPCs", g.gpc_bound + g.gpc_text});
  const size_t sm_index = sm.empty() ? SIZE_MAX : top.size();  // where the SM's subtree goes
  if (!sm.empty()) top.push_back({"each SM", ""});
  for (const DrawLevel& l : g.shared) top.push_back({l.label, l.text});
  size_t width = 0;
  for (const auto& l : top) width = std::max(width, l.label.size());
  for (size_t i = 0; i < top.size(); ++i) {
    const bool last = i + 1 == top.size();
    out += std::string(last ? "└── " : "├── ") + top[i].label;
    if (i == sm_index) {
      out += "\n";
      size_t w = 0;
      for (const auto& l : sm) w = std::max(w, l.label.size());
      emit(out, last ? "    " : "│   ", sm, w);
      continue;
    }
    out += std::string(width - top[i].label.size(), ' ') + "  " + top[i].text + "\n";
  }
  return out;
}

std::string draw_topology_text(const toml::table& doc) { return draw_text(gpu_drawing(doc)); }

}  // namespace memtopo::host
