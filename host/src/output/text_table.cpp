#include "memtopo_host/text_table.hpp"

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

}  // namespace memtopo::host
