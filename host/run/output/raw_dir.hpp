// The raw-series folder of `memtopo run` (--raw-dir, else [run] raw_dir). Not installed.
#pragma once

#include <filesystem>

#include "topology/document/document.hpp"
#include "run/planning/run_choice.hpp"

namespace memtopo::host::cli {

// The folder created and checked writable before anything is measured (empty: none); a usage
// error names it otherwise.
std::filesystem::path prepare_raw_dir(const RunChoice& run);
// DIR/run.toml: the run that wrote the series (its topology's created_utc, host and
// device_spec), so that `memtopo report` takes them only with that topology. A file that
// cannot be written is a warning: the series are there all the same.
void write_raw_dir_identity(const std::filesystem::path& dir, const Meta& meta);

}  // namespace memtopo::host::cli
