#include "run/running/plot_hints.hpp"


#include <nlohmann/json.hpp>

#include "topology/document/document.hpp"

namespace memtopo::host {
namespace {

const char* kind_name(int kind) {
  switch (kind) {
    case MT_PLOT_HEATMAP: return "heatmap";
    case MT_PLOT_BARS: return "bars";
    case MT_PLOT_PANELS: return "panels";
    default: return "lines";
  }
}

}  // namespace

std::string write_plot_hints(const std::filesystem::path& dir, const ProbeInfo& probe) {
  if (probe.plots.empty()) return "";
  const auto file = dir / "plots.json";
  std::error_code ec;
  if (std::filesystem::exists(file, ec)) return "";
  nlohmann::json plots = nlohmann::json::array();
  for (const PlotSpec& p : probe.plots)
    plots.push_back({{"series", p.series}, {"kind", kind_name(p.kind)}, {"x", p.x}, {"y", p.y}, {"value", p.value},
                     {"group", p.group}, {"panel", p.panel}, {"annotate", p.annotate}, {"labels", p.labels},
                     {"marks", p.marks}});
  try {
    write_atomically(file, nlohmann::json{{"probe", probe.name}, {"plots", plots}}.dump(1) + "\n");
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace memtopo::host
