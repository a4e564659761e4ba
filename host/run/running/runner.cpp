#include "run/running/runner.hpp"
#include "run/running/probe_executor.hpp"
#include "run/running/result_check.hpp"
#include "run/running/raw_series.hpp"
#include "run/running/plan_steps.hpp"

#include <algorithm>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <regex>

#include <spdlog/spdlog.h>

namespace memtopo::host {

namespace {

// The state behind the opaque `host` pointer one probe receives.
struct ProbeHost {
  const ProbeInfo* probe = nullptr;
  const std::map<std::string, ResultRecord>* inputs = nullptr;  // results of earlier ok probes
  std::map<std::string, Value> options;
  std::vector<ResultRecord> results;
  std::map<std::string, std::string> absent;  // key -> why it has no value (put_absent)
  std::filesystem::path raw_dir;
  std::vector<std::string> raw_write_errors;
  const std::atomic<bool>* cancel = nullptr;
  RunObserver* observer = nullptr;

  static ProbeHost& of(void* host) { return *static_cast<ProbeHost*>(host); }

  static int get_input(void* host, const char* key, mt_value* out) {
    auto& h = of(host);
    if (!key || !out) return 0;
    const std::string k(key);
    const auto& p = *h.probe;
    if (std::find(p.required.begin(), p.required.end(), k) == p.required.end() &&
        std::find(p.used.begin(), p.used.end(), k) == p.used.end()) {
      spdlog::warn("{}: asked for input {}, which it does not declare in requires or uses; "
                   "declare it so the host orders the probes",
                   p.name, k);
      return 0;
    }
    auto it = h.inputs->find(k);
    if (it == h.inputs->end()) return 0;
    *out = it->second.value.view();
    return 1;
  }

  static int get_option(void* host, const char* name, mt_value* out) {
    auto& h = of(host);
    if (!name || !out) return 0;
    auto it = h.options.find(name);
    if (it == h.options.end()) return 0;
    *out = it->second.view();
    return 1;
  }

  static void log(void* host, mt_log_level level, const char* message) {
    auto& h = of(host);
    const auto lvl = level <= MT_LOG_TRACE   ? spdlog::level::trace
                     : level == MT_LOG_DEBUG ? spdlog::level::debug
                     : level == MT_LOG_INFO  ? spdlog::level::info
                     : level == MT_LOG_WARN  ? spdlog::level::warn
                                             : spdlog::level::err;
    spdlog::log(lvl, "{}: {}", h.probe->name, message ? message : "");
  }

  static void progress(void* host, double fraction, const char* stage) {
    auto& h = of(host);
    if (h.observer) h.observer->progress(h.probe->name, std::clamp(std::isnan(fraction) ? 0.0 : fraction, 0.0, 1.0),
                                         stage ? stage : "");
  }

  static int put_result(void* host, const char* key, const mt_value* value, const mt_result_info* info) {
    auto& h = of(host);
    const auto& p = *h.probe;
    auto refuse = [&](const std::string& why) {
      spdlog::error("{}: result refused: {}", p.name, why);
      return 1;
    };
    if (!key || !value) return refuse("null key or value");
    const std::string k(key);
    std::string err;
    auto v = copy_from_c(*value, &err);
    if (!v) return refuse(k + ": " + err);
    ResultRecord rec;
    rec.key = k;
    rec.value = std::move(*v);
    rec.probe = p.name;
    // Read only the fields the probe's struct has (struct_size), defaults for the rest.
    if (info && info->struct_size >= offsetof(mt_result_info, confidence) + sizeof(double)) rec.confidence = info->confidence;
    if (info && info->struct_size >= offsetof(mt_result_info, bound) + sizeof(mt_bound)) rec.bound = info->bound;
    if (info && info->struct_size >= offsetof(mt_result_info, note) + sizeof(const char*) && info->note)
      rec.note = info->note;
    // Since 3.3: the verification (absent in an older probe's struct).
    if (info && info->struct_size >= offsetof(mt_result_info, verify_note) + sizeof(const char*) && info->verified) {
      rec.verified = info->verified;
      rec.counted_bytes = info->counted_bytes;
      if (info->verify_note) rec.verify_note = info->verify_note;
    }
    if (h.absent.count(k)) return refuse(k + " was recorded absent by this probe");
    if (auto bad = check_result(p, rec, h.results)) return refuse(*bad);
    h.results.push_back(std::move(rec));
    return 0;
  }

