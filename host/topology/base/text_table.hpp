// The plain-text tables memtopo prints (diff, fleet, compare, the run summary): values shortened for a cell,
// percentages with their sign, columns aligned.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace memtopo::host {

// Six significant digits; a float keeps a decimal point so that 33.0 does not read as an integer.
std::string shown_number(double v);
// A value for a table cell: floats as above, arrays cut at about 40 characters with their count.
std::string shown_value(const nlohmann::json& v);
// "+7.2 %", "-0.031 %".
std::string shown_percent(double p);
// Rows of cells, columns padded to their widest cell, two spaces apart, each line indented by
// `indent` (two under a heading of diff and fleet; none in the summary and compare).
std::string aligned(const std::vector<std::vector<std::string>>& rows, size_t indent = 2);

// The widest line memtopo's text output writes: a terminal beside an editor, no wrapping.
constexpr size_t kTextColumns = 120;
// As `aligned`, at most `width` columns where the cells allow: the widest columns but the
// first (the key) are narrowed, to 16 at least and one width where they meet, and a cell wider than its column
// continues on the lines below (broken at spaces, in a long word after '/', '-', '_', '.' or
// ','), nothing cut. Rows that fit are as `aligned`.
std::string aligned_within(const std::vector<std::vector<std::string>>& rows, size_t indent = 2,
                           size_t width = kTextColumns);
// `text` broken at spaces into lines of at most `width` columns, each line after the first
// indented by `hanging`; a word longer than a line stays whole.
std::string wrapped_lines(const std::string& text, size_t hanging, size_t width = kTextColumns);

// "1 GPU", "3 GPUs": a count and the noun that goes with it.
inline std::string counted(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace memtopo::host
