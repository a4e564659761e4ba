// The host's one mapping from its presentations' roles to plugin keys (host/data/key_map.toml,
// docs/key-map.md): the summary's known key parts, and the keys the Accel-Sim export and the
// drawing read. Code names roles; only the data file names keys.
#pragma once

#include <string>
#include <vector>

namespace memtopo::host {

struct KnownKey {
  std::string part;    // the key less its element: "size_bytes"
  std::string label;   // "" : the value alone
  std::string prefix;  // before the value ("+" for a penalty)
  std::string without_size;  // the label where the element has no size ("latency"); "": label
};

// [[summary.known]]: the key parts the summary shows first, in order.
const std::vector<KnownKey>& summary_known_keys();

// The key or element a role maps to: mapped("accel_sim.keys", "l2_partitions") is
// "l2.partitions". A role the file lacks is a programming error (std::logic_error), caught by
// the tests that run every presentation.
const std::string& mapped(const std::string& section, const std::string& role);

// [vocabulary] cache_procedure: the key parts the SDK's cache procedure writes for any element.
const std::vector<std::string>& cache_procedure_parts();

}  // namespace memtopo::host
