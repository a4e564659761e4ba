// The facts on top of `memtopo draw` (docs/host.md), as lstopo names the machine it draws: which
// GPU (UUID, bus id), under what conditions (driver, clocks, ECC, MIG, throttling), which run
// (date, host, build, how its probes ended), and what the run did not measure, so that a
// drawing of an acceptance run says why it is short instead of looking like a small GPU.
#include <algorithm>
#include <cstdio>
#include <map>

#include "topology/base/terminal_text.hpp"
#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

void add_identity(const Doc& d, GpuDrawing& g) {
  Parts p;
  const std::string uuid = d.has(d.key("gpu.uuid")) ? d.text(d.key("gpu.uuid")) : d.text("meta.device_uuid");
  const std::string bus =
      d.has(d.key("gpu.pci_bus_id")) ? d.text(d.key("gpu.pci_bus_id")) : d.text("meta.device_pci_bus_id");
  if (!uuid.empty()) p.add("UUID " + uuid);
  if (!bus.empty()) p.add("PCI bus " + bus);
  if (d.has("meta.device_label")) p.add("label " + d.text("meta.device_label"));
  if (!p.v.empty()) g.facts.push_back({"identity", p.v, "info", {}});
}

// The [meta.gpu_state] a CUDA run records through NVML (docs/fleet.md, "GPU state").
void add_gpu_state(const toml::table& state, Parts& p) {
  // Integers only: value<int64_t>() of a float past the integers is undefined behaviour.
  const auto mhz = [&](const char* k) -> std::optional<int64_t> {
    if (const auto* i = state[k].as_integer()) return i->get();
    return std::nullopt;
  };
  if (auto s = mhz("start_sm_clock_mhz"), e = mhz("end_sm_clock_mhz"); s && e)
    p.add(*s == *e ? "SM clock during the run " + std::to_string(*s) + " MHz"
                   : "SM clock " + std::to_string(*s) + " MHz at the start, " + std::to_string(*e) + " at the end");
  // Only a boolean says on or off (toml++ would read an integer 1 as true).
  const auto on_off = [&](const char* k, const char* what) {
    if (const auto* b = state[k].as_boolean()) p.add(std::string(what) + (b->get() ? " on" : " off"));
    else if (state.contains(k)) p.add(std::string(what) + " unknown (" + k + " is not true or false)");
  };
  on_off("ecc_enabled", "ECC");
  on_off("mig_enabled", "MIG");
  if (auto w = state["power_limit_w"].value<double>()) p.add(printf_text("power limit %.0f W", *w));
  std::string throttled;
  for (const char* k : {"start_throttle_reasons", "end_throttle_reasons"})
    if (const toml::array* a = state[k].as_array())
      for (const auto& r : *a)
        if (auto s = r.value<std::string>(); s && throttled.find(*s) == std::string::npos)
          throttled += (throttled.empty() ? "" : "/") + *s;
  if (state.contains("start_throttle_reasons")) p.add("throttled: " + (throttled.empty() ? "no" : throttled));
  if (auto t0 = mhz("start_temperature_c"), t1 = mhz("end_temperature_c"); t0 && t1)
    p.add(std::to_string(*t0) + "-" + std::to_string(*t1) + " C");
}

void add_conditions(const Doc& d, GpuDrawing& g) {
  Parts p;
  const toml::table* state = d.t["meta"]["gpu_state"].as_table();
  const std::string nvidia = state ? (*state)["nvidia_driver_version"].value_or(std::string()) : "";
  if (!nvidia.empty()) p.add("driver " + nvidia);
  if (d.has("meta.driver_version")) p.add("CUDA driver " + d.text("meta.driver_version"));
  if (d.has("meta.runtime_version")) p.add("runtime " + d.text("meta.runtime_version"));
  if (auto khz = d.num(d.key("gpu.sm_clock_khz")); khz && *khz > 0)
    p.add(printf_text("SM clock %.0f MHz", *khz / 1000) + printf_text(" (1 cyc = %.3f ns)", 1e6 / *khz));
  if (auto khz = d.num(d.key("gpu.memory_clock_khz")))
    p.add(printf_text("memory clock %.0f MHz", *khz / 1000) +
          (d.has(d.key("gpu.memory_bus_width_bits")) ? printf_text(" x %.0f bit", *d.num(d.key("gpu.memory_bus_width_bits"))) : ""));
  if (state && (*state)["source"].value_or(std::string()) == "nvml") {
    add_gpu_state(*state, p);
  } else if (state) {
    p.add("no GPU state: " + terminal_text((*state)["source"].value_or(std::string("none"))));
  } else {
    p.add("ECC, MIG, throttling not recorded (no [meta.gpu_state]: an earlier build)");
  }
  if (!p.v.empty()) g.facts.push_back({"conditions", p.v, "info", {}});
}

