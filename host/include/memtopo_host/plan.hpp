// Planning: which probes run, in which order, and which are skipped before running.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "memtopo_host/registry.hpp"

namespace memtopo::host {

// Probe or plugin names. Empty `only`: every loaded probe. `skip` wins over `only`.
struct Selection {
  std::vector<std::string> only;
  std::vector<std::string> skip;
};

struct PlanStep {
  const ProbeInfo* probe = nullptr;
  // Non-empty when the probe was not selected but a selected probe needs one of its keys:
  // "provides l1d.size_bytes for data-cache/l1d-line".
  std::string pulled_in_for;
  // Non-empty when the probe cannot run: "needs x.y, which no loaded probe provides".
  std::string skip_reason;
};

struct Plan {
  std::vector<PlanStep> steps;                         // dependencies before dependents
  std::map<std::string, const ProbeInfo*> providers;   // result key -> the probe providing it
  const PlanStep* step(const std::string& probe_name) const;
};

// A plan that cannot be made: a cycle, a key provided twice, an unknown name.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Deterministic: probes are considered in name order. The registry must outlive the plan.
Plan make_plan(const Registry& registry, const Selection& selection);

// Whether `entry` (a probe or plugin name) names `probe`.
bool selects(const std::string& entry, const ProbeInfo& probe);

}  // namespace memtopo::host
