// links/attachment: where the GPU sits in its host, as the backend tells it (NVML and hwloc on
// a GPU, the description on the simulated one), and whether its links trained as built.
#include <sstream>
#include <string>
#include <vector>

#include "link_verdicts.hpp"
#include "probes.hpp"

namespace links {

namespace {

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

void report_count(memtopo::Context& ctx, const std::string& key, int v, const std::string& how, const std::string& lacks) {
  if (v >= 0) ctx.result(key, int64_t(v), {1.0, memtopo::Bound::Exact, how});
  else ctx.absent(key, lacks);
}

void report_pcie(memtopo::Context& ctx, const mt_attachment& a, const std::string& how) {
  const std::string lacks = std::string("not told (") + a.source + ")";
  const std::string busy = how + "; read while copies kept the link busy (an idle link may step down)";
  report_count(ctx, "attachment.pcie_generation", a.pcie_generation, busy, lacks);
  report_count(ctx, "attachment.pcie_generation_max", a.pcie_generation_max, how, lacks);
  report_count(ctx, "attachment.pcie_width_lanes", a.pcie_width_lanes, busy, lacks);
  report_count(ctx, "attachment.pcie_width_max_lanes", a.pcie_width_max_lanes, how, lacks);
  if (pcie_known(a.pcie_generation, a.pcie_generation_max, a.pcie_width_lanes, a.pcie_width_max_lanes)) {
    const std::string verdict = pcie_verdict(a.pcie_generation, a.pcie_generation_max, a.pcie_width_lanes, a.pcie_width_max_lanes);
    ctx.result("attachment.pcie_link", verdict, {1.0, memtopo::Bound::Exact, "the trained generation and width against their maxima"});
    if (verdict != "ok") ctx.warn("attachment.pcie_link: " + verdict);
  } else {
    ctx.absent("attachment.pcie_link", "the link's generation or width is not known (" + std::string(a.source) + ")");
  }
}

void report_nvlink(memtopo::Context& ctx, const mt_attachment& a, const std::string& how) {
  const std::string lacks = std::string("not told (") + a.source + ")";
  report_count(ctx, "attachment.nvlink_links", a.nvlink_links, how, lacks);
  report_count(ctx, "attachment.nvlink_links_up", a.nvlink_links_up, how, lacks);
  if (a.nvlink_links > 0) {
    const std::string verdict = nvlink_verdict(a.nvlink_links, a.nvlink_links_up);
    ctx.result("attachment.nvlink_state", verdict, {1.0, memtopo::Bound::Exact, "links up against links present"});
    if (verdict != "ok") ctx.warn("attachment.nvlink_state: " + verdict);
  } else {
    ctx.absent("attachment.nvlink_state", a.nvlink_links == 0 ? "the GPU has no NVLink" : lacks);
  }
  if (a.nvlink_links_up > 0 && a.nvlink_peers[0])
    ctx.result("attachment.nvlink_peers", split_commas(a.nvlink_peers), {1.0, memtopo::Bound::Exact, how});
  else
    ctx.absent("attachment.nvlink_peers", a.nvlink_links_up > 0
                                              ? "the links up name no PCI function at their other end (an NVSwitch, or a "
                                                "virtual machine that hides it)"
                                              : "no NVLink is up");
}

void measure(memtopo::Context& ctx) {
  mt_attachment a{};
  std::string why;
  if (!ctx.backend().attachment(a, why)) throw memtopo::Skip(why);
  const std::string how = a.source;
  report_count(ctx, "attachment.numa_node", a.numa_node, how, "not told (" + how + ")");
  report_count(ctx, "attachment.numa_nodes", a.numa_nodes, how, "not told (" + how + ")");
  if (a.local_cpus[0]) ctx.result("attachment.local_cpus", std::string(a.local_cpus), {1.0, memtopo::Bound::Exact, how});
  else ctx.absent("attachment.local_cpus", "not told (" + how + ")");
  report_pcie(ctx, a, how);
  report_nvlink(ctx, a, how);
}

}  // namespace

memtopo::Probe attachment_probe() {
  return memtopo::Probe("links/attachment")
      .roles({{"attachment.numa_node", "host.numa_node"},
              {"attachment.numa_nodes", "host.numa_nodes"},
              {"attachment.local_cpus", "host.local_cpus"},
              {"attachment.pcie_generation", "bus.pcie_generation"},
              {"attachment.pcie_generation_max", "bus.pcie_generation_max"},
              {"attachment.pcie_width_lanes", "bus.pcie_width_lanes"},
              {"attachment.pcie_width_max_lanes", "bus.pcie_width_max_lanes"},
              {"attachment.pcie_link", "bus.pcie_health"},
              {"attachment.nvlink_links", "bus.nvlink_links"},
              {"attachment.nvlink_links_up", "bus.nvlink_links_up"},
              {"attachment.nvlink_state", "bus.nvlink_health"}})
      .summary("Where the GPU sits in its host: NUMA node, nearest CPUs, PCIe generation and width, NVLinks")
      .provides({"attachment.numa_node", "attachment.numa_nodes", "attachment.local_cpus", "attachment.pcie_generation",
                 "attachment.pcie_generation_max", "attachment.pcie_width_lanes", "attachment.pcie_width_max_lanes",
                 "attachment.pcie_link", "attachment.nvlink_links", "attachment.nvlink_links_up",
                 "attachment.nvlink_peers", "attachment.nvlink_state"})
      // Where a GPU sits differs between healthy GPUs of one host: it names the GPU's place.
      .key("attachment.numa_node", MT_VALUE_INT, "", "the host NUMA node nearest the GPU", MT_KEY_IDENTITY)
      .key("attachment.numa_nodes", MT_VALUE_INT, "", "NUMA nodes of the host", MT_KEY_CONFIGURATION)
      .key("attachment.local_cpus", MT_VALUE_STRING, "", "the host CPUs nearest the GPU, as a list (\"0-15,32-47\")",
           MT_KEY_IDENTITY)
      .key("attachment.pcie_generation", MT_VALUE_INT, "", "PCIe generation the link trained at, read under load")
      .key("attachment.pcie_generation_max", MT_VALUE_INT, "", "the highest PCIe generation GPU and slot allow")
      .key("attachment.pcie_width_lanes", MT_VALUE_INT, "", "PCIe lanes the link trained with, read under load")
      .key("attachment.pcie_width_max_lanes", MT_VALUE_INT, "", "the most PCIe lanes GPU and slot allow")
      .key("attachment.pcie_link", MT_VALUE_STRING, "",
           "ok, or how the link trained below its maximum and the usual causes", MT_KEY_HEALTH)
      .key("attachment.nvlink_links", MT_VALUE_INT, "", "NVLinks the GPU has")
      .key("attachment.nvlink_links_up", MT_VALUE_INT, "", "NVLinks that are up")
      .key("attachment.nvlink_peers", MT_VALUE_STRING_ARRAY, "", "PCI bus ids at the other end of the NVLinks that are up",
           MT_KEY_IDENTITY)
      .key("attachment.nvlink_state", MT_VALUE_STRING, "", "ok, or how many NVLinks are down", MT_KEY_HEALTH)
      .not_replayed({"attachment.pcie_link", "attachment.nvlink_state"})
      .budget_seconds(5)
      .run(measure);
}

}  // namespace links
