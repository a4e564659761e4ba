// The bandwidth ladder of `memtopo draw` (docs/host.md): each level's rate over the whole GPU,
// nearest first, beside the latency ladder; what each SM can run (CUDA's limits); the compute
// peaks of the roofline; clusters and the tensor memory accelerator where measured.
#include <algorithm>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

void rate(const Doc& d, GpuDrawing& g, const char* label, const char* role) {
  if (auto v = d.num(key(role))) g.rates.push_back({label, *v, "", d.mark(key(role))});
}

// One SM's rate times the SMs, where the probe measured every SM at once and states it per SM.
void per_sm_rate(GpuDrawing& g, const char* label, double per_sm_bytes_per_second, double sms, const std::string& each) {
  g.rates.push_back({label, per_sm_bytes_per_second * sms, printf_text("%.0f SMs x ", sms) + each, ""});
}

void add_compute(const Doc& d, GpuDrawing& g) {
  const std::string& ending = key_ending("compute_peak");
  const toml::table* roofline = d.t[element("compute_peaks")].as_table();
  if (!roofline) return;
  std::vector<std::pair<double, std::string>> peaks;
  for (const auto& [k, v] : *roofline) {
    const std::string name(k.str());
    if (name.size() > ending.size() && name.compare(name.size() - ending.size(), ending.size(), ending) == 0)
      if (auto x = v.value<double>()) peaks.emplace_back(*x, name.substr(0, name.size() - ending.size()));
  }
  std::stable_sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  Parts p;
  for (const auto& [ops, op] : peaks) p.add(op + printf_text(" %.1f", ops));
  if (p.v.empty()) return;
  p.v.insert(p.v.begin(), "per SM per cycle");
  g.extras.push_back({"compute peaks", p.v, "info", {}});
}

void add_clusters(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto n = d.num(key("cluster_max_blocks"))) {
    const auto portable = d.num(key("cluster_portable_blocks"));
    p.add("clusters of up to " + d.mark(key("cluster_max_blocks")) + printf_text("%.0f blocks", *n) +
          (portable ? printf_text(" (%.0f portable)", *portable) : ""));
  }
  if (auto b = d.num(key("tma_max_transfer"))) p.add("TMA transfers up to " + bytes_text(*b));
  if (!p.v.empty()) g.extras.push_back({"clusters, TMA", p.v, "info", {}});
}

}  // namespace

void add_rates(const Doc& d, GpuDrawing& g) {
  const auto sms = d.num("device", "sm_count");
  const double hz = g.sm_clock_mhz * 1e6;
  if (auto v = d.num(key("shared_bytes_per_sm_cycle")); v && sms && hz > 0)
    per_sm_rate(g, "shared memory", *v * hz, *sms, printf_text("%.1f B/cyc", *v));
  rate(d, g, "L1", "l1_read_rate");
  if (const auto dsmem = d.nums(key("dsmem_sm_to_sm_gbps")); !dsmem.empty() && sms) {
    const double best = *std::max_element(dsmem.begin(), dsmem.end());
    per_sm_rate(g, "DSMEM", best * 1e9, *sms, printf_text("%.1f GB/s", best));
  }
  rate(d, g, "L2 read", "l2_read_rate");
  rate(d, g, "L2 write", "l2_write_rate");
  rate(d, g, "DRAM read", "dram_read_rate");
  rate(d, g, "DRAM write", "dram_write_rate");
  add_compute(d, g);
  add_clusters(d, g);
}

void add_sm_resources(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto r = d.num(key("registers_per_sm"))) p.add(printf_text("%.0f registers", *r) + " (" + bytes_text(*r * 4) + ")");
  if (auto t = d.num(key("threads_per_sm"))) {
    const auto w = d.num(key("warp_size"));
    p.add(printf_text("%.0f threads", *t) + (w && *w > 0 ? printf_text(" (%.0f warps)", *t / *w) : ""));
  }
  if (auto b = d.num(key("blocks_per_sm"))) p.add(printf_text("%.0f blocks", *b));
  if (auto s = d.num(key("shared_per_block_optin"))) p.add("shared memory per block up to " + bytes_text(*s));
  if (!p.v.empty()) g.per_sm.push_back({"CUDA limits", p.v, "info", {}});
}

}  // namespace memtopo::host::draw