  static int put_absent(void* host, const char* key, const char* reason) {
    auto& h = of(host);
    const auto& p = *h.probe;
    if (!key || !reason) {
      spdlog::error("{}: absent key refused: null key or reason", p.name);
      return 1;
    }
    if (auto bad = check_absent(p, key, reason, h.results, h.absent)) {
      spdlog::error("{}: absent key refused: {}", p.name, *bad);
      return 1;
    }
    h.absent[key] = reason;
    spdlog::debug("{}: {} absent: {}", p.name, key, reason);
    return 0;
  }

  static int put_raw(void* host, const char* series, const char* const* column_names, size_t columns,
                     const double* data, size_t rows) {
    auto& h = of(host);
    const auto& p = *h.probe;
    static const std::regex series_pattern("^[A-Za-z0-9_][A-Za-z0-9_.-]*$");
    if (!series || !std::regex_match(series, series_pattern)) {
      h.raw_write_errors.push_back(std::string("raw series name '") + (series ? series : "") +
                                   "' refused: use letters, digits, '_', '.', '-'");
      spdlog::error("{}: {}", p.name, h.raw_write_errors.back());
      return 1;
    }
    if (h.raw_dir.empty()) {
      spdlog::debug("{}: raw series {} dropped (no --raw-dir)", p.name, series);
      return 0;
    }
    if ((columns && !column_names) || (rows && columns && !data)) {
      h.raw_write_errors.push_back("raw series " + std::string(series) + ": null column names or data");
      spdlog::error("{}: {}", p.name, h.raw_write_errors.back());
      return 1;
    }
    if (auto error = write_raw_series(h.raw_dir, p, series, column_names, columns, data, rows)) {
      h.raw_write_errors.push_back(*error);
      spdlog::error("{}: raw series {}: {}", p.name, series, h.raw_write_errors.back());
      return 1;
    }
    return 0;
  }

