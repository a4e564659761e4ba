// `memtopo fleet`: many topologies of one or more GPU models compared key by key, to find the
// GPU that differs from its siblings (docs/fleet.md). Discrete values must agree with the
// group's most common one; continuous values are compared with the group's median and its
// robust spread (the median absolute deviation), and flagged only where they are off by more
// than the key's tolerance and by more than the spread allows. Key classes and tolerances come
// from the KeyPolicy that memtopo diff uses too.
#pragma once

#include <cstdint>
#include <optional>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tools/compare/key_policy.hpp"
#include "topology/document/summary.hpp"

namespace memtopo::host {

// One value of a topology, flattened: "l2.size_bytes" -> 26214400 with its bound, the probe
// that measured it and the class its provenance records (kept small: a fleet holds thousands).
struct FlatValue {
  nlohmann::json value;
  std::string bound = "exact";  // exact, at_least, at_most
  // "plugin/l2-size"; "" without provenance. A view of one copy per name for the process
  // (fleet_load.cpp): ten thousand members share a few dozen names.
  std::string_view probe;
  KeyDeclared declared;         // class and varies, as [provenance] records them
};

// One GPU's topology as the fleet sees it.
struct FleetMember {
  std::string file;
  std::string host;    // [meta].host
  std::string created_utc;  // [meta].created_utc: the newest of one GPU's files is counted
  std::string device;  // [meta].device_label, else device_spec ("cuda:3")
  std::string device_spec;  // [meta].device_spec: how the run named the device ("cuda:0", "sim:FILE")
  std::string backend;      // [meta].backend: "cuda" or "sim"
  std::string uuid;    // [device].uuid, "" for a simulated GPU
  std::string model;   // "NVIDIA H100 80GB HBM3" ([device].name)
  std::string group;   // model, compute capability, SMs, memory: "NVIDIA H100 80GB HBM3, cc 9.0, 132 SMs, 80 GiB"
  // What measured it: the build and the probes run ("memtopo 0.1.0 (1a2b3c4d5e6f), 57 probes");
  // files of one model that differ in it are compared apart (like with like).
  std::string like;
  std::vector<std::pair<std::string, FlatValue>> values;   // element keys, sorted by key
  std::vector<std::pair<std::string, std::string>> probes;  // probe -> "version status", sorted
  // The options a probe ran with other than its defaults ([probes."..".options]), as the body
  // of a config's [probes."<name>"] table (`name = value` lines); probes without any absent.
  std::vector<std::pair<std::string, std::string>> probe_options;
  // Keys a probe recorded absent ([probes."..".absent]) -> why, sorted by key.
  std::vector<std::pair<std::string, std::string>> absent;
  std::vector<std::string> state_warnings;  // from [meta.gpu_state]: throttling, not idle, ...

