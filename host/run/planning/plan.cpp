#include "run/planning/plan.hpp"
#include "topology/base/suggest.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <utility>

namespace memtopo::host {

bool selects(const std::string& entry, const ProbeInfo& probe) {
  return entry == probe.name || entry == probe.plugin;
}

const ProbeInfo* provider_of_key(const Registry& registry, const std::string& key) {
  for (const auto& p : registry.probes())
    if (std::find(p.provided.begin(), p.provided.end(), key) != p.provided.end()) return &p;
  return nullptr;
}

std::vector<std::string> selectable_names(const Registry& registry, bool keys) {
  std::set<std::string> names;
  for (const ProbeInfo& p : registry.probes()) {
    names.insert(p.name);
    names.insert(p.plugin);
    if (keys) names.insert(p.provided.begin(), p.provided.end());
  }
  return {names.begin(), names.end()};
}

const PlanStep* Plan::step(const std::string& probe_name) const {
  for (const auto& s : steps)
    if (s.probe->name == probe_name) return &s;
  return nullptr;
}

namespace {

bool provides(const ProbeInfo& p, const std::string& key) {
  return std::find(p.provided.begin(), p.provided.end(), key) != p.provided.end();
}

bool any_selects(const std::vector<std::string>& entries, const ProbeInfo& p) {
  return std::any_of(entries.begin(), entries.end(), [&](const std::string& e) { return selects(e, p); });
}

// --only entries may also be result keys: a key selects its provider.
bool only_selects(const std::vector<std::string>& entries, const ProbeInfo& p) {
  return std::any_of(entries.begin(), entries.end(), [&](const std::string& e) { return selects(e, p) || provides(p, e); });
}

// An opt-in probe runs when an entry names it or one of its keys, never by its plugin's name.
bool names_itself(const std::vector<std::string>& entries, const ProbeInfo& p) {
  return std::any_of(entries.begin(), entries.end(), [&](const std::string& e) { return e == p.name || provides(p, e); });
}

void check_names(const Registry& registry, const std::vector<std::string>& entries, const char* what, bool keys) {
  for (const auto& e : entries) {
    if (registry.find(e) || registry.has_plugin(e) || (keys && provider_of_key(registry, e))) continue;
    throw PlanError(std::string(what) + (keys ? ": unknown probe, plugin or result key '" : ": unknown probe or plugin '") +
                    e + "'" + did_you_mean(e, selectable_names(registry, keys)) + " (memtopo list shows the loaded ones)");
  }
}

struct Planner {
  const Registry& registry;
  std::map<std::string, const ProbeInfo*> providers;           // among candidates
  std::map<std::string, const ProbeInfo*> excluded_providers;  // among skipped-by-selection probes
  std::map<std::string, std::string> pulled_in;                // probe -> why
  std::set<std::string> selected;
  enum class Mark { None, InProgress, Done };
  std::map<std::string, Mark> marks;
  std::vector<std::pair<const ProbeInfo*, std::string>> stack;  // probe, key it needs from the next
  std::vector<const ProbeInfo*> order;

  // Adds the providers `work`'s probes need, transitively: each probe with whether its used
  // keys count too (a key asked for by name), `as_default` those whose used keys count.
  void pull_in(std::vector<std::pair<const ProbeInfo*, bool>> work, std::set<std::string> as_default) {
    while (!work.empty()) {
      const auto [p, with_used] = work.back();
      work.pop_back();
      for (const auto* list : {&p->required, &p->used}) {
        if (list == &p->used && !with_used) continue;
        for (const auto& key : *list) {
          auto it = providers.find(key);
          if (it == providers.end() || it->second == p) continue;
          const std::string& name = it->second->name;
          // A used key's opt-in provider: a default run leaves it out, so the key asked for does too.
          if (list == &p->used && it->second->opt_in && !selected.count(name)) continue;
          if (selected.count(name) && (!with_used || as_default.count(name))) continue;
          if (!selected.count(name))
            pulled_in[name] = "provides " + key + " for " + p->name;
          selected.insert(name);
          if (with_used) as_default.insert(name);
          work.emplace_back(it->second, with_used);
        }
      }
    }
  }

  // Providers of `p`'s inputs that run in this plan, in name order, with the key that links them.
  std::vector<std::pair<const ProbeInfo*, std::string>> dependencies(const ProbeInfo& p) const {
    std::map<std::string, std::string> deps;  // provider name -> first key
    for (const auto* list : {&p.required, &p.used})
      for (const auto& key : *list) {
        auto it = providers.find(key);
        if (it == providers.end() || it->second == &p || !selected.count(it->second->name)) continue;
        deps.emplace(it->second->name, key);
      }
    std::vector<std::pair<const ProbeInfo*, std::string>> out;
    for (const auto& [name, key] : deps) out.emplace_back(registry.find(name), key);
    return out;
  }

