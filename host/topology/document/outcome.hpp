// What a probe's run gave: its status, results and the keys it left without a value. The
// runner makes these; the topology document, the summary and the journal read them.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "memtopo/abi.h"
#include "topology/values/value.hpp"

namespace memtopo::host {

struct ResultRecord {
  std::string key;  // "l1d.line_bytes"
  Value value;
  double confidence = 1.0;
  mt_bound bound = MT_BOUND_EXACT;
  std::string note;
  std::string probe;
  uint32_t key_flags = 0;  // MT_KEY_* of the key as its probe declares it (provenance class)
  std::string role;        // what the key is, as its probe declares it (mt_key_role); "" none
  // How a second method checked the value (mt_result_info): "", "counters" or "unverified".
  std::string verified;
  double counted_bytes = 0;
  std::string verify_note;
};

// NotDeterminable: the probe measured, but the data cannot settle the value; unlike Failed
// and Skipped, the results it stored before are kept (and feed dependents).
enum class Status { Ok, Failed, Skipped, NotDeterminable };
const char* status_name(Status s);  // "ok", "failed", "skipped", "not_determinable"
// Whether a probe that ended with `s` keeps its results (ok and not determinable).
bool keeps_results(Status s);

struct ProbeOutcome {
  std::string probe;
  std::string version;  // the plugin's version
  Status status = Status::Skipped;
  std::string reason;   // why it failed, was skipped or could not determine; empty when ok
  double duration_s = 0;
  std::vector<ResultRecord> results;  // only for probes whose status keeps_results
  // The probe's declared keys without a value in `results`, and why (put_absent, or the host's
  // account_for_declared_keys): every declared key of a probe that keeps results is in one.
  std::map<std::string, std::string> absent_keys;
  // The options the run gave other values than the probe's defaults (the config's
  // [probes."<name>"]): the topology records them, so that `fleet --confirm` measures again
  // with the same experiment and files measured differently are not compared as alike.
  std::map<std::string, Value> options;
  // Skipped because a probe it needs failed (directly or down a chain of skips): counts as a
  // failure for the exit status, unlike skips for a declared reason.
  bool caused_by_failure = false;
  // Raw series (--raw-dir) the host could not write, each naming the file: the run's exit
  // status is then 1 (the results themselves are kept).
  std::vector<std::string> raw_write_errors;
};

}  // namespace memtopo::host
