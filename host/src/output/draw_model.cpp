// What `memtopo draw` shows of a topology (docs/host.md, "memtopo draw"): the chip, what each
// SM holds (shared memory, L1 with its carveout, texture, read-only, constant L1), then the
// levels all SMs share (constant L1.5, L2, DRAM), each with size, line, latency and bandwidth
// where the topology has them. Absent values are left out. The text tree (draw_text.cpp) and the
// picture (host/report/gpu_picture.py, from gpu_drawing_json) both draw this one model.
#include <cstdint>
#include <cstdio>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "memtopo_host/draw.hpp"
#include "memtopo_host/key_map.hpp"
#include "memtopo_host/summary.hpp"
#include "memtopo_host/terminal_text.hpp"

namespace memtopo::host {
namespace {

// The elements and keys drawn, by role (host/data/key_map.toml, [draw]): a cache element's
// keys are the cache procedure's parts ("size_bytes").
const std::string& element(const char* role) { return mapped("draw.elements", role); }
const std::string& key(const char* role) { return mapped("draw.keys", role); }

struct Doc {
  const toml::table& t;
  // An element and a key part, or one whole key ("l2.partitions") with an empty part.
  static std::pair<std::string, std::string> split(const std::string& e, const std::string& k) {
    if (!k.empty()) return {e, k};
    const auto dot = e.find('.');
    return {e.substr(0, dot), dot == std::string::npos ? "" : e.substr(dot + 1)};
  }
  const toml::node* node(const std::string& e, const std::string& k = "") const {
    const auto [el, part] = split(e, k);
    return t[el][part].node();
  }
  bool has(const std::string& e, const std::string& k = "") const { return node(e, k) != nullptr; }
  std::string bound(const std::string& e, const std::string& k = "") const {
    const auto [el, part] = split(e, k);
    const auto b = t["provenance"][el][part]["bound"].value<std::string>();
    return b == "at_least" ? ">= " : b == "at_most" ? "<= " : "";
  }
  std::optional<double> num(const std::string& e, const std::string& k = "") const {
    const toml::node* n = node(e, k);
    if (!n) return std::nullopt;
    if (auto i = n->value<int64_t>(); i && n->is_integer()) return double(*i);
    return n->value<double>();
  }
  std::vector<int64_t> ints(const std::string& e, const std::string& k = "") const {
    std::vector<int64_t> out;
    if (const toml::node* n = node(e, k); const toml::array* a = n ? n->as_array() : nullptr)
      for (const auto& v : *a)
        if (auto i = v.value<int64_t>()) out.push_back(*i);
    return out;
  }
  std::string text(const std::string& e, const std::string& k = "") const {
    const toml::node* n = node(e, k);
    return terminal_text(n ? n->value_or(std::string()) : std::string());
  }
};

std::string printf_text(const char* fmt, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

// Whole units where the size has them (241 KiB, 25 MiB), else one decimal (79.2 GiB).
std::string bytes_text(double b) {
  const auto i = int64_t(b);
  const int64_t gib = int64_t(1) << 30;
  if (double(i) == b && (i < 1024 || (i % 1024 == 0 && (i < gib || i % gib == 0)))) return format_bytes(i);
  return b >= double(gib) ? printf_text("%.1f GiB", b / double(gib)) : printf_text("%.1f MiB", b / 1048576.0);
}

std::string rate_text(double bytes_per_second) {
  return bytes_per_second >= 1e12 ? printf_text("%.2f TB/s", bytes_per_second / 1e12)
                                   : printf_text("%.0f GB/s", bytes_per_second / 1e9);
}

// The first counts of a list, and how many there are beyond: a file of 20,000 GPCs gives a
// line, not 100 KB (the picture caps its boxes the same way, gpu_picture.py).
constexpr size_t kListedCounts = 32;

std::string joined(const std::vector<int64_t>& v, const char* sep = "/") {
  std::string out;
  for (size_t i = 0; i < v.size() && i < kListedCounts; ++i) out += (i ? sep : "") + std::to_string(v[i]);
  if (v.size() > kListedCounts) out += std::string(sep) + "... (" + std::to_string(v.size()) + " in all)";
  return out;
}

// "241 KiB, line 128 B, sector 32 B, hit 32.0 cyc, miss +235.5 cyc" of a cache element.
// far_key: the key of a far hit (the L2's partitions), or "".
std::vector<std::string> cache_parts(const Doc& d, const std::string& e, const std::string& far_key = "") {
  std::vector<std::string> p;
  if (auto v = d.num(e, "size_bytes")) p.push_back(d.bound(e, "size_bytes") + bytes_text(*v));
  if (auto v = d.num(e, "line_bytes")) p.push_back("line " + bytes_text(*v));
  if (auto v = d.num(e, "fetch_granularity_bytes")) p.push_back("sector " + bytes_text(*v));
  if (auto s = d.num(e, "sets"), w = d.num(e, "ways"); s && w)
    p.push_back(printf_text("%.0f", *s) + " sets x " + printf_text("%.0f", *w) + " ways");
  if (auto v = d.num(e, "latency_cycles")) p.push_back("hit " + format_cycles(*v));
  if (auto v = far_key.empty() ? std::nullopt : d.num(far_key)) p.push_back("far hit " + format_cycles(*v));
  if (auto v = d.num(e, "miss_penalty_cycles")) p.push_back("miss +" + format_cycles(*v));
  return p;
}

std::string parts_text(const std::vector<std::string>& parts) {
  std::string out;
  for (const auto& s : parts) out += (out.empty() ? "" : ", ") + s;
  return out;
}

void add_per_sm(const Doc& d, GpuDrawing& g) {
  std::vector<std::string> p;
  if (auto v = d.num("device", "shared_per_sm_bytes")) p.push_back("up to " + bytes_text(*v));
  if (auto b = d.num(key("shared_banks")), w = d.num(key("shared_bank_bytes")); b && w)
    p.push_back(printf_text("%.0f banks", *b) + " x " + bytes_text(*w));
  if (auto v = d.num(key("shared_latency"))) p.push_back("hit " + format_cycles(*v));
  if (!p.empty()) g.per_sm.push_back({"shared memory", parts_text(p), {}});
  if (const std::string& l1d = element("l1_cache"); d.has(l1d, "size_bytes") || d.has(l1d, "latency_cycles")) {
    g.per_sm.push_back({"L1 data", parts_text(cache_parts(d, l1d)), {}});
    const auto shared = d.ints(key("carveout_shared")), l1 = d.ints(key("carveout_l1"));
    if (shared.size() > 1 && shared.size() == l1.size())
      g.per_sm.push_back({"carveout",
                          std::to_string(shared.size()) + " levels: L1 " + bytes_text(double(l1.front())) + " with " +
                              bytes_text(double(shared.front())) + " shared to " + bytes_text(double(l1.back())) +
                              " with " + bytes_text(double(shared.back())),
                          {}});
  }
  for (const char* role : {"texture_cache", "readonly_cache", "constant_cache"})
    if (const std::string& e = element(role); d.has(e, "size_bytes") || d.has(e, "latency_cycles"))
      g.per_sm.push_back({mapped("draw.labels", role), parts_text(cache_parts(d, e)), {}});
}

void add_shared(const Doc& d, GpuDrawing& g) {
  if (const std::string& c15 = element("constant_cache_l15"); d.has(c15, "size_bytes") || d.has(c15, "latency_cycles")) {
    auto p = cache_parts(d, c15);
    if (auto n = d.num(key("constant_l15_groups")))
      p.push_back(printf_text(*n == 1 ? "%.0f group of SMs" : "%.0f groups of SMs", *n));
    g.shared.push_back({"constant L1.5", parts_text(p), d.ints(key("constant_l15_group_sms"))});
  }
  if (const std::string& l2 = element("l2_cache"); d.has(l2, "size_bytes") || d.has(l2, "latency_cycles")) {
    auto p = cache_parts(d, l2, key("l2_far_latency"));
    if (auto a = d.num(key("l2_api_size")); a && d.has(l2, "size_bytes")) p.insert(p.begin() + 1, "API " + bytes_text(*a));
    const std::string& near_sms = key("l2_partition_sms");
    if (auto n = d.num(key("l2_partitions")))
      p.push_back(printf_text(*n == 1 ? "%.0f partition" : "%.0f partitions", *n) +
                  (d.has(near_sms) ? " (" + joined(d.ints(near_sms)) + " SMs near)" : ""));
    if (auto r = d.num(key("l2_read_rate"))) p.push_back("read " + rate_text(*r));
    g.shared.push_back({"L2", parts_text(p), d.ints(near_sms)});
  }
  std::vector<std::string> p;
  if (auto v = d.num("device", "global_memory_bytes")) p.push_back(bytes_text(*v));
  if (auto r = d.num(key("dram_read_rate"))) p.push_back("read " + rate_text(*r));
  if (auto r = d.num(key("dram_write_rate"))) p.push_back("write " + rate_text(*r));
  // The DRAM latency (docs/format.md); a topology without it shows what the spectrum's chase met.
  if (auto v = d.num(key("dram_latency"))) {
    p.push_back("latency " + format_cycles(*v));
    if (auto far = d.num(key("dram_far_latency"))) p.push_back("far " + format_cycles(*far));
  } else if (auto s = d.num(key("dram_load_latency"))) {
    p.push_back("load " + format_cycles(*s));
  }
  if (!p.empty()) g.shared.push_back({"DRAM", parts_text(p), {}});
}

}  // namespace

GpuDrawing gpu_drawing(const toml::table& doc) {
  const Doc d{doc};
  GpuDrawing g;
  g.title = d.text("device", "name").empty() ? "GPU" : d.text("device", "name");
  if (d.has("device", "compute_capability")) g.head.push_back("cc " + d.text("device", "compute_capability"));
  if (auto v = d.num("device", "sm_count")) g.head.push_back(printf_text("%.0f SMs", *v));
  if (auto v = d.num("device", "sm_clock_khz")) g.head.push_back(printf_text("%.0f MHz", *v / 1000));
  if (doc["meta"]["backend"].value_or(std::string()) == "sim")
    g.simulated = terminal_text(doc["meta"]["device_spec"].value_or(std::string("sim")));
  if (auto n = d.num(key("gpc_count"))) {
    g.gpc_sm_counts = d.ints(key("gpc_sm_counts"));
    g.gpc_text = printf_text("%.0f", *n) + (g.gpc_sm_counts.empty() ? "" : ", SMs in each: " + joined(g.gpc_sm_counts));
    g.gpc_bound = d.bound(key("gpc_count"));
  }
  add_per_sm(d, g);
  add_shared(d, g);
  return g;
}

std::string gpu_drawing_json(const GpuDrawing& g) {
  const auto ints = [](const std::vector<int64_t>& v) {
    toml::array a;
    for (int64_t x : v) a.push_back(x);
    return a;
  };
  const auto levels = [&](const std::vector<DrawLevel>& v) {
    toml::array a;
    for (const DrawLevel& l : v) a.push_back(toml::table{{"label", l.label}, {"text", l.text}, {"instances_sm_counts", ints(l.instances_sm_counts)}});
    return a;
  };
  toml::array head;
  for (const auto& h : g.head) head.push_back(h);
  const toml::table t{{"title", g.title},          {"head", head},
                      {"simulated", g.simulated},  {"gpc_text", g.gpc_text},
                      {"gpc_bound", g.gpc_bound},  {"gpc_sm_counts", ints(g.gpc_sm_counts)},
                      {"per_sm", levels(g.per_sm)}, {"chip_wide", levels(g.shared)}};
  std::ostringstream o;
  o << toml::json_formatter{t} << "\n";
  return o.str();
}

}  // namespace memtopo::host
