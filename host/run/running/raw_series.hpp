// The raw series a probe hands over (mt_host_api::put_raw), written under --raw-dir: the
// runner checks the request, this writes the files. Not installed.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>

#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// Writes `series` of probe `p` to RAW_DIR/<probe, '/' as "__">/<series>.csv (a header of the
// column names, then one line per row) and the probe's plot hints (plots.json) beside it.
// Nothing when written, else what went wrong, naming the file; a plot-hints problem is only
// logged, the series being what was asked for.
std::optional<std::string> write_raw_series(const std::filesystem::path& raw_dir, const ProbeInfo& p,
                                            const char* series, const char* const* column_names, size_t columns,
                                            const double* data, size_t rows);

}  // namespace memtopo::host
