// A plan run on several executors at once (probe_executor.hpp): each probe waits for the
// probes that provide what it requires or uses, then takes the first idle executor; among
// ready probes the one at the head of the longest chain of declared time budgets goes first
// (a long chain started late would leave the other executors idle at the end). One
// thread starts, polls and settles every probe, so the observer, the journal hook and the
// result map see one probe at a time, as in the sequential runner.
#include <algorithm>
#include <chrono>
#include <cstddef>

#include "run/running/probe_executor.hpp"
#include "run/running/result_check.hpp"
#include "run/running/plan_steps.hpp"

namespace memtopo::host {

namespace {

// How long one look at a busy executor waits: a probe's end is seen within this many
// milliseconds per busy executor.
constexpr int kPollMs = 2;

// For each step, the earlier steps whose keys it requires or uses.
std::vector<std::vector<size_t>> dependencies(const Plan& plan) {
  std::map<const ProbeInfo*, size_t> index;
  for (size_t i = 0; i < plan.steps.size(); ++i) index[plan.steps[i].probe] = i;
  std::vector<std::vector<size_t>> deps(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const ProbeInfo& p = *plan.steps[i].probe;
    for (const auto* keys : {&p.required, &p.used})
      for (const auto& key : *keys) {
        auto prov = plan.providers.find(key);
        if (prov == plan.providers.end()) continue;
        auto at = index.find(prov->second);
        if (at != index.end() && at->second != i) deps[i].push_back(at->second);
      }
  }
  return deps;
}

// The order ready steps start in: the longest chain of declared budgets from the step to the
// plan's end first (critical path first; a probe without a budget counts 1 s), then plan order.
std::vector<size_t> start_order(const Plan& plan, const std::vector<std::vector<size_t>>& deps) {
  const size_t n = plan.steps.size();
  std::vector<double> chain(n, 0);
  for (size_t i = n; i-- > 0;) {  // dependents come after their providers
    const double budget = plan.steps[i].probe->budget_s;
    chain[i] += budget > 0 ? budget : 1.0;
    for (size_t d : deps[i]) chain[d] = std::max(chain[d], chain[i]);
  }
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return chain[a] > chain[b]; });
  return order;
}

// The results a probe may read (its required and used keys), copied: the map goes on growing
// while the probe runs.
std::map<std::string, ResultRecord> inputs_of(const ProbeInfo& p, const std::map<std::string, ResultRecord>& results) {
  std::map<std::string, ResultRecord> out;
  for (const auto* keys : {&p.required, &p.used})
    for (const auto& k : *keys)
      if (auto it = results.find(k); it != results.end()) out.emplace(k, it->second);
  return out;
}

class ParallelRun {
 public:
  ParallelRun(const Plan& plan, const mt_device_info& device, const std::vector<BackgroundExecutor*>& executors,
              RunSettings& settings)
      : plan_(plan),
        facts_(device_facts(device)),
        executors_(executors),
        settings_(settings),
        deps_(dependencies(plan)),
        outcomes_(plan.steps.size()),
        started_(plan.steps.size(), false),
        running_(executors.size(), kIdle),
        order_(start_order(plan, deps_)) {}

  RunReport run() {
    RunReport report;
    const auto t0 = std::chrono::steady_clock::now();
    while (settled_ < plan_.steps.size()) {
      if (start_ready_steps()) continue;
      poll_busy_executors();
    }
    for (auto& o : outcomes_) report.outcomes.push_back(std::move(*o));
    report.interrupted = settings_.cancel && settings_.cancel->load();
    report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return report;
  }

 private:
  static constexpr size_t kIdle = SIZE_MAX;

  bool ready(size_t i) const {
    return std::all_of(deps_[i].begin(), deps_[i].end(), [&](size_t d) { return outcomes_[d].has_value(); });
  }

  // Settles the ready steps that do not run and starts ready ones on idle executors; true when
  // any step was settled (others may have become ready).
  bool start_ready_steps() {
    bool settled_any = false;
    for (size_t i : order_) {
      if (started_[i] || !ready(i)) continue;
      const PlanStep& step = plan_.steps[i];
      if (auto o = outcome_without_running(step, plan_, facts_, settings_, finished_, results_)) {
        started_[i] = true;
        settle(i, std::move(*o), from_journal(*o, settings_));
        settled_any = true;
        continue;
      }
      auto idle = std::find(running_.begin(), running_.end(), kIdle);
      if (idle == running_.end()) continue;
      started_[i] = true;
      *idle = i;
      if (settings_.observer) settings_.observer->probe_started(i + 1, plan_.steps.size(), step.probe->name);
      executors_[size_t(idle - running_.begin())]->begin(*step.probe, inputs_of(*step.probe, results_), settings_);
    }
    return settled_any;
  }

  void poll_busy_executors() {
    for (size_t e = 0; e < executors_.size(); ++e) {
      if (running_[e] == kIdle) continue;
      std::optional<ProbeOutcome> o = executors_[e]->poll(kPollMs);
      if (!o) continue;
      const size_t i = running_[e];
      running_[e] = kIdle;
      account_for_declared_keys(*plan_.steps[i].probe, *o);
      if (settings_.on_finished) settings_.on_finished(*o);
      settle(i, std::move(*o), false);
    }
  }

  void settle(size_t i, ProbeOutcome o, bool journaled) {
    account_for_declared_keys(*plan_.steps[i].probe, o);
    for (const auto& r : o.results) results_[r.key] = r;
    if (!journaled && settings_.observer) settings_.observer->probe_finished(o);
    finished_[o.probe] = o;
    outcomes_[i] = std::move(o);
    ++settled_;
  }

  const Plan& plan_;
  const DeviceFacts facts_;
  const std::vector<BackgroundExecutor*>& executors_;
  RunSettings& settings_;
  const std::vector<std::vector<size_t>> deps_;
  std::vector<std::optional<ProbeOutcome>> outcomes_;
  std::vector<bool> started_;
  std::vector<size_t> running_;  // per executor: the step it runs, or kIdle
  const std::vector<size_t> order_;  // the order ready steps start in
  std::map<std::string, ResultRecord> results_;
  std::map<std::string, ProbeOutcome> finished_;
  size_t settled_ = 0;
};

}  // namespace

RunReport run_plan(const Plan& plan, const mt_device_info& device, const std::vector<BackgroundExecutor*>& executors,
                   RunSettings& settings) {
  if (executors.size() == 1) return run_plan(plan, device, *executors.front(), settings);
  return ParallelRun(plan, device, executors, settings).run();
}

}  // namespace memtopo::host
