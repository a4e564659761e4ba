// Whether a topology B measured on a replay of topology A agrees with A: the fixed point of
// docs/simulator.md ("Replaying a measured topology"), with the tolerance of each key type
// stated there and in replay_compare.cpp.
#pragma once

#include <string>
#include <vector>

#include <toml++/toml.h>

namespace probetest {

struct ReplayCheck {
  std::vector<std::string> mismatches;    // "l1d.size_bytes: 246784 vs 246656 (tolerance: one line, 128)"
  std::vector<std::string> not_compared;  // keys the simulator does not reproduce, and why
};

ReplayCheck compare_replay(const toml::table& a, const toml::table& b);

// The probes that ran for A (its [probes] table), comma-separated for --only: the replay runs
// the same ones, not those added since A was measured (their keys A cannot compare).
std::string probes_of(const toml::table& a);

// A as if the probes named (a whole name, or a prefix ending in '/') had not run: their
// [probes] entries and every key their provenance names them for go, and tables left empty.
void drop_probes(toml::table& a, const std::vector<std::string>& probes);

}  // namespace probetest
