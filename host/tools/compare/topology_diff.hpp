// `memtopo diff`: two topology files compared key by key (docs/host.md, "memtopo diff").
// Discrete values (integers, strings, booleans) must be equal; floating-point values (latencies,
// rates, fractions) within a relative tolerance, since two runs of one GPU never agree exactly.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <toml++/toml.h>

#include "tools/compare/key_policy.hpp"

namespace memtopo::host {

struct DiffOptions {
  // Per key: its class, whether it varies, its tolerance (key_policy.hpp). Two floats a, b are
  // equal when |a - b| <= tolerance_percent / 100 * max(|a|, |b|); 3 % by default: the
  // project's repeatability bar for three runs of one GPU.
  KeyPolicy policy;
  // Element tables to compare ("l2"); empty: all. Probes are then limited to those that
  // measured a key of these tables in either file.
  std::vector<std::string> only;
  // Where both files are of one GPU model the fleet's table lists, its measured spreads have
  // widened the policy's tolerances (as memtopo fleet's): that model, for the output.
  std::string spreads_model;
};

// A DiffOptions the two files cannot honour (--only names a table neither file has).
struct DiffError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class DiffKind {
  value,  // the values differ (beyond the tolerance for floats)
  bound,  // the values agree, their bounds do not (exact vs at_least)
  type,   // different kinds of value (integer vs string, array vs scalar)
};
const char* diff_kind_name(DiffKind kind);

struct KeyDifference {
  std::string key;  // "l2.latency_cycles"
  nlohmann::json a, b;
  std::string a_bound, b_bound;  // "exact", "at_least", "at_most" ([provenance]; exact without one)
  DiffKind kind = DiffKind::value;
  // (b - a) / |a| in percent, for numbers (arrays of equal length: the element that changed
  // most); none where a is 0 or the values are not numbers.
  std::optional<double> change_percent;
  // Why it does not count: "identity", "setting", "configuration", "varies" (KeyRule) or "method
  // changed (probe 1 -> 2)" (key_policy.hpp); "" when it counts.
  std::string reason;
};

// A probe whose version or status differs, or that only one file ran (nullopt on the other side).
struct ProbeDifference {
  std::string probe;  // "plugin/l2-size"
  std::optional<std::string> a_version, b_version, a_status, b_status;
  // The options each run gave the probe other than its defaults ([probes."..".options]): the
  // object, null where none.
  nlohmann::json a_options, b_options;
};

// A key one file has and the other lacks.
struct OneSidedKey {
  std::string key;  // "l2.far_latency_cycles"
  nlohmann::json value;
  std::string bound;
  // Why the other file has no value, from its probe's [probes."..".absent] ("" if not said).
  std::string absent_reason;
};

struct TopologyDiff {
  double tolerance_percent = 3;
  std::string spreads_model;  // DiffOptions::spreads_model
  size_t compared = 0;  // keys present in both files
  std::vector<KeyDifference> differences;
  // Differences in keys whose class or profile rule says they do not count: shown, not counted.
  std::vector<KeyDifference> not_counted;
  std::vector<OneSidedKey> only_in_a, only_in_b;
  std::vector<std::string> tables_only_in_a, tables_only_in_b;  // element tables wholly in one ("tma")
  std::map<std::string, size_t> table_sizes;  // keys of each table wholly in one file, every key counted
  std::vector<ProbeDifference> probes;

  // Nothing differs: no value, bound or type, no key in one file only, no probe version or status.
  bool equal() const;
};

// Compares the element tables (everything but [meta], [provenance], [probes], [sim]) and
// [probes] of two topologies. Throws DiffError for an --only table neither file has.
TopologyDiff diff_topologies(const toml::table& a, const toml::table& b, const DiffOptions& options = {});

// What the header shows of one file: where it came from, never part of the comparison.
struct DiffSide {
  std::string file;     // as named on the command line
  nlohmann::json meta;  // its [meta] table
  std::string device_name;  // model_name(): [device] name, else [meta] device_name
};
DiffSide diff_side(const std::string& file, const toml::table& doc);
// The GPU model a topology names: [device] name where device-info ran, else [meta] device_name.
std::string model_name(const toml::table& doc);

// The aligned text report (docs/host.md shows one) and the --format json object.
std::string render_diff_text(const TopologyDiff& diff, const DiffSide& a, const DiffSide& b);
// Arrays of integers of one length (indices, counts: which partition each SM is near): how
// many entries differ, since a percentage of an index means nothing; -1 for anything else.
long changed_entries(const nlohmann::json& a, const nlohmann::json& b);
// "3 of 132 entries changed", or empty where changed_entries is -1.
std::string changed_entries_text(const nlohmann::json& a, const nlohmann::json& b);
// Keys in a fixed order ("equal" first), for people reading it too.
nlohmann::ordered_json diff_to_json(const TopologyDiff& diff, const DiffSide& a, const DiffSide& b);

}  // namespace memtopo::host