std::string date_text(const toml::node* n) {
  if (const auto* dt = n ? n->as_date_time() : nullptr) {
    const toml::date_time& v = dt->get();
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d UTC", int(v.date.year), int(v.date.month),
                  int(v.date.day), int(v.time.hour), int(v.time.minute));
    return buf;
  }
  return "";
}

// How the run's probes ended ("55 probes: 47 ok, 4 not determinable, 4 skipped"), and, for a
// short run (an acceptance preset, --only), which probes ran.
void add_run(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto date = date_text(d.node("meta.created_utc")); !date.empty()) p.add(date);
  if (d.has("meta.host")) p.add("host " + d.text("meta.host"));
  if (d.has("meta.tool_version"))
    p.add("memtopo " + d.text("meta.tool_version") +
          (d.has("meta.git_commit") ? " (" + d.text("meta.git_commit") + ")" : ""));
  std::map<std::string, int> by_status;
  std::vector<std::string> names;
  if (const toml::table* probes = d.t["probes"].as_table())
    for (const auto& [name, state] : *probes) {
      ++by_status[state.as_table() ? (*state.as_table())["status"].value_or(std::string("?")) : "?"];
      names.push_back(terminal_text(std::string(name.str())));
    }
  std::string statuses;
  for (const char* s : {"ok", "not_determinable", "skipped", "failed"})
    if (by_status.count(s))
      statuses += (statuses.empty() ? "" : ", ") + std::to_string(by_status[s]) + " " +
                  (std::string(s) == "not_determinable" ? "not determinable" : s);
  if (!names.empty()) p.add(std::to_string(names.size()) + (names.size() == 1 ? " probe: " : " probes: ") + statuses);
  if (!p.v.empty()) g.facts.push_back({"run", p.v, "info", {}});
  // A run of a few probes names them: the reader sees a preset or --only, not a small GPU.
  constexpr size_t kNamedProbes = 12;
  if (!names.empty() && names.size() <= kNamedProbes) g.facts.push_back({"probes run", names, "info", {}});
}

bool holds(const std::vector<DrawNode>& nodes, const std::string& label) {
  return std::any_of(nodes.begin(), nodes.end(),
                     [&](const DrawNode& n) { return n.label == label || holds(n.children, label); });
}

}  // namespace

void add_facts(const Doc& d, GpuDrawing& g) {
  add_identity(d, g);
  add_conditions(d, g);
  add_run(d, g);
}

// What a full run draws and this one lacks: no probe of the run measured it.
void add_not_measured(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (g.gpc_sm_counts.empty()) p.add("GPCs");
  if (g.strips.empty()) p.add("SM map");
  for (const std::string& l : {std::string("shared memory"), cache_label("l1_cache"), cache_label("texture_cache"),
                               cache_label("readonly_cache"), cache_label("constant_cache")})
    if (!holds(g.per_sm, l)) p.add(l);
  for (const char* l : {"constant L1.5", "L2", "TLB", "DRAM"})
    if (!holds(g.shared, l)) p.add(l);
  if (holds(g.shared, "L2") && !d.has(d.cache("l2_cache", "size_bytes"))) p.add("L2 size");
  if (!d.has(d.key("memory.read_bytes_per_second@main"))) p.add("DRAM rates");
  if (g.ladder.empty()) p.add("latencies");
  if (g.extras.empty()) p.add("loads in flight");
  if (p.v.empty()) return;
  size_t probes = 0;
  if (const toml::table* t = d.t["probes"].as_table()) probes = t->size();
  p.add(probes == 1 ? "(the one probe this run selected does not measure them)"
                     : "(none of the " + std::to_string(probes) + " probes this run selected measures them)");
  g.facts.push_back({"not measured", p.v, "info", {}});
}

}  // namespace memtopo::host::draw
