#include "run/running/result_check.hpp"

#include <algorithm>
#include <cmath>

namespace memtopo::host {

namespace {

bool conform_to_declaration(Value& v, mt_value_type declared) {
  if (v.type == declared) return true;
  if (declared == MT_VALUE_FLOAT && v.type == MT_VALUE_INT) {
    v = Value::of_float(static_cast<double>(v.i));
    return true;
  }
  if (declared == MT_VALUE_FLOAT_ARRAY && v.type == MT_VALUE_INT_ARRAY) {
    v.floats.assign(v.ints.begin(), v.ints.end());
    v.ints.clear();
    v.type = MT_VALUE_FLOAT_ARRAY;
    return true;
  }
  return false;
}

}  // namespace

std::optional<std::string> check_result(const ProbeInfo& probe, ResultRecord& rec,
                                        const std::vector<ResultRecord>& stored_before) {
  const std::string& k = rec.key;
  if (std::find(probe.provided.begin(), probe.provided.end(), k) == probe.provided.end())
    return k + " is not in the probe's provided keys";
  for (const auto& r : stored_before)
    if (r.key == k) return k + " was already stored by this probe";
  const KeySpec* spec = probe.key_spec(k);
  if (spec && !conform_to_declaration(rec.value, spec->type))
    return k + " is " + type_name(rec.value.type) + ", but " + probe.name + " declares it " + type_name(spec->type);
  rec.key_flags = spec ? spec->flags : 0;
  const auto role = probe.roles.find(k);
  rec.role = role != probe.roles.end() ? role->second : std::string();
  if (auto bad = check_value_for_key(k, rec.value)) return bad;
  if (!(rec.confidence >= 0 && rec.confidence <= 1)) return k + ": confidence must be in [0, 1]";
  if (rec.bound != MT_BOUND_EXACT && rec.bound != MT_BOUND_AT_LEAST && rec.bound != MT_BOUND_AT_MOST)
    return k + ": unknown bound " + std::to_string(static_cast<int>(rec.bound));
  if (!rec.verified.empty() && rec.verified != "counters" && rec.verified != "unverified")
    return k + ": verified must be \"counters\" or \"unverified\", not \"" + rec.verified + "\"";
  if (!(rec.counted_bytes >= 0 && std::isfinite(rec.counted_bytes)))
    return k + ": counted_bytes must be a number of bytes >= 0";
  return std::nullopt;
}

std::optional<std::string> check_absent(const ProbeInfo& probe, const std::string& key, const std::string& reason,
                                        const std::vector<ResultRecord>& stored,
                                        const std::map<std::string, std::string>& absent_before) {
  if (std::find(probe.provided.begin(), probe.provided.end(), key) == probe.provided.end())
    return key + " is not in the probe's provided keys";
  for (const auto& r : stored)
    if (r.key == key) return key + " was stored by this probe: a key is stored or absent";
  if (absent_before.count(key)) return key + " was already recorded absent by this probe";
  if (reason.empty()) return key + ": an absent key needs a reason";
  return std::nullopt;
}

std::optional<std::string> check_outcome(const ProbeInfo& probe, ProbeOutcome& outcome) {
  if (!(outcome.duration_s >= 0 && std::isfinite(outcome.duration_s)))
    return "duration_s must be a number of seconds >= 0";
  std::vector<ResultRecord> stored;
  for (auto& r : outcome.results) {
    if (auto bad = check_result(probe, r, stored)) return bad;
    stored.push_back(r);
  }
  std::map<std::string, std::string> absent;
  for (const auto& [key, reason] : outcome.absent_keys) {
    if (auto bad = check_absent(probe, key, reason, stored, absent)) return bad;
    absent[key] = reason;
  }
  return std::nullopt;
}

const char* const kNoReasonGiven = "not measured; the probe gave no reason";

void account_for_declared_keys(const ProbeInfo& probe, ProbeOutcome& outcome) {
  if (!keeps_results(outcome.status)) {
    outcome.absent_keys.clear();
    return;
  }
  for (const auto& key : probe.provided) {
    const bool stored = std::any_of(outcome.results.begin(), outcome.results.end(),
                                    [&](const ResultRecord& r) { return r.key == key; });
    if (stored) {
      outcome.absent_keys.erase(key);
      continue;
    }
    if (outcome.absent_keys.count(key)) continue;
    outcome.absent_keys[key] = outcome.status == Status::NotDeterminable && !outcome.reason.empty()
                                   ? outcome.reason
                                   : std::string(kNoReasonGiven);
  }
}

}  // namespace memtopo::host
