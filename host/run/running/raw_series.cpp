#include "run/running/raw_series.hpp"

#include <stdexcept>
#include <system_error>

#include <spdlog/spdlog.h>

#include "topology/base/csv.hpp"
#include "topology/document/document.hpp"
#include "topology/values/value.hpp"
#include "run/running/plot_hints.hpp"

namespace memtopo::host {

std::optional<std::string> write_raw_series(const std::filesystem::path& raw_dir, const ProbeInfo& p,
                                            const char* series, const char* const* column_names, size_t columns,
                                            const double* data, size_t rows) {
  std::string folder;  // "plugin/l1d-line" -> "plugin__l1d-line"
  for (char c : p.name) folder += c == '/' ? std::string("__") : std::string(1, c);
  const auto dir = raw_dir / folder;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec)
    if (const std::string e = write_plot_hints(dir, p); !e.empty()) spdlog::warn("{}: {}", p.name, e);
  const auto file = dir / (std::string(series) + ".csv");
  std::string text;
  for (size_t c = 0; c < columns; ++c) text += (c ? "," : "") + csv_field(column_names[c] ? column_names[c] : "");
  text += "\n";
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < columns; ++c) text += (c ? "," : "") + format_double(data[r * columns + c]);
    text += "\n";
  }
  try {
    if (ec) throw std::runtime_error("cannot write " + file.string() + ": " + ec.message());
    write_atomically(file, text);  // a new file renamed into place, never through a link
  } catch (const std::exception& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

}  // namespace memtopo::host
