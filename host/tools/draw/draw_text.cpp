// `memtopo draw` without -o: the GPU at a glance in the terminal, as lstopo-no-graphics draws a
// CPU machine: the model of draw_model.cpp as a tree whose nesting shows sharing, the labels of
// one level in one column, values wrapped onto continuation lines so that no line is wider than
// kDrawColumns display columns (a 241-column L2 line wrapped wherever the terminal cut it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tools/draw/draw.hpp"
#include "topology/base/text_encoding.hpp"
#include "tools/draw/draw_internal.hpp"

namespace memtopo::host {
namespace {

struct TextNode {
  std::string label;
  std::vector<std::string> parts;
  bool part_per_line = false;  // strip rows: one part a line
  std::vector<TextNode> children;
};

TextNode text_node(const DrawNode& n) {
  TextNode t{n.label, n.parts, false, {}};
  for (const DrawNode& c : n.children) t.children.push_back(text_node(c));
  return t;
}

// `s` in pieces of at most `width` columns, broken at spaces where it can be.
std::vector<std::string> pieces(std::string s, size_t width) {
  std::vector<std::string> out;
  while (display_columns(s) > width) {
    const size_t fit = prefix_fitting(s, width);
    const size_t space = s.rfind(' ', fit);
    const size_t cut = space != std::string::npos && space > 0 && space <= fit ? space : fit;
    out.push_back(s.substr(0, cut));
    s = s.substr(cut + (cut < s.size() && s[cut] == ' ' ? 1 : 0));
  }
  out.push_back(s);
  return out;
}

// Parts joined by `sep` into lines of at most `width` columns; a line that more parts follow
// ends with `tail` (the separator's comma).
std::vector<std::string> wrap(const std::vector<std::string>& parts, size_t width, const std::string& sep,
                              const std::string& tail, bool part_per_line) {
  std::vector<std::string> lines;
  std::string line;
  for (const std::string& part : parts) {
    const auto split = pieces(part, width - tail.size());
    for (size_t k = 0; k < split.size(); ++k) {
      // The pieces of one part follow each other on lines of their own, with no separator.
      if (k > 0 || (!line.empty() && (part_per_line || display_columns(line + sep + split[k] + tail) > width))) {
        if (!line.empty()) lines.push_back(line + (k > 0 ? "" : tail));
        line.clear();
      }
      line += (line.empty() ? "" : sep) + split[k];
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::string spaces(size_t n) { return std::string(n, ' '); }

// Tree lines: "├── label  values" with the labels of one level in one column, continuation
// lines under the values, the branch line carried on where the node has children.
void emit(std::string& out, const std::string& indent, const std::vector<TextNode>& nodes) {
  size_t label_w = 0;
  for (const TextNode& n : nodes) label_w = std::max(label_w, display_columns(n.label));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const TextNode& n = nodes[i];
    const bool last = i + 1 == nodes.size();
    const std::string child_indent = indent + (last ? "    " : "│   ");
    const std::string head = indent + (last ? "└── " : "├── ") + n.label;
    const size_t value_col = display_columns(indent) + 4 + label_w + 2;
    const std::string cont =
        child_indent + (n.children.empty() ? " " : "│") + spaces(value_col - display_columns(child_indent) - 1);
    const size_t width = kDrawColumns > value_col + 20 ? kDrawColumns - value_col : 20;
    const auto lines = wrap(n.parts, width, ", ", ",", n.part_per_line);
    for (size_t k = 0; k < lines.size(); ++k)
      out += (k == 0 ? head + spaces(value_col - display_columns(head)) : cont) + lines[k] + "\n";
    if (lines.empty()) out += head + "\n";
    emit(out, child_indent, n.children);
  }
}

char cell_char(int64_t v) {
  static const char* digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  return v < 0 ? '?' : v < 62 ? digits[v] : '+';
}

// Rows of one character per SM, 10 to a group, 70 to a row.
std::vector<std::string> strip_rows(const std::vector<int64_t>& cells) {
  constexpr size_t kGroup = 10, kRow = 70;
  std::vector<std::string> rows;
  for (size_t i = 0; i < cells.size(); ++i) {
    if (i % kRow == 0) rows.emplace_back();
    else if (i % kGroup == 0) rows.back() += ' ';
    rows.back() += cell_char(cells[i]);
  }
  return rows;
}

// A strip that splits the SMs as an earlier one: said so, with the SMs it places that the
// earlier one does not ("SMs 124-131: group 0").
std::vector<std::string> same_split_parts(const DrawStrip& s, const DrawStrip& earlier) {
  std::vector<std::string> parts{"the " + earlier.label + "s' split where both know the SM"};
  std::map<int64_t, std::vector<int64_t>> placed;
  for (size_t i = 0; i < s.cells.size(); ++i)
    if (s.cells[i] >= 0 && (i >= earlier.cells.size() || earlier.cells[i] < 0)) placed[s.cells[i]].push_back(int64_t(i));
  for (const auto& [value, sms] : placed)
    parts.push_back("SMs " + draw::sm_list(sms) + " (no " + earlier.label + " known): " + s.label + " " + std::to_string(value));
  return parts;
}

// The SMs with their map below: a strip per grouping.
TextNode sm_map(const GpuDrawing& g) {
  TextNode map = text_node(g.sms);
  if (map.label.empty()) map.label = "SMs";
  if (g.strip_sms >= int64_t(draw::kStripCells)) map.parts.push_back("the first " + std::to_string(g.strip_sms) + " mapped");
  for (const DrawStrip& s : g.strips) {
    const auto earlier = std::find_if(g.strips.begin(), g.strips.end(), [&](const DrawStrip& e) { return e.label == s.same_as; });
    if (earlier != g.strips.end()) map.children.push_back({s.label, same_split_parts(s, *earlier), false, {}});
    else map.children.push_back({s.label, strip_rows(s.cells), true, {}});
  }
  return map;
}

// A rung's cycles or ns: one decimal, or past a million an exponent (1e+308), so that its
// unit stays in the column (docs/host.md, "Numbers keep their units").
std::string rung_number(double v) { return draw::printf_text(std::fabs(v) < 1e6 ? "%.1f" : "%.3g", v); }

TextNode ladder(const GpuDrawing& g) {
  TextNode t{"latencies", {"load to use"}, false, {}};
  if (g.sm_clock_mhz > 0) t.parts.push_back(draw::printf_text("ns at the %.0f MHz SM clock", g.sm_clock_mhz));
  for (const DrawRung& r : g.ladder) {
    const std::string cycles = r.mark + rung_number(r.cycles);
    std::string v = spaces(cycles.size() < 8 ? 8 - cycles.size() : 0) + cycles + " cyc";
    if (g.sm_clock_mhz > 0) {
      const std::string ns = rung_number(r.cycles / (g.sm_clock_mhz / 1000));  // no overflow near DBL_MAX
      v += spaces(ns.size() < 9 ? 9 - ns.size() : 0) + ns + " ns";
    }
    t.children.push_back({r.label, {v}, false, {}});
  }
  return t;
}

TextNode rates(const GpuDrawing& g) {
  TextNode t{"bandwidths", {"over the whole GPU"}, false, {}};
  for (const DrawRate& r : g.rates)
    t.children.push_back({r.label, {r.mark + draw::rate_text(r.bytes_per_second) + (r.note.empty() ? "" : " (" + r.note + ")")}, false, {}});
  return t;
}

}  // namespace

std::string draw_text(const GpuDrawing& g) {
  std::vector<std::string> head_parts{g.title};
  std::string head;
  for (const auto& h : g.head) head += (head.empty() ? "" : ", ") + h;
  if (!head.empty()) head_parts.push_back("(" + head + ")");
  if (!g.simulated.empty()) head_parts.push_back("[simulated: " + g.simulated + "]");
  std::string out;
  for (const std::string& line : wrap(head_parts, kDrawColumns, "  ", "", false)) out += line + "\n";
  std::vector<TextNode> top;
  for (const DrawNode& f : g.facts) top.push_back(text_node(f));
  if (!g.sms.label.empty() || !g.strips.empty()) top.push_back(sm_map(g));
  if (!g.per_sm.empty()) {
    TextNode sm{"each SM", {"its own copy of what it holds"}, false, {}};
    for (const DrawNode& n : g.per_sm) sm.children.push_back(text_node(n));
    top.push_back(sm);
  }
  for (const DrawNode& n : g.shared) top.push_back(text_node(n));
  if (!g.ladder.empty()) top.push_back(ladder(g));
  if (!g.rates.empty()) top.push_back(rates(g));
  for (const DrawNode& n : g.extras) top.push_back(text_node(n));
  TextNode legend{"legend", {}, false, {}};
  for (const auto& [mark, meaning] : g.legend) legend.children.push_back({mark, {meaning}, false, {}});
  top.push_back(legend);
  emit(out, "", top);
  return out;
}

std::string draw_topology_text(const toml::table& doc) { return draw_text(gpu_drawing(doc)); }

}  // namespace memtopo::host
