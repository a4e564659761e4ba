// `memtopo fleet --confirm`: each flagged GPU's findings measured again, on that GPU and on an
// unflagged sibling as a control; a finding stays only where it shows again. Cloud operators
// repeat a bandwidth check before draining a node because single runs flutter; this repeats
// exactly the probes behind the findings, beside a control measured the same way, so that a
// selection or a warm-up that moves every GPU's value moves the control's too.
#include "tools/fleet/fleet_confirm.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <set>
#include <stdexcept>

#include <toml++/toml.h>

#include "topology/document/summary.hpp"
#include "topology/base/text_table.hpp"
#include "topology/base/new_file.hpp"
#include "topology/base/tied_child.hpp"
#include "topology/values/value.hpp"

extern char** environ;

namespace memtopo::host {

namespace fs = std::filesystem;

namespace {

// The probe of `file` that took the least time and ended ok: a run of it records the state the
// GPU is in, as every run does. Empty where the file names none.
std::string fastest_probe(const std::string& file) {
  std::string best;
  double least = 0;
  try {
    const toml::table doc = toml::parse_file(file);
    if (const toml::table* probes = doc["probes"].as_table())
      for (const auto& [name, entry] : *probes) {
        const toml::table* e = entry.as_table();
        if (!e || (*e)["status"].value_or(std::string()) != "ok") continue;
        const double s = (*e)["duration_s"].value_or(0.0);
        if (best.empty() || s < least) best = std::string(name.str()), least = s;
      }
  } catch (const std::exception&) {  // a JSON file, or one gone since: no probe
  }
  return best;
}

// The probes behind a GPU's flagged findings: each value's probe (a missing key's from a GPU
// that has it), and each probe whose status differs; for a state alone, the fastest probe of
// its run.
std::vector<std::string> probes_behind(const FleetReport& r, size_t m) {
  std::set<std::string> probes;
  for (const auto& f : r.gpus[m].findings) {
    if (!f.counts || f.kind == "state") continue;
    if (f.kind == "probe") {
      probes.insert(f.key.substr(f.key.find(' ') + 1));  // "probe data-cache/l2-size"
      continue;
    }
    const FlatValue* v = r.members[m].find(f.key);
    for (size_t o = 0; !v && o < r.members.size(); ++o) v = r.members[o].find(f.key);
    if (v && !v->probe.empty()) probes.emplace(v->probe);
  }
  if (const std::string fastest = probes.empty() ? fastest_probe(r.members[m].file) : ""; !fastest.empty())
    probes.insert(fastest);
  return {probes.begin(), probes.end()};
}

// A GPU of the same model measured on this host that the fleet did not flag (`flagged`: its
// first verdicts), its run clean: the control.
std::optional<size_t> control_of(const FleetReport& r, size_t m, const std::string& host,
                                 const std::vector<bool>& flagged) {
  for (size_t c = 0; c < r.members.size(); ++c)
    if (c != m && r.members[c].model == r.members[m].model && r.members[c].host == host && !flagged[c] &&
        r.members[c].state_warnings.empty() && !r.members[c].device_spec.empty())
      return c;
  return std::nullopt;
}

std::string status_of(const FleetMember& g, const std::string& probe) {
  for (const auto& [name, state] : g.probes)
    if (name == probe) return state.substr(state.rfind(' ') + 1);
  return "not run";
}

std::string shown(const std::string& key, const FlatValue* v) {
  return v ? format_json_value(key, v->value) : std::string("absent");
}

// Whether finding `f` shows again: the GPU measured again (`g`) against the control (`c`),
// judged as the fleet judges a GPU against a reference (`again`).
bool reproduces(const FleetFinding& f, const FleetMember& g, const FleetMember& c, const FleetGpu& again) {
  if (f.kind == "probe") {
    const std::string probe = f.key.substr(f.key.find(' ') + 1);
    return status_of(g, probe) != status_of(c, probe);
  }
  if (f.kind == "missing") return !g.find(f.key) && c.find(f.key);
  if (f.kind == "extra") return g.find(f.key) && !c.find(f.key);
  for (const auto& a : again.findings) {
    if (a.key != f.key || !a.counts) continue;
    const bool same_direction = !f.deviation_percent || !a.deviation_percent ||
                                (*f.deviation_percent > 0) == (*a.deviation_percent > 0);
    return same_direction;
  }
  return false;
}

// What the measurements again say of one finding, in its text.
void judge(FleetFinding& f, const FleetMember& g, const FleetMember& c, const FleetGpu& again) {
  const std::string values = f.kind == "probe"
                                 ? status_of(g, f.key.substr(f.key.find(' ') + 1)) + " against the control's " +
                                       status_of(c, f.key.substr(f.key.find(' ') + 1))
                                 : shown(f.key, g.find(f.key)) + " against the control's " + shown(f.key, c.find(f.key));
  if (reproduces(f, g, c, again)) {
    f.confirmation = "confirmed in 2 of 2 measurements (again " + values + ")";
    return;
  }
  f.counts = false;
  f.not_flagged = "not reproduced";
  f.confirmation = "measured again: " + values;
}

void leave(FleetGpu& gpu, const std::string& why) {
  for (auto& f : gpu.findings)
    if (f.counts) f.confirmation = "not confirmed: " + why;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

// A GPU measured again: its state first (another process again, or idle now), then each
// finding against the control. Returns the counts of confirmed and dropped findings.
std::pair<size_t, size_t> judge_all(FleetGpu& gpu, const FleetMember& g, const FleetMember& c, const FleetOptions& o) {
  size_t kept = 0, dropped = 0;
  const bool busy_again = !g.state_warnings.empty();
  for (auto& f : gpu.findings) {
    if (!f.counts) continue;
    if (f.kind == "state") {
      if (busy_again) {
        f.confirmation = "confirmed in 2 of 2 measurements (again: " + joined(g.state_warnings) + ")";
      } else {
        f.counts = false;
        f.not_flagged = "not reproduced";
        f.confirmation = "measured again: idle, clocks free";
      }
      (f.counts ? kept : dropped)++;
    }
  }
  if (busy_again) {  // its values are not its own this time either
    for (auto& f : gpu.findings)
      if (f.counts && f.kind != "state") f.confirmation = "not confirmed: not idle when measured again";
    return {kept, dropped};
  }
  FleetOptions against = o;
  against.reference = c;
  const FleetReport again = compare_fleet(std::vector<FleetMember>{g}, against);
  for (auto& f : gpu.findings) {
    if (!f.counts || f.kind == "state") continue;
    judge(f, g, c, again.gpus[0]);
    (f.counts ? kept : dropped)++;
  }
  return {kept, dropped};
}

// The options the flagged GPU's run gave the probes measured again, as a config: the GPU and
// its control are measured with the experiment the fleet judged, not the defaults.
std::string config_of(const FleetMember& m, const std::vector<std::string>& probes) {
  std::string text;
  for (const auto& [probe, body] : m.probe_options)
    if (std::find(probes.begin(), probes.end(), probe) != probes.end())
      text += "[probes." + toml_string_literal(probe) + "]\n" + body;
  return text;
}

}  // namespace

std::vector<std::string> confirm_findings(FleetReport& r, const FleetOptions& o, const ConfirmSettings& s) {
  std::vector<std::string> lines;
  const size_t members = r.members.size();
  std::vector<bool> flagged(members);
  for (size_t m = 0; m < members; ++m) flagged[m] = r.gpus[m].flagged();
  for (size_t m = 0; m < members; ++m) {
    FleetGpu& gpu = r.gpus[m];
    if (!flagged[m]) continue;
    const FleetMember& member = r.members[m];
    const std::string name = member.host + " " + member.device;
    if (member.host != s.this_host || member.device_spec.empty()) {
      leave(gpu, "measured on host " + member.host + ", not this one (" + s.this_host + ")");
      lines.push_back(name + ": not measured again (another host)");
      continue;
    }
    const auto control = control_of(r, m, s.this_host, flagged);
    const std::vector<std::string> probes = probes_behind(r, m);
    if (!control || probes.empty()) {
      leave(gpu, control ? "its file names no probe that ended ok" : "no unflagged GPU of its model on this host as a control");
      lines.push_back(name + ": not measured again (" + (control ? "no probe" : "no control") + ")");
      continue;
    }
    // Two folders may hold files of one name: each GPU's measurements again get names of their own.
    fs::path stem = s.folder / fs::path(member.file).stem();
    for (int n = 2; fs::exists(stem.string() + "-again.toml"); ++n)
      stem = s.folder / (fs::path(member.file).stem().string() + "-" + std::to_string(n));
    const std::string config = config_of(member, probes);
    const ConfirmRun own{&member, probes, fs::path(stem.string() + "-again.toml"), config};
    const ConfirmRun ctl{&r.members[*control], probes, fs::path(stem.string() + "-control.toml"), config};
    const int own_rc = s.runner(own), ctl_rc = s.runner(ctl);
    std::optional<FleetMember> g, c;
    try {
      if (own_rc == 0) g = read_fleet_member(own.output.string());
      if (ctl_rc == 0) c = read_fleet_member(ctl.output.string());
    } catch (const std::exception&) {
    }
    if (!g || !c) {
      leave(gpu, "the measurement again failed (exit " + std::to_string(!g ? own_rc : ctl_rc) + ")");
      lines.push_back(name + ": the measurement again failed");
      continue;
    }
    if (!c->state_warnings.empty()) {
      leave(gpu, "the control was not idle when measured again: " + c->state_warnings.front());
      lines.push_back(name + ": the control was not idle when measured again");
      continue;
    }
    const auto [kept, dropped] = judge_all(gpu, *g, *c, o);
    lines.push_back(name + ": " + counted(probes.size(), "probe", "probes") + " measured again beside " +
                    r.members[*control].device + " (control): " + std::to_string(kept) + " confirmed, " +
                    std::to_string(dropped) + " not reproduced");
  }
  return lines;
}

std::string this_host_name() {
  char host[256] = {0};
  return gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string();
}

int run_confirmation(const ConfirmRun& run) {
  const FleetMember& m = *run.member;
  std::string only;
  for (const auto& p : run.probes) only += (only.empty() ? "" : ",") + p;
  TiedChildSpec spec;
  spec.argv = {fs::read_symlink("/proc/self/exe").string(), "run", "-q", "--only", only, "-o", run.output.string()};
  if (!run.config_text.empty()) {
    fs::path config = run.output;
    config.replace_extension(".config.toml");
    NewFile file(create_new_file(config), config);
    if (file.fd < 0)
      throw std::runtime_error("fleet --confirm: cannot create " + config.string() + " for the options measured again: " +
                               std::strerror(errno) + " (remove what is at that name, or run again)");
    write_all_to(file.fd, run.config_text, config.string());
    file.close();
    spec.argv.insert(spec.argv.end(), {"--config", config.string()});
  }
  // A GPU by its UUID, wherever the numbering put it since; a simulated device by its file.
  if (m.backend == "cuda" && !m.uuid.empty()) {
    spec.argv.insert(spec.argv.end(), {"--device", "cuda:0"});
    for (char** e = environ; *e; ++e)
      if (std::string(*e).rfind("CUDA_VISIBLE_DEVICES=", 0) != 0) spec.env.emplace_back(*e);
    spec.env.push_back("CUDA_VISIBLE_DEVICES=" + m.uuid);
  } else {
    spec.argv.insert(spec.argv.end(), {"--device", m.device_spec});
  }
  spec.stdout_to_null = true;
  const pid_t pid = spawn_tied_child(spec);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

}  // namespace memtopo::host
