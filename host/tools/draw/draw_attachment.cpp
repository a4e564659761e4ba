// The drawing's "in its host" section: where the GPU sits (NUMA node, CPUs, PCIe link, NVLinks)
// and what its links move, from the links plugin's keys (docs/links.md), with a link that
// trained below its maximum said first.
#include <string>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {

namespace {

std::string pcie_text(const Doc& d) {
  const auto gen = d.num(d.key("bus.pcie_generation")), width = d.num(d.key("bus.pcie_width_lanes"));
  if (!gen || !width) return "";
  std::string s = printf_text("PCIe Gen%.0f", *gen) + printf_text(" x%.0f", *width);
  const auto gen_max = d.num(d.key("bus.pcie_generation_max")), width_max = d.num(d.key("bus.pcie_width_max_lanes"));
  if (gen_max && width_max) s += " (of " + printf_text("Gen%.0f", *gen_max) + printf_text(" x%.0f)", *width_max);
  return s;
}

}  // namespace

void add_attachment(const Doc& d, GpuDrawing& g) {
  Parts p;
  for (const char* verdict : {"bus.pcie_health", "bus.nvlink_health"})
    if (const std::string v = d.text(d.key(verdict)); !v.empty() && v != "ok") p.add("FAULT: " + v);
  if (const std::string pcie = pcie_text(d); !pcie.empty()) p.add(pcie);
  if (auto node = d.num(d.key("host.numa_node"))) {
    std::string s = printf_text("NUMA node %.0f", *node);
    if (auto nodes = d.num(d.key("host.numa_nodes"))) s += printf_text(" of %.0f", *nodes);
    if (const std::string cpus = d.text(d.key("host.local_cpus")); !cpus.empty()) s += ", CPUs " + cpus;
    p.add(s);
  }
  if (auto links = d.num(d.key("bus.nvlink_links")); links && *links > 0)
    p.add(printf_text("%.0f", d.num(d.key("bus.nvlink_links_up")).value_or(0)) + printf_text(" of %.0f NVLinks up", *links));
  const auto in = d.num(d.key("bus.host_to_device_bytes_per_second")), out = d.num(d.key("bus.device_to_host_bytes_per_second"));
  if (in && out) p.add("copies: to the GPU " + rate_text(*in) + ", from it " + rate_text(*out));
  if (auto peer = d.num(d.key("bus.peer_bytes_per_second"))) p.add("to a peer GPU " + rate_text(*peer));
  if (!p.v.empty()) g.extras.push_back({"in its host", p.v, "info", {}});
}

}  // namespace memtopo::host::draw
