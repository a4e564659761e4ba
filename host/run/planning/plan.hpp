// Planning: which probes run, in which order, and which are skipped before running.
#pragma once

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// `only`: probe or plugin names, or result keys (a key selects its provider); empty: every
// loaded probe. `skip`: probe or plugin names; it wins over `only`.
struct Selection {
  std::vector<std::string> only;
  std::vector<std::string> skip;
};

struct PlanStep {
  const ProbeInfo* probe = nullptr;
  // Non-empty when the probe was not selected but a selected probe needs one of its keys:
  // "provides l1d.size_bytes for plugin/l1d-line".
  std::string pulled_in_for;
  // Non-empty when the probe cannot run: "needs x.y, which no loaded probe provides".
  std::string skip_reason;
};

struct Plan {
  std::vector<PlanStep> steps;                         // dependencies before dependents
  std::map<std::string, const ProbeInfo*> providers;   // result key -> the probe providing it
  std::map<std::string, const ProbeInfo*> excluded_providers;  // result key -> its provider left out by skip
  // Result keys named in `only`, each with the loaded probe that provides it (which may be
  // excluded by skip): a key asked for by name must be in the output.
  std::map<std::string, std::string> requested_keys;
  // Probes named in `only` by their own name (not by plugin or key): where one is skipped, the
  // run says why even when quiet.
  std::vector<std::string> requested_probes;
  // Opt-in probes (MT_PROBE_OPT_IN) the selection would hold were they not: a default run's, or
  // a plugin's named in `only`. Each runs when named by itself or by a key.
  std::vector<const ProbeInfo*> left_out;
  // Probes a default run holds that this selection does not, though its probes use their keys
  // (optional inputs): provider -> the used keys. Values that use them may differ from a
  // default run's; a key asked for by name runs them (docs/host.md, "Plan").
  std::map<std::string, std::set<std::string>> unrun_uses;
  const PlanStep* step(const std::string& probe_name) const;
};

// A plan that cannot be made: a cycle, a key provided twice, an unknown name.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// What the planner knows of the device: enough to skip a probe whose needs it does not meet.
struct DeviceFacts {
  std::string backend;  // "cuda" or "sim"
  int cc_major = 0, cc_minor = 0;  // 0.0: the device reports none
};
DeviceFacts device_facts(const mt_device_info& info);

// Why `probe` cannot run on `device` ("needs a CUDA GPU; the device is the simulated GPU",
// "needs compute capability 9.0; the device has 8.6"); empty when it can.
std::string unmet_need(const ProbeInfo& probe, const DeviceFacts& device);
// The probe's needs for display ("cuda, cc >= 9.0"); empty when it has none.
std::string needs_text(const ProbeInfo& probe);

// Deterministic: probes are considered in name order. The registry must outlive the plan.
// With `device`, probes whose needs it does not meet are skipped (and their dependents).
Plan make_plan(const Registry& registry, const Selection& selection, const DeviceFacts* device = nullptr);
// The plan made without a device, fitted to one once it is open: its skip reasons as
// make_plan with `device` gives them (the order and selection stay).
void fit_plan_to_device(Plan& plan, const DeviceFacts& device);

// What the plan and run say of plan.unrun_uses (empty where there is none): the values that
// use them may differ from a default run's, and a key asked for by name (one of the
// selection's, named) runs what it uses.
std::string unrun_uses_hint(const Plan& plan);

// Whether `entry` (a probe or plugin name) names `probe`.
bool selects(const std::string& entry, const ProbeInfo& probe);
// The first loaded probe (by name) that provides `key`, or null.
const ProbeInfo* provider_of_key(const Registry& registry, const std::string& key);
// What a selection may name: every loaded probe and plugin, and with `keys` every result key
// (for "did you mean" where an entry names none).
std::vector<std::string> selectable_names(const Registry& registry, bool keys);

}  // namespace memtopo::host