  static int cancelled(void* host) {
    auto& h = of(host);
    return h.cancel && h.cancel->load() ? 1 : 0;
  }
};

const mt_host_api kHostApi = {sizeof(mt_host_api), &ProbeHost::get_input,  &ProbeHost::get_option,
                              &ProbeHost::log,      &ProbeHost::progress,   &ProbeHost::put_result,
                              &ProbeHost::put_raw,  &ProbeHost::cancelled,    &ProbeHost::put_absent};

struct Unmet {
  std::string reason;  // empty: every required key is there
  bool by_failure = false;
  bool expected = false;  // a result (a key not determinable), not a problem to act on
};

// Why `step` cannot run given what ran before it.
Unmet unmet_input(const PlanStep& step, const Plan& plan, const std::map<std::string, ProbeOutcome>& done,
                  const std::map<std::string, ResultRecord>& results) {
  for (const auto& key : step.probe->required) {
    if (results.count(key)) continue;
    auto prov = plan.providers.find(key);
    if (prov == plan.providers.end()) return {"needs " + key + ", which no loaded probe provides"};
    const std::string& name = prov->second->name;
    auto d = done.find(name);
    if (d == done.end()) return {"needs " + key + ", whose provider " + name + " did not run"};
    const ProbeOutcome& o = d->second;
    // A provider that ran and left the key out measured that it has no value here (a TLB level
    // past its sweep, a cache the device lacks): a result, as a key it could not determine.
    if (o.status == Status::Ok) {
      auto why = o.absent_keys.find(key);
      return {"needs " + key + ", which its provider " + name + " did not measure" +
                  (why != o.absent_keys.end() ? ": " + why->second : std::string()),
              false, true};
    }
    if (o.status == Status::NotDeterminable) {
      auto why = o.absent_keys.find(key);
      return {"needs " + key + ", which its provider " + name +
                  " could not determine: " + (why != o.absent_keys.end() ? why->second : o.reason),
              false, true};
    }
    const bool failed = o.status == Status::Failed || o.caused_by_failure;
    return {"needs " + key + ", whose provider " + name + " " + status_name(o.status) + ": " + o.reason, failed,
            !failed};  // a provider skipped for a reason of its own, said where it was skipped
  }
  return {};
}

}  // namespace

ProbeOutcome run_probe(const ProbeInfo& p, const mt_device_info& device, const mt_backend* backend,
                       const RunSettings& settings, const std::map<std::string, ResultRecord>& inputs) {
  ProbeOutcome outcome;
  outcome.probe = p.name;
  outcome.version = p.plugin_version;
  ProbeHost host;
  host.probe = &p;
  host.inputs = &inputs;
  host.raw_dir = settings.raw_dir;
  host.cancel = settings.cancel;
  host.observer = settings.observer;
  auto overrides = settings.options.find(p.name);
  for (const auto& o : p.options) {
    host.options[o.name] = o.default_value;
    if (overrides != settings.options.end())
      if (auto v = overrides->second.find(o.name); v != overrides->second.end()) host.options[o.name] = v->second;
    if (!(host.options[o.name] == o.default_value)) outcome.options[o.name] = host.options[o.name];
  }
  mt_context ctx{};
  ctx.struct_size = sizeof(ctx);
  ctx.host = &host;
  ctx.api = &kHostApi;
  ctx.device = &device;
  ctx.backend = backend;
  char message[2048] = {0};
  const auto t0 = std::chrono::steady_clock::now();
  int status = MT_STATUS_FAILED;
  try {
    status = p.run(&ctx, p.user, message, sizeof message);
  } catch (const std::exception& e) {
    // Not allowed by the ABI (probe.hpp prevents it), but one bad probe must not end the run.
    std::snprintf(message, sizeof message, "exception escaped the probe: %s", e.what());
    status = MT_STATUS_FAILED;
  } catch (...) {
    std::snprintf(message, sizeof message, "unknown exception escaped the probe");
    status = MT_STATUS_FAILED;
  }
  message[sizeof message - 1] = '\0';
  outcome.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  switch (status) {
    case MT_STATUS_OK: outcome.status = Status::Ok; break;
    case MT_STATUS_SKIPPED:
      outcome.status = Status::Skipped;
      outcome.reason = message[0] ? message : "skipped (no reason given)";
      break;
    case MT_STATUS_NOT_DETERMINABLE:
      outcome.status = Status::NotDeterminable;
      outcome.reason = message[0] ? message : "not determinable (no reason given)";
      break;
    default:
      outcome.status = Status::Failed;
      outcome.reason = message[0]                    ? std::string(message)
                       : status == MT_STATUS_FAILED ? "failed (no message given)"
                                                    : "returned unknown status " + std::to_string(status);
  }
  // A probe stopped by Ctrl-C often says so as a failure (the SDK's Measurer throws
  // "cancelled"); an interrupted probe is recorded as skipped (docs/host.md, "Ctrl-C").
  if (outcome.status == Status::Failed && settings.cancel && settings.cancel->load()) {
    outcome.status = Status::Skipped;
    outcome.reason = "interrupted: " + outcome.reason;
  }
  outcome.raw_write_errors = std::move(host.raw_write_errors);
  if (keeps_results(outcome.status)) {
    outcome.results = std::move(host.results);
    outcome.absent_keys = std::move(host.absent);
  } else if (!host.results.empty()) {
    spdlog::debug("{}: {} result(s) discarded because the probe did not succeed", p.name, host.results.size());
  }
  if (outcome.status == Status::Failed) spdlog::error("{}: failed: {}", p.name, outcome.reason);
  // What a probe could not determine is a result, in the file and the summary's count: said
  // without -q, never a warning (a warning asks a person to act).
  else if (outcome.status == Status::Skipped) spdlog::info("{}: skipped: {}", p.name, outcome.reason);
  else if (outcome.status == Status::NotDeterminable)
    spdlog::info("{}: not determinable: {}{}", p.name, outcome.reason,
                 outcome.results.empty() ? "" : " (" + std::to_string(outcome.results.size()) + " result(s) kept)");
  return outcome;
}

double budget_scale_for(const mt_device_info& device) {
  if (std::strcmp(device.backend, "sim") != 0 || device.sm_count <= kBudgetSimulatedSms) return 1;
  return double(device.sm_count) / kBudgetSimulatedSms;
}

double build_budget_scale() {
#if defined(__SANITIZE_ADDRESS__)
  return kSanitizedBudgetScale;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return kSanitizedBudgetScale;
#else
  return 1;
#endif
#else
  return 1;
#endif
}

namespace {

// A declared budget (or the default) as this build and device take it: times the device's
// scale, times kSanitizedBudgetScale in a sanitized build. A budget is the work its author
// expects, the CPU's on the simulated GPU: there it is a limit of CPU time.
TimeLimit scaled_budget(double seconds, std::string source, const RunSettings& settings) {
  char scale[32];
  if (settings.budget_scale > 1) {
    std::snprintf(scale, sizeof scale, "%.2f", settings.budget_scale);
    seconds *= settings.budget_scale;
    source += " x " + std::string(scale) + " for a simulated GPU of more than " + std::to_string(kBudgetSimulatedSms) +
              " SMs";
  }
  if (build_budget_scale() > 1) {
    std::snprintf(scale, sizeof scale, "%g", build_budget_scale());
    seconds *= build_budget_scale();
    source += " x " + std::string(scale) + " for a build with AddressSanitizer";
  }
  return {std::min(seconds, kMaxTimeLimitS), source, settings.cpu_time_limits};
}

}  // namespace

// A limit the user set is the user's: seconds on the clock, as set.
TimeLimit time_limit_for(const ProbeInfo& probe, const RunSettings& settings) {
  if (auto it = settings.probe_time_limits_s.find(probe.name); it != settings.probe_time_limits_s.end() && it->second > 0)
    return {it->second, "[probes.\"" + probe.name + "\"] time_limit_s"};
  if (settings.time_limit_s > 0) return {settings.time_limit_s, "[run] time_limit_s"};
  if (probe.budget_s > 0) return scaled_budget(probe.budget_s, "the probe's declared budget", settings);
  return scaled_budget(kDefaultTimeLimitS, "the default", settings);
}

RunReport run_plan(const Plan& plan, const mt_device_info& device, const mt_backend* backend, RunSettings& settings) {
  InProcessExecutor executor(device, backend);
  return run_plan(plan, device, executor, settings);
}

std::optional<ProbeOutcome> outcome_without_running(const PlanStep& step, const Plan& plan, const DeviceFacts& facts,
                                                    const RunSettings& settings,
                                                    const std::map<std::string, ProbeOutcome>& finished,
                                                    const std::map<std::string, ResultRecord>& results) {
  const ProbeInfo& p = *step.probe;
  ProbeOutcome outcome;
  outcome.probe = p.name;
  outcome.version = p.plugin_version;
  auto journaled = settings.already_done.find(p.name);
  if (journaled != settings.already_done.end() && keeps_results(journaled->second.status)) {
    spdlog::info("{}: already measured (journal), not run again", p.name);
    return journaled->second;
  }
  if (settings.cancel && settings.cancel->load()) {
    outcome.status = Status::Skipped;
    outcome.reason = "not run: the run was interrupted";
    return outcome;
  }
  // The plan may have been made without the device: its needs are checked here too.
  Unmet why{step.skip_reason};
  const std::string need = unmet_need(p, facts);
  if (why.reason.empty()) why.reason = need;
  if (why.reason.empty()) why = unmet_input(step, plan, finished, results);
  if (why.reason.empty()) return std::nullopt;
  outcome.status = Status::Skipped;
  outcome.reason = why.reason;
  outcome.caused_by_failure = why.by_failure;
  // A backend or compute capability the device lacks is what the probe declared: the
  // file, the summary and `plan` say so; -q keeps it off the terminal.
  // A need the device lacks, or a provider that could not determine its key: said without -q
  // only; a missing or failed provider is a warning.
  if (why.expected || (!need.empty() && why.reason == need)) spdlog::info("{}: skipped: {}", p.name, why.reason);
  else spdlog::warn("{}: skipped: {}", p.name, why.reason);
  return outcome;
}

bool from_journal(const ProbeOutcome& outcome, const RunSettings& settings) {
  auto it = settings.already_done.find(outcome.probe);
  return it != settings.already_done.end() && keeps_results(it->second.status) && keeps_results(outcome.status);
}

RunReport run_plan(const Plan& plan, const mt_device_info& device, ProbeExecutor& executor, RunSettings& settings) {
  RunReport report;
  const auto started = std::chrono::steady_clock::now();
  std::map<std::string, ResultRecord> results;   // key -> record, from probes that keep results
  std::map<std::string, ProbeOutcome> finished;  // probe -> outcome
  const DeviceFacts facts = device_facts(device);
  const size_t total = plan.steps.size();
  size_t index = 0;
  for (const auto& step : plan.steps) {
    ++index;
    const ProbeInfo& p = *step.probe;
    std::optional<ProbeOutcome> settled = outcome_without_running(step, plan, facts, settings, finished, results);
    ProbeOutcome outcome;
    if (settled) {
      outcome = std::move(*settled);
      if (from_journal(outcome, settings)) {
        account_for_declared_keys(p, outcome);
        for (const auto& r : outcome.results) results[r.key] = r;
        finished[p.name] = outcome;
        report.outcomes.push_back(std::move(outcome));
        continue;
      }
      if (settings.cancel && settings.cancel->load()) report.interrupted = true;
    } else {
      if (settings.observer) settings.observer->probe_started(index, total, p.name);
      outcome = executor.run(p, results, settings);
      account_for_declared_keys(p, outcome);
      for (const auto& r : outcome.results) results[r.key] = r;
      if (settings.on_finished) settings.on_finished(outcome);
    }
    if (settings.observer) settings.observer->probe_finished(outcome);
    finished[p.name] = outcome;
    report.outcomes.push_back(std::move(outcome));
  }
  if (settings.cancel && settings.cancel->load()) report.interrupted = true;
  report.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return report;
}

std::string RunTally::text() const {
  return std::to_string(ok) + " ok, " + std::to_string(not_determinable) + " not determinable, " +
         std::to_string(skipped) + " skipped, " + std::to_string(failed) + " failed";
}

RunTally tally(const std::vector<ProbeOutcome>& outcomes) {
  RunTally t;
  for (const auto& o : outcomes) {
    switch (o.status) {
      case Status::Ok: ++t.ok; break;
      case Status::NotDeterminable: ++t.not_determinable; break;
      case Status::Failed: ++t.failed; break;
      case Status::Skipped:
        ++t.skipped;
        if (o.caused_by_failure) ++t.skipped_for_failure;
        break;
    }
  }
  return t;
}

std::vector<std::string> missing_requested_keys(const Plan& plan, const std::vector<ProbeOutcome>& outcomes) {
  std::vector<std::string> out;
  for (const auto& [key, provider] : plan.requested_keys) {
    const ProbeOutcome* by = nullptr;
    bool found = false;
    for (const auto& o : outcomes) {
      if (o.probe == provider) by = &o;
      if (keeps_results(o.status))
        for (const auto& r : o.results) found = found || r.key == key;
    }
    if (found) continue;
    std::string why;
    if (!by) why = "its provider " + provider + " is excluded by skip";
    else if (by->status == Status::Ok) {
      auto absent = by->absent_keys.find(key);
      why = "its provider " + provider + " did not measure it" +
            (absent != by->absent_keys.end() ? ": " + absent->second : std::string());
    }
    else if (by->status == Status::NotDeterminable) why = "its provider " + provider + " could not determine it: " + by->reason;
    else why = "its provider " + provider + " " + status_name(by->status) + ": " + by->reason;
    out.push_back(key + " was asked for but not measured: " + why);
  }
  return out;
}

int run_exit_status(const RunReport& report, const std::vector<std::string>& missing_keys) {
  const RunTally t = tally(report.outcomes);
  const bool raw_lost = std::any_of(report.outcomes.begin(), report.outcomes.end(),
                                    [](const ProbeOutcome& o) { return !o.raw_write_errors.empty(); });
  return (t.failed == 0 && t.skipped_for_failure == 0 && missing_keys.empty() && !report.interrupted && !raw_lost) ? 0 : 1;
}

}  // namespace memtopo::host
