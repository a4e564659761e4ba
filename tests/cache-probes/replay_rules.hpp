// How a replay round trip compares a plugin's keys, as the plugin declares it: each plugin
// folder may hold tests/replay.toml (docs/writing-a-probe.md, "Tests"); replay_compare.cpp
// reads every one and names no plugin or element itself.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace probetest {

struct ReplayRule {
  std::string keys;     // "mlp.*_cycles": a key, '*' for any run of characters
  std::string compare;  // "skip", "exact", "cycles", "relative" (a number), "each" (every value)
  double tolerance = 0;  // relative, for "relative" and "each"
  std::string why;       // for "skip", and said of a lower bound skipped
  // Where A's value is a lower bound (provenance bound "at_least"): "skip": the value is not
  // compared (its bound is); "value": the value is, its bound is not (a bound replays as the
  // limit itself); "": both are.
  std::string at_least;
  // "cycles" only: A's own disagreement with the sum of these keys is allowed on top (a level
  // two probes measured).
  std::vector<std::string> slack_from;
};

struct ReplayRules {
  std::vector<ReplayRule> rules;  // the first whose keys match wins
  // Probes left out of the replay of a topology measured on a GPU ("mlp/": a plugin's every
  // probe), and why; and probes a replay runs beside one it names.
  std::vector<std::string> skip_on_gpu;
  std::vector<std::string> skip_on_gpu_why;
  std::map<std::string, std::string> also_run;
  const ReplayRule* find(const std::string& key) const;
};

// The rules of every plugins/*/tests/replay.toml, plugins in name order.
const ReplayRules& replay_rules();

}  // namespace probetest