  void visit(const ProbeInfo& p) {
    Mark& m = marks[p.name];
    if (m == Mark::Done) return;
    if (m == Mark::InProgress) {
      // The stack from p's first occurrence to the top is the cycle.
      std::string chain;
      auto start = std::find_if(stack.begin(), stack.end(), [&](const auto& e) { return e.first == &p; });
      for (auto it = start; it != stack.end(); ++it) {
        const ProbeInfo* next = (it + 1 == stack.end()) ? &p : (it + 1)->first;
        if (!chain.empty()) chain += ", ";
        chain += it->first->name + " needs " + it->second + " from " + next->name;
      }
      throw PlanError("dependency cycle: " + chain + " (skip one of them with --skip)");
    }
    m = Mark::InProgress;
    stack.emplace_back(&p, "");
    for (const auto& [dep, key] : dependencies(p)) {
      stack.back().second = key;
      visit(*dep);
    }
    stack.pop_back();
    marks[p.name] = Mark::Done;
    order.push_back(&p);
  }
};

}  // namespace

DeviceFacts device_facts(const mt_device_info& info) {
  DeviceFacts f;
  f.backend = std::string(info.backend, strnlen(info.backend, sizeof info.backend));
  f.cc_major = info.cc_major;
  f.cc_minor = info.cc_minor;
  return f;
}

namespace {

uint32_t backend_bit(const std::string& backend) {
  if (backend == "cuda") return MT_BACKEND_CUDA;
  if (backend == "sim") return MT_BACKEND_SIM;
  return 0;
}

std::string backend_phrase(uint32_t bit) { return bit == MT_BACKEND_CUDA ? "a CUDA GPU" : "the simulated GPU"; }

std::string cc_text(int major, int minor) { return std::to_string(major) + "." + std::to_string(minor); }

bool needs_cc(const ProbeInfo& p) { return p.min_cc_major > 0 || p.min_cc_minor > 0; }

}  // namespace

std::string unmet_need(const ProbeInfo& p, const DeviceFacts& device) {
  const uint32_t have = backend_bit(device.backend);
  if (p.backends != 0 && (p.backends & have) == 0) {
    const uint32_t want = (p.backends & MT_BACKEND_CUDA) ? MT_BACKEND_CUDA : MT_BACKEND_SIM;
    const std::string is = have ? backend_phrase(have) : "'" + device.backend + "'";
    const std::string why = p.backends_reason.empty() ? "" : " (" + p.backends_reason + ")";
    return "needs " + backend_phrase(want) + why + "; the device is " + is;
  }
  if (needs_cc(p) && std::pair(device.cc_major, device.cc_minor) < std::pair(p.min_cc_major, p.min_cc_minor)) {
    const bool none = device.cc_major == 0 && device.cc_minor == 0;
    return "needs compute capability " + cc_text(p.min_cc_major, p.min_cc_minor) + "; the device " +
           (none ? std::string("reports none") : "has " + cc_text(device.cc_major, device.cc_minor));
  }
  return "";
}

std::string needs_text(const ProbeInfo& p) {
  std::vector<std::string> parts;
  const uint32_t all = MT_BACKEND_CUDA | MT_BACKEND_SIM;
  if (p.backends != 0 && (p.backends & all) != all) {
    if (p.backends & MT_BACKEND_CUDA) parts.push_back("cuda");
    if (p.backends & MT_BACKEND_SIM) parts.push_back("sim");
  }
  if (needs_cc(p)) parts.push_back("cc >= " + cc_text(p.min_cc_major, p.min_cc_minor));
  std::string out;
  for (const auto& s : parts) out += (out.empty() ? "" : ", ") + s;
  return out;
}

namespace {

// Each step's skip reason: a need the device does not meet, a required key no probe provides,
// or a provider skipped before it (steps are in dependency order).
void mark_skipped(Plan& plan, const DeviceFacts* device) {
  // A provider that cannot run on this device is in no default run here either.
  if (device)
    for (auto it = plan.unrun_uses.begin(); it != plan.unrun_uses.end();) {
      const auto pit = plan.providers.find(*it->second.begin());
      it = pit != plan.providers.end() && !unmet_need(*pit->second, *device).empty() ? plan.unrun_uses.erase(it)
                                                                                       : std::next(it);
    }
  for (PlanStep& step : plan.steps) {
    const ProbeInfo* p = step.probe;
    step.skip_reason = device ? unmet_need(*p, *device) : std::string();
    for (const auto& key : p->required) {
      if (!step.skip_reason.empty()) break;
      auto it = plan.providers.find(key);
      if (it == plan.providers.end()) {
        auto ex = plan.excluded_providers.find(key);
        step.skip_reason = ex != plan.excluded_providers.end()
                               ? "needs " + key + ", whose provider " + ex->second->name + " is excluded by skip"
                               : "needs " + key + ", which no loaded probe provides";
        break;
      }
      if (it->second == p) continue;
      const PlanStep* dep = plan.step(it->second->name);  // earlier in the order
      if (dep && !dep->skip_reason.empty()) {
        step.skip_reason = "needs " + key + ", whose provider " + dep->probe->name + " is skipped: " + dep->skip_reason;
        break;
      }
    }
  }
}

}  // namespace

Plan make_plan(const Registry& registry, const Selection& selection, const DeviceFacts* device) {
  check_names(registry, selection.only, "--only", true);
  check_names(registry, selection.skip, "--skip", false);

  Planner pl{registry};
  std::vector<const ProbeInfo*> candidates;
  for (const auto& p : registry.probes()) {  // sorted by name
    if (any_selects(selection.skip, p)) {
      for (const auto& key : p.provided) pl.excluded_providers.emplace(key, &p);
      continue;
    }
    candidates.push_back(&p);
    for (const auto& key : p.provided) {
      auto [it, inserted] = pl.providers.emplace(key, &p);
      if (!inserted)
        throw PlanError("result key " + key + " is provided by both " + it->second->name + " (" + it->second->file +
                        ") and " + p.name + " (" + p.file + "); skip one of them with --skip");
    }
  }
  std::vector<const ProbeInfo*> opted_out;  // opt-in probes the selection reached only by default or plugin
  for (const auto* p : candidates) {
    if (!selection.only.empty() && !only_selects(selection.only, *p)) continue;
    if (p->opt_in && !names_itself(selection.only, *p))
      opted_out.push_back(p);
    else
      pl.selected.insert(p->name);
  }

  // Pull in providers of required keys, transitively: selecting a probe means wanting its
  // result, which needs its inputs measured (docs/host.md). A result key asked for by name
  // means its value as a default run writes it: the providers of the keys its probe uses, and
  // theirs, run too (a probe's used inputs can decide its value).
  std::vector<std::pair<const ProbeInfo*, bool>> work;  // probe, whether its used keys count
  std::set<std::string> as_default;
  for (const auto* p : candidates)
    if (pl.selected.count(p->name)) {
      const bool by_key = !selection.only.empty() && !any_selects(selection.only, *p);
      work.emplace_back(p, by_key);
      if (by_key) as_default.insert(p->name);
    }
  pl.pull_in(std::move(work), std::move(as_default));

  for (const auto* p : candidates)
    if (pl.selected.count(p->name)) pl.visit(*p);

  Plan plan;
  plan.providers = pl.providers;
  for (const auto* p : opted_out)
    if (!pl.selected.count(p->name)) plan.left_out.push_back(p);
  for (const auto& e : selection.only)
    if (registry.find(e)) plan.requested_probes.push_back(e);
  for (const auto& e : selection.only)
    if (!registry.find(e) && !registry.has_plugin(e)) {
      auto it = pl.providers.find(e);
      plan.requested_keys[e] = it != pl.providers.end() ? it->second->name : provider_of_key(registry, e)->name;
    }
  plan.excluded_providers = pl.excluded_providers;
  for (const auto* p : candidates) {
    if (!pl.selected.count(p->name)) continue;
    for (const auto& key : p->used) {
      auto it = pl.providers.find(key);
      if (it == pl.providers.end() || pl.selected.count(it->second->name) || it->second->opt_in) continue;
      plan.unrun_uses[it->second->name].insert(key);
    }
  }
  for (const ProbeInfo* p : pl.order) {
    PlanStep step;
    step.probe = p;
    if (auto it = pl.pulled_in.find(p->name); it != pl.pulled_in.end()) step.pulled_in_for = it->second;
    plan.steps.push_back(std::move(step));
  }
  mark_skipped(plan, device);
  return plan;
}

void fit_plan_to_device(Plan& plan, const DeviceFacts& device) { mark_skipped(plan, &device); }

std::string unrun_uses_hint(const Plan& plan) {
  if (plan.unrun_uses.empty()) return {};
  // A key to name: the first of a planned probe that uses one of them.
  std::string example = "KEY";
  for (const PlanStep& s : plan.steps) {
    const bool uses_one = std::any_of(s.probe->used.begin(), s.probe->used.end(), [&](const std::string& k) {
      return std::any_of(plan.unrun_uses.begin(), plan.unrun_uses.end(),
                         [&](const auto& u) { return u.second.count(k) > 0; });
    });
    if (uses_one && s.skip_reason.empty() && !s.probe->provided.empty()) {
      example = s.probe->provided.front();
      break;
    }
  }
  return "values that use keys of probes not run may differ from a default run's; a key asked for by name "
         "(--only " + example + ") runs what it uses";
}

}  // namespace memtopo::host
