// A probe's outcome as one JSON object: the message a worker process sends the host, and a
// record of the run journal (journal.hpp).
#pragma once

#include <nlohmann/json.hpp>

#include "run/running/runner.hpp"

namespace memtopo::host {

nlohmann::json outcome_to_json(const ProbeOutcome& o);
// Throws std::runtime_error when the record is malformed.
ProbeOutcome outcome_from_json(const nlohmann::json& j);

}  // namespace memtopo::host
