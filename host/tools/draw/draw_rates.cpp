// The bandwidth ladder of `memtopo draw` (docs/host.md): each level's rate over the whole GPU,
// nearest first, beside the latency ladder; what each SM can run (CUDA's limits); the compute
// peaks of the roofline; clusters and the tensor memory accelerator where measured.
#include <algorithm>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

void rate(const Doc& d, GpuDrawing& g, const char* label, const char* role) {
  const std::string& k = d.key(role);
  if (auto v = d.num(k)) g.rates.push_back({label, *v, "", d.mark(k)});
}

// One SM's rate times the SMs, where the probe measured every SM at once and states it per SM.
void per_sm_rate(GpuDrawing& g, const char* label, double per_sm_bytes_per_second, double sms, const std::string& each) {
  g.rates.push_back({label, per_sm_bytes_per_second * sms, printf_text("%.0f SMs x ", sms) + each, ""});
}

void add_compute(const Doc& d, GpuDrawing& g) {
  // One role per instruction type, its subject the type's name (docs/roles.md, class compute).
  const std::string role = "compute.peak_ops_per_cycle_per_sm@";
  // In the order of their keys, then by peak: equal peaks keep the order the file lists them in.
  auto roles = d.roles.starting_with(role);
  std::sort(roles.begin(), roles.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::vector<std::pair<double, std::string>> peaks;
  for (const auto& [r, k] : roles)
    if (auto x = d.num(k)) peaks.emplace_back(*x, r.substr(role.size()));
  std::stable_sort(peaks.begin(), peaks.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  Parts p;
  for (const auto& [ops, op] : peaks) p.add(op + printf_text(" %.1f", ops));
  if (p.v.empty()) return;
  p.v.insert(p.v.begin(), "per SM per cycle");
  g.extras.push_back({"compute peaks", p.v, "info", {}});
}

void add_clusters(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto n = d.num(d.key("cluster.max_blocks"))) {
    const auto portable = d.num(d.key("cluster.max_portable_blocks"));
    p.add("clusters of up to " + d.mark(d.key("cluster.max_blocks")) + printf_text("%.0f blocks", *n) +
          (portable ? printf_text(" (%.0f portable)", *portable) : ""));
  }
  if (auto b = d.num(d.key("async_copy.max_transfer_bytes"))) p.add("TMA transfers up to " + bytes_text(*b));
  if (!p.v.empty()) g.extras.push_back({"clusters, TMA", p.v, "info", {}});
}

}  // namespace

void add_rates(const Doc& d, GpuDrawing& g) {
  const auto sms = d.num(d.key("gpu.sm_count"));
  const double hz = g.sm_clock_mhz * 1e6;
  if (auto v = d.num(d.key("memory.bytes_per_cycle_per_sm@shared")); v && sms && hz > 0)
    per_sm_rate(g, "shared memory", *v * hz, *sms, printf_text("%.1f B/cyc", *v));
  rate(d, g, "L1", "cache.read_bytes_per_second@l1_cache");
  if (const auto dsmem = d.nums(d.key("memory.sm_to_sm_gbps@distributed_shared")); !dsmem.empty() && sms) {
    const double best = *std::max_element(dsmem.begin(), dsmem.end());
    per_sm_rate(g, "DSMEM", best * 1e9, *sms, printf_text("%.1f GB/s", best));
  }
  rate(d, g, "L2 read", "cache.read_bytes_per_second@l2_cache");
  rate(d, g, "L2 write", "cache.write_bytes_per_second@l2_cache");
  rate(d, g, "DRAM read", "memory.read_bytes_per_second@main");
  rate(d, g, "DRAM write", "memory.write_bytes_per_second@main");
  add_compute(d, g);
  add_clusters(d, g);
}

void add_sm_resources(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto r = d.num(d.key("gpu.registers_per_sm"))) p.add(printf_text("%.0f registers", *r) + " (" + bytes_text(*r * 4) + ")");
  if (auto t = d.num(d.key("gpu.max_threads_per_sm"))) {
    const auto w = d.num(d.key("gpu.warp_size"));
    p.add(printf_text("%.0f threads", *t) + (w && *w > 0 ? printf_text(" (%.0f warps)", *t / *w) : ""));
  }
  if (auto b = d.num(d.key("gpu.max_blocks_per_sm"))) p.add(printf_text("%.0f blocks", *b));
  if (auto s = d.num(d.key("gpu.shared_per_block_optin_bytes"))) p.add("shared memory per block up to " + bytes_text(*s));
  if (!p.v.empty()) g.per_sm.push_back({"CUDA limits", p.v, "info", {}});
}

}  // namespace memtopo::host::draw