  const FlatValue* find(const std::string& key) const;
  std::string absent_reason(const std::string& key) const;  // "" where the file gives none
};

// Reads one topology file (TOML or JSON as `memtopo run` writes them); throws
// std::runtime_error "FILE: why" for a file that is no topology.
FleetMember read_fleet_member(const std::string& file);
// The same for a file's `text` already read (JSON when `file` ends in .json, else TOML).
FleetMember fleet_member_of(const std::string& file, const std::string& text);
// A topology file as one column of the multi-GPU summary (summary.hpp): its values with their
// bounds and its tally of probe statuses ("41 ok, 6 not_determinable"); a file that cannot be
// read gives a column without values whose tally says why.
SummaryColumn summary_column_of(const std::string& file, const std::string& label);

namespace cli {
// Rank 0 of an MPI run of several ranks: every rank's files (`files`) compared, the table
// printed and written into `dir` as fleet.txt and fleet.json; the exit status (1: flagged).
int write_fleet_summary(const std::filesystem::path& dir, const std::vector<std::string>& files);
}  // namespace cli
// How summary_column_of's tally begins for a file it could not read or that the schema refuses;
// the reason follows.
inline constexpr std::string_view kUnreadable = "unreadable: ";
// The folder under a fleet's folder where `fleet --confirm` writes what it measured again.
constexpr const char* kConfirmFolder = "memtopo-confirm";

// The topology files named: each FILE, each *.toml / *.json under each DIR (recursively, less
// *.partial.toml, memtopo's own fleet outputs and kConfirmFolder), in name order. Read in parallel; those that
// cannot be read are listed in *errors. Each GPU is counted once: a file named twice, and all
// but the newest file of one device UUID, are dropped with a note in *notes (when given).
std::vector<FleetMember> read_fleet(const std::vector<std::string>& paths, std::vector<std::string>* errors,
                                    std::vector<std::string>* notes = nullptr);

// A key of one GPU that differs from its group (or from the reference).
struct FleetFinding {
  std::string key;           // "l2.size_bytes", or "probe plugin/l2-size"
  std::string kind;          // value, bound, missing, extra, probe
  nlohmann::json value;      // this GPU's (null where missing)
  nlohmann::json expected;   // the group's median or most common value, or the reference's
  std::optional<double> deviation_percent;  // (value - expected) / |expected|, numbers only
  std::string against = "group";  // group or reference
  bool counts = true;        // false: reported, not flagged; `not_flagged` says why
  // Why a difference is reported and not flagged: "varies" (the key is known to vary between
  // runs), "no majority" (no value is held by more than half the group), "structure: ..." (a
  // list of another length: more or fewer levels found), "structure" (a key that counts or
  // names what was found), "comes and goes" (present on some GPUs only, its probe ok on all,
  // not declared always written), "unrated" (a float whose tolerance no table, profile or
  // probe rates for the model). Empty where it counts.
  std::string not_flagged;
  // A list is judged by its worst element: its index, and that element's value and expected
  // value (deviation_percent is the element's). Unset for scalars and whole-list differences.
  std::optional<size_t> element;
  nlohmann::json element_value, element_expected;
  // With `fleet --confirm`: what measuring again said ("confirmed in 2 of 2 measurements: ...",
  // "not reproduced: ..."); empty where the finding was not measured again.
  std::string confirmation;
  // A missing key: why its file has no value, as its probe recorded it ("" where it did not).
  std::string absent_reason;
};

struct FleetGpu {
  size_t member = 0;  // index into FleetReport::members
  std::vector<FleetFinding> findings;
  bool flagged() const;
};

struct FleetGroup {
  std::string name;
  std::vector<size_t> members;  // every member of this model
  size_t keys_compared = 0;
  // A continuous key whose values spread (for the report's plots): per member of the group
  // its value (null where it has none), and the median.
  struct Series {
    std::string key;
    std::vector<nlohmann::json> values;
    double median = 0;
  };
  std::vector<Series> series;
  // Keys that describe how each GPU was built (MT_KEY_CONFIGURATION: floor sweeping) and differ
  // within the group: each value with the members that have it. Shown, never flagged.
  struct Variant {
    nlohmann::json value;
    std::vector<size_t> members;
  };
  struct Configuration {
    std::string key;
    std::vector<Variant> variants;
  };
  std::vector<Configuration> configuration;
};

struct FleetOptions {
  KeyPolicy policy;
  // A continuous value is flagged only where it lies more than this many robust standard
  // deviations (1.4826 x the median absolute deviation) from the median.
  double spread_factor = 5;
  std::optional<FleetMember> reference;  // --reference: every GPU is compared with it too
  // The shipped least tolerances of each model (shipped_spreads) widen the policy's.
  bool shipped_spreads = true;
};

// Where the probe that measured `key` has another major version in `b` than in `a`: "method
// changed (global-throughput/streams 1 -> 2)" (key_policy.hpp); else "".
std::string method_change(const FleetMember& a, const FleetMember& b, const std::string& key);

// The shipped table's entry for a GPU model (host/data/fleet_spreads.toml, from the measured
// spreads of healthy GPUs' runs): each key it measured with its least tolerance. A table of at
// least kRatingMinGpus GPUs and kRatingMinRuns runs rates its keys (they may flag a GPU);
// a smaller one only widens tolerances.
struct ShippedSpreads {
  std::vector<std::pair<std::string, double>> least_tolerance_percent;
  size_t gpus = 0, runs = 0;
  bool rates() const;
};
constexpr size_t kRatingMinGpus = 4;
constexpr size_t kRatingMinRuns = 12;
// Empty for a model the table does not list.
const ShippedSpreads& shipped_spreads(const std::string& model);

struct FleetReport {
  std::vector<FleetMember> members;
  std::vector<FleetGroup> groups;
  std::vector<FleetGpu> gpus;  // one per member, same order
  double tolerance_percent = 3;
  double spread_factor = 5;
  size_t reference_keys_compared = 0;  // with --reference: the keys each GPU was compared on
  std::vector<std::string> notes;      // what was grouped apart, and why
  size_t flagged() const;
};

FleetReport compare_fleet(std::vector<FleetMember> members, const FleetOptions& options);

// The table (one row per GPU: host, device, UUID, ok or the keys that differ with value, group
// value and deviation), the --format json object and JUnit XML (one test case per GPU).
std::string render_fleet_text(const FleetReport& report);
nlohmann::ordered_json fleet_to_json(const FleetReport& report);
std::string render_fleet_junit(const FleetReport& report);

}  // namespace memtopo::host
