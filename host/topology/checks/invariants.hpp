// The relations between result keys that plugins declare (mt_invariant_desc), checked on a
// topology: at the end of `memtopo run` (warnings) and by `memtopo validate` (errors). The host
// knows no key: each relation names its two keys and says why they agree (docs/format.md,
// "Contradictions").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/plugins/registry.hpp"

namespace memtopo::host {

struct Invariant {
  InvariantSpec spec;
  std::string probe;  // the probe that declared it
};

// Every relation the probes declare, in probe-name order.
std::vector<Invariant> invariants_of(const std::vector<const ProbeInfo*>& probes);
std::vector<Invariant> invariants_of(const Registry& registry);

// "l2.partitions equals the element count of l2.partition_sm_counts" (memtopo list -v).
std::string invariant_text(const InvariantSpec& spec);

struct Contradiction {
  Invariant invariant;
  std::string text;  // names both keys and their values, then why they must agree
};

// The relations `doc` (a topology as JSON) breaks. One whose key is absent, of another type than
// its side takes, or a bound (provenance `bound` not "exact") is not checked.
std::vector<Contradiction> find_contradictions(const nlohmann::json& doc, const std::vector<Invariant>& invariants);

}  // namespace memtopo::host
