// `memtopo plan --timings TOPOLOGY`: how long the plan will take, from the durations an earlier
// run recorded (its [probes] tables), and without one what the probes' time limits allow.
#include <cmath>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "cli/cli_internal.hpp"
#include "run/running/probe_executor.hpp"
#include "topology/document/role_index.hpp"

namespace memtopo::host::cli {

std::map<std::string, double> recorded_durations(const std::string& file) {
  const std::optional<toml::table> doc = read_topology_or_report(file, "plan --timings reads the [probes] of a run");
  if (!doc) throw UsageError("--timings " + file + ": not a topology file (see above)");
  std::map<std::string, double> out;
  if (const toml::table* probes = (*doc)["probes"].as_table())
    for (const auto& [name, entry] : *probes)
      if (auto d = entry.as_table() ? (*entry.as_table())["duration_s"].value<double>() : std::nullopt) {
        // The schema's minimum: a negative or NaN time would make the estimate a lie ("about nan s").
        if (!std::isfinite(*d) || *d < 0) {
          const auto where = (*entry.as_table())["duration_s"].node()->source().begin;
          std::ostringstream v;
          v << *d;
          throw UsageError("--timings " + file + ":" + std::to_string(where.line) + ": probes.\"" +
                           std::string(name.str()) + "\".duration_s is " + v.str() +
                           ": a duration is a finite number of seconds, 0 or more; name a topology `memtopo run` wrote");
        }
        out[std::string(name.str())] = *d;
      }
  if (out.empty()) throw UsageError("--timings " + file + ": records no probe's duration_s; name a topology `memtopo run` wrote");
  return out;
}

std::string recorded_device(const std::string& file) {
  const std::optional<toml::table> doc = read_topology_or_report(file, "plan --timings reads the [probes] of a run");
  if (!doc) return "";
  const std::string name =
      (*doc)["meta"]["device_name"].value_or(doc->at_path(RoleIndex(*doc).key("gpu.name")).value_or(std::string()));
  const std::string backend = (*doc)["meta"]["backend"].value_or(std::string());
  return backend.empty() ? name : name + " (" + backend + ")";
}

std::string seconds_text(double s) {
  std::ostringstream o;
  if (s >= 1e6) o << std::setprecision(3) << s << " s";  // a recorded 1e308 s: an exponent, not 309 digits
  else o << std::fixed << std::setprecision(s < 10 ? 1 : 0) << s << " s";
  return o.str();
}

std::string plan_time_line(const Plan& plan, const Config& cfg, const std::string& timings_file,
                           const std::map<std::string, double>& recorded, const std::string& this_device) {
  RunSettings settings;  // the config's limits, as run applies them
  settings.time_limit_s = cfg.time_limit_s.value_or(0);
  settings.probe_time_limits_s = cfg.probe_time_limits_s;
  double total = 0, limits = 0;
  size_t known = 0, to_run = 0;
  for (const auto& s : plan.steps) {
    if (!s.skip_reason.empty()) continue;
    ++to_run;
    limits += time_limit_for(*s.probe, settings).seconds;
    if (auto it = recorded.find(s.probe->name); it != recorded.end()) {
      total += it->second;
      ++known;
    }
  }
  if (timings_file.empty())
    return "time: no estimate without --timings TOPOLOGY (an earlier run on this GPU model); the probes' time limits "
           "add to " + seconds_text(limits);
  std::string line = "time: about " + seconds_text(total) + ", the durations " + timings_file + " recorded for " +
                     std::to_string(known) + " of the " + std::to_string(to_run) + " probes";
  if (known < to_run) line += " (the others: not in it, up to their time limits)";
  // Another GPU's durations say little about this one's (a simulated H100 takes minutes a probe).
  if (const std::string there = recorded_device(timings_file); !there.empty() && there != this_device)
    line += "; recorded on " + there + ", not on this device, " + this_device + ": its times, not this one's";
  return line + "; a run adds the device's start and, per probe, a worker's (docs/host.md, \"Isolation\")";
}

}  // namespace memtopo::host::cli
