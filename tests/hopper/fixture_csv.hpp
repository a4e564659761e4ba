// Reads a series that --raw-dir wrote (a header line, then rows of numbers) from
// tests/hopper/fixtures/.
#pragma once

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace hopper_fixture {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<double>> rows;
  size_t column(const std::string& name) const {
    for (size_t i = 0; i < columns.size(); ++i)
      if (columns[i] == name) return i;
    throw std::runtime_error("no column " + name);
  }
};

inline Table read(const std::string& name) {
  const std::string path = std::string(MEMTOPO_SOURCE_DIR) + "/tests/hopper/fixtures/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Table t;
  std::string line, cell;
  std::getline(in, line);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  for (std::istringstream header(line); std::getline(header, cell, ',');) t.columns.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<double> row;
    for (std::istringstream cells(line); std::getline(cells, cell, ',');) row.push_back(std::stod(cell));
    if (row.size() == t.columns.size()) t.rows.push_back(row);
  }
  return t;
}

}  // namespace hopper_fixture
