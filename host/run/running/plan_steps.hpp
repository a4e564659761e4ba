// What the runners (runner.cpp: one probe at a time; parallel_runner.cpp: several workers)
// share about one plan step. Internal to memtopo_run.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "run/running/runner.hpp"

namespace memtopo::host {

// The step's outcome when it does not run: taken from the journal, interrupted, or skipped
// (a need the device does not meet, an input its provider did not deliver); nullopt when it
// runs. `finished` and `results` hold what the probes before it left.
std::optional<ProbeOutcome> outcome_without_running(const PlanStep& step, const Plan& plan, const DeviceFacts& facts,
                                                    const RunSettings& settings,
                                                    const std::map<std::string, ProbeOutcome>& finished,
                                                    const std::map<std::string, ResultRecord>& results);
// Whether `outcome` is the journal's (settings.already_done): no observer or journal hook sees it.
bool from_journal(const ProbeOutcome& outcome, const RunSettings& settings);

}  // namespace memtopo::host
