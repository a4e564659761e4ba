// The end of `memtopo run`: check the topology, write it (or its partial or fallback form),
// settle the journal, report. Not installed.
#pragma once

#include <string>

#include "topology/document/document.hpp"
#include "topology/base/output_file.hpp"
#include "run/output/resume.hpp"
#include "run/planning/run_request.hpp"

namespace memtopo::host::cli {

// Returns the exit status (docs/host.md, "Exit status").
// A --format value `run` refuses ("" when it is toml or json): the message names the formats.
std::string run_format_error(const std::string& value);

int finish(const RunRequest& a, const OutputTarget& out, const Plan& plan, const Meta& meta, const RunReport& report,
           const JournalState& js, const JournalRecorder& recorder);

}  // namespace memtopo::host::cli
