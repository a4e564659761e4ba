#include "topology/base/text_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace memtopo::host {

std::string shown_number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (std::isfinite(v) && s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string shown_value(const nlohmann::json& v) {
  if (v.is_number_float()) return shown_number(v.get<double>());
  if (!v.is_array()) return v.dump();
  // Whole elements up to about 40 characters, then how many there are: a table cell stays short.
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string element = shown_value(v[i]);
    if (i > 0 && s.size() + element.size() > 36) return s + ", ... " + std::to_string(v.size()) + " values]";
    s += (i ? ", " : "") + element;
  }
  return s + "]";
}

std::string shown_percent(double p) {
  char buf[40];
  std::snprintf(buf, sizeof buf, std::fabs(p) >= 0.1 ? "%+.1f %%" : "%+.2g %%", p);
  return buf;
}

std::string aligned(const std::vector<std::vector<std::string>>& rows, size_t indent) {
  std::vector<size_t> width;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent, ' ');
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + (c + 1 < row.size() ? std::string(width[c] - row[c].size() + 2, ' ') : "");
    out += line + "\n";
  }
  return out;
}

namespace {

// The line's width: every column but the last padded, the last as wide as its widest cell.
size_t line_width(const std::vector<size_t>& width, size_t indent) {
  size_t w = indent;
  for (size_t c = 0; c < width.size(); ++c) w += width[c] + (c + 1 < width.size() ? 2 : 0);
  return w;
}

// A cell's lines within `width`: broken at spaces, a word wider than the column after a
// '/', '-', '_', '.' or ',' (a path, a key), else whole: never inside an escape such as
// "\u202e" that terminal_text wrote.
std::vector<std::string> cell_lines(const std::string& cell, size_t width) {
  std::vector<std::string> out;
  const std::string text = wrapped_lines(cell, 0, width);
  size_t from = 0;
  while (true) {
    const size_t end = text.find('\n', from);
    std::string line = text.substr(from, end == std::string::npos ? std::string::npos : end - from);
    while (line.size() > width) {
      const size_t cut = line.find_last_of("/-_.,", width - 1);
      if (cut == std::string::npos || cut == 0) break;
      out.push_back(line.substr(0, cut + 1));
      line = line.substr(cut + 1);
    }
    out.push_back(line);
    if (end == std::string::npos) return out;
    from = end + 1;
  }
}

}  // namespace

std::string aligned_within(const std::vector<std::vector<std::string>>& rows, size_t indent, size_t width) {
  constexpr size_t kNarrowest = 16;
  std::vector<size_t> w;
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) {
      if (w.size() <= c) w.push_back(0);
      w[c] = std::max(w[c], row[c].size());
    }
  if (line_width(w, indent) <= width) return aligned(rows, indent);
  // The widest column one character narrower at a time: the columns meet at one width rather
  // than one of them losing everything.
  while (line_width(w, indent) > width) {
    size_t widest = 0;
    for (size_t c = 1; c < w.size(); ++c)
      if (w[c] > kNarrowest && (widest == 0 || w[c] > w[widest])) widest = c;
    if (widest == 0) break;  // every column at its narrowest: the line stays wider
    --w[widest];
  }
  std::string out;
  for (const auto& row : rows) {
    std::vector<std::vector<std::string>> parts;
    size_t height = 1;
    for (size_t c = 0; c < row.size(); ++c) {
      parts.push_back(c == 0 ? std::vector<std::string>{row[c]} : cell_lines(row[c], w[c]));
      height = std::max(height, parts.back().size());
    }
    for (size_t l = 0; l < height; ++l) {
      std::string line(indent, ' ');
      for (size_t c = 0; c < parts.size(); ++c) {
        const std::string text = l < parts[c].size() ? parts[c][l] : "";
        line += text + (c + 1 < parts.size() ? std::string(w[c] > text.size() ? w[c] - text.size() + 2 : 2, ' ') : "");
      }
      out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    }
  }
  return out;
}

std::string wrapped_lines(const std::string& text, size_t hanging, size_t width) {
  std::string out;
  size_t from = 0;
  for (bool first = true;; first = false) {
    const std::string prefix(first ? 0 : hanging, ' ');
    const size_t room = width > prefix.size() ? width - prefix.size() : 1;
    if (text.size() - from <= room) return out + prefix + text.substr(from);
    // The last space that leaves the line within `room`, else the first one after it.
    size_t cut_at = text.rfind(' ', from + room);
    if (cut_at == std::string::npos || cut_at <= from) cut_at = text.find(' ', from + room);
    if (cut_at == std::string::npos) return out + prefix + text.substr(from);
    const std::string line = prefix + text.substr(from, cut_at - from);
    out += line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
    from = text.find_first_not_of(' ', cut_at);
    if (from == std::string::npos) return out;
  }
}

}  // namespace memtopo::host
