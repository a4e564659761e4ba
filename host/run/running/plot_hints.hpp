// How the report draws a probe's raw series, as the probe declares it (mt_series_desc): written
// beside the series as plots.json, so that the report needs no knowledge of any plugin.
#pragma once

#include <filesystem>

#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// Writes `dir`/plots.json for `probe` where it declares plots and the file is not there yet.
// Returns "" or what went wrong.
std::string write_plot_hints(const std::filesystem::path& dir, const ProbeInfo& probe);

}  // namespace memtopo::host
