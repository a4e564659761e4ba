// The one check of a stored result: what a probe hands the host through put_result and what
// --resume reads back from a journal pass the same rules, so a record the output would refuse
// never gets in (docs/host.md, "Guarantees").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "memtopo_host/registry.hpp"
#include "memtopo_host/runner.hpp"

namespace memtopo::host {

// Why `rec` may not be stored as a result of `probe` after `stored_before` (nullopt: it may):
// a key the probe does not provide, a key stored twice, a type other than the declared one, a
// value its key's unit forbids (negative sizes, NaN), a confidence outside [0, 1], an unknown
// bound. An integer (array) where a float (array) is declared is converted in place, as a
// config file's integer is for a float option.
std::optional<std::string> check_result(const ProbeInfo& probe, ResultRecord& rec,
                                        const std::vector<ResultRecord>& stored_before);

// The same for a whole outcome read back (a journal record): its duration and every result.
std::optional<std::string> check_outcome(const ProbeInfo& probe, ProbeOutcome& outcome);

}  // namespace memtopo::host
