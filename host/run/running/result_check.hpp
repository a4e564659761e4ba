// The one check of a stored result: what a probe hands the host through put_result and what
// --resume reads back from a journal pass the same rules, so a record the output would refuse
// never gets in (docs/host.md, "Guarantees").
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "topology/plugins/registry.hpp"
#include "run/running/runner.hpp"

namespace memtopo::host {

// Why `rec` may not be stored as a result of `probe` after `stored_before` (nullopt: it may):
// a key the probe does not provide, a key stored twice, a type other than the declared one, a
// value its key's unit forbids (negative sizes, NaN), a confidence outside [0, 1], an unknown
// bound. An integer (array) where a float (array) is declared is converted in place, as a
// config file's integer is for a float option.
std::optional<std::string> check_result(const ProbeInfo& probe, ResultRecord& rec,
                                        const std::vector<ResultRecord>& stored_before);

// Why `key` may not be recorded absent by `probe` (put_absent): a key it does not provide,
// one stored or recorded absent before, or an empty reason.
std::optional<std::string> check_absent(const ProbeInfo& probe, const std::string& key, const std::string& reason,
                                        const std::vector<ResultRecord>& stored,
                                        const std::map<std::string, std::string>& absent_before);

// The same for a whole outcome read back (a journal record): its duration, every result and
// every absent key.
std::optional<std::string> check_outcome(const ProbeInfo& probe, ProbeOutcome& outcome);

// The reason recorded for a declared key that a probe which keeps results neither stored nor
// recorded absent (a probe built for ABI 3.5 or older, or one that leaves a key out unsaid).
extern const char* const kNoReasonGiven;

// Gives every declared key of an outcome that keeps results a value or an absent entry: a key
// left unsaid is absent with the probe's reason where it was not determinable, else with
// kNoReasonGiven. Other outcomes keep neither.
void account_for_declared_keys(const ProbeInfo& probe, ProbeOutcome& outcome);

}  // namespace memtopo::host
