#include "memtopo_host/plan.hpp"

#include <algorithm>
#include <set>

namespace memtopo::host {

bool selects(const std::string& entry, const ProbeInfo& probe) {
  return entry == probe.name || entry == probe.plugin;
}

const PlanStep* Plan::step(const std::string& probe_name) const {
  for (const auto& s : steps)
    if (s.probe->name == probe_name) return &s;
  return nullptr;
}

namespace {

bool any_selects(const std::vector<std::string>& entries, const ProbeInfo& p) {
  return std::any_of(entries.begin(), entries.end(), [&](const std::string& e) { return selects(e, p); });
}

void check_names(const Registry& registry, const std::vector<std::string>& entries, const char* what) {
  for (const auto& e : entries) {
    if (registry.find(e) || registry.has_plugin(e)) continue;
    throw PlanError(std::string(what) + ": unknown probe or plugin '" + e + "' (memtopo list shows the loaded ones)");
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

Plan make_plan(const Registry& registry, const Selection& selection) {
  check_names(registry, selection.only, "--only");
  check_names(registry, selection.skip, "--skip");

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
  for (const auto* p : candidates)
    if (selection.only.empty() || any_selects(selection.only, *p)) pl.selected.insert(p->name);

  // Pull in providers of required keys, transitively: selecting a probe means wanting its
  // result, which needs its inputs measured (docs/host.md).
  std::vector<const ProbeInfo*> work;
  for (const auto* p : candidates)
    if (pl.selected.count(p->name)) work.push_back(p);
  while (!work.empty()) {
    const ProbeInfo* p = work.back();
    work.pop_back();
    for (const auto& key : p->required) {
      auto it = pl.providers.find(key);
      if (it == pl.providers.end() || pl.selected.count(it->second->name)) continue;
      pl.selected.insert(it->second->name);
      pl.pulled_in[it->second->name] = "provides " + key + " for " + p->name;
      work.push_back(it->second);
    }
  }

  for (const auto* p : candidates)
    if (pl.selected.count(p->name)) pl.visit(*p);

  Plan plan;
  plan.providers = pl.providers;
  for (const ProbeInfo* p : pl.order) {
    PlanStep step;
    step.probe = p;
    if (auto it = pl.pulled_in.find(p->name); it != pl.pulled_in.end()) step.pulled_in_for = it->second;
    for (const auto& key : p->required) {
      auto it = pl.providers.find(key);
      if (it == pl.providers.end()) {
        auto ex = pl.excluded_providers.find(key);
        step.skip_reason = ex != pl.excluded_providers.end()
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
    plan.steps.push_back(std::move(step));
  }
  return plan;
}

}  // namespace memtopo::host
