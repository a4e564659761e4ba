// The simulated GPU's host link (sim_link.hpp): the description's [attachment] and [link], the
// rest derived from the PCIe generation and width.
#include "sim/sim_link.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "sim/sim_reader.hpp"

namespace memtopo::sim {

namespace {

// A DMA copy moves this share of the link's coded rate as payload (packet headers, flow
// control), near what GPUs of PCIe 3 to 5 reach with page-locked memory.
constexpr double kDefaultPcieEfficiency = 0.85;
constexpr double kDefaultFarFraction = 0.8;     // host memory one NUMA hop away
constexpr double kDefaultLatencyNs = 2000;      // a small copy, enqueue to completion
constexpr double kNvlinkBytesPerSecond = 25e9;  // one NVLink, each way (NVLink 4)

int32_t count_of(Reader& r, const char* key, int32_t def, int32_t most) {
  const auto v = r.integer(key);
  if (!v) return def;
  if (*v < 0 || *v > most) r.fail(key, "must be within 0.." + std::to_string(most));
  return int32_t(*v);
}

double rate_of(Reader& r, const char* key) {
  const double v = r.number(key).value_or(0);
  if (v < 0 || !std::isfinite(v)) r.fail(key, "must be a positive number (or absent: derived from the PCIe link)");
  return v;
}

std::vector<std::string> strings_of(Reader& r, const char* key) {
  std::vector<std::string> out;
  const toml::node* n = r.node(key);
  if (!n) return out;
  const toml::array* a = n->as_array();
  if (!a) r.fail(key, "must be an array of PCI bus ids (strings)");
  for (const toml::node& e : *a) {
    if (!e.is_string()) r.fail(key, "must be an array of PCI bus ids (strings)");
    out.push_back(e.as_string()->get());
  }
  return out;
}

}  // namespace

double pcie_lane_bytes_per_second(int32_t generation) {
  switch (generation) {
    case 1: return 2.5e9 * 8 / 10 / 8;  // 8b/10b
    case 2: return 5e9 * 8 / 10 / 8;
    case 3: return 8e9 * 128 / 130 / 8;  // 128b/130b
    case 4: return 16e9 * 128 / 130 / 8;
    case 5: return 32e9 * 128 / 130 / 8;
    case 6: return 64e9 * 242 / 256 / 8;  // FLIT mode
    default: return 0;
  }
}

LinkModel read_link(Reader& a, Reader& l, Reader& s) {
  LinkModel m;
  m.numa_nodes = count_of(a, "numa_nodes", 1, 4096);
  m.numa_node = count_of(a, "numa_node", 0, 4095);
  if (m.numa_nodes < 1) a.fail("numa_nodes", "must be at least 1");
  if (m.numa_node >= m.numa_nodes)
    a.fail("numa_node", std::to_string(m.numa_node) + " is not one of the " + std::to_string(m.numa_nodes) +
                            " nodes (numa_nodes); nodes are numbered from 0");
  m.local_cpus = a.string("local_cpus").value_or("");
  m.pcie_generation = count_of(a, "pcie_generation", 4, 6);
  m.pcie_generation_max = count_of(a, "pcie_generation_max", m.pcie_generation, 6);
  m.pcie_width_lanes = count_of(a, "pcie_width_lanes", 16, 32);
  m.pcie_width_max_lanes = count_of(a, "pcie_width_max_lanes", m.pcie_width_lanes, 32);
  if (m.pcie_generation < 1) a.fail("pcie_generation", "must be within 1..6");
  if (m.pcie_width_lanes < 1) a.fail("pcie_width_lanes", "must be within 1..32");
  if (m.pcie_generation > m.pcie_generation_max) a.fail("pcie_generation", "is above pcie_generation_max");
  if (m.pcie_width_lanes > m.pcie_width_max_lanes) a.fail("pcie_width_lanes", "is above pcie_width_max_lanes");
  m.nvlink_links = count_of(a, "nvlink_links", 0, 64);
  m.nvlink_links_up = count_of(a, "nvlink_links_up", m.nvlink_links, 64);
  if (m.nvlink_links_up > m.nvlink_links) a.fail("nvlink_links_up", "is above nvlink_links");
  m.nvlink_peers = strings_of(a, "nvlink_peers");
  for (const char* verdict : {"pcie_link", "nvlink_state"}) a.ignore(verdict);  // the probe's verdicts

  const double efficiency = s.number("pcie_efficiency").value_or(kDefaultPcieEfficiency);
  if (!(efficiency > 0 && efficiency <= 1)) s.fail("pcie_efficiency", "must be within (0, 1]");
  const double far = s.number("far_fraction").value_or(kDefaultFarFraction);
  if (!(far > 0 && far <= 1)) s.fail("far_fraction", "must be within (0, 1]");
  const double pcie = pcie_lane_bytes_per_second(m.pcie_generation) * m.pcie_width_lanes * efficiency;
  auto rate = [&](const char* key, double def) {
    const double v = rate_of(l, key);
    return v > 0 ? v : def;
  };
  m.host_to_device_bytes_per_second = rate("host_to_device_bytes_per_second", pcie);
  m.device_to_host_bytes_per_second = rate("device_to_host_bytes_per_second", pcie);
  m.host_to_device_far_bytes_per_second =
      rate("host_to_device_far_bytes_per_second", m.host_to_device_bytes_per_second * far);
  m.device_to_host_far_bytes_per_second =
      rate("device_to_host_far_bytes_per_second", m.device_to_host_bytes_per_second * far);
  m.host_to_device_latency_ns = rate("host_to_device_latency_s", kDefaultLatencyNs * 1e-9) * 1e9;
  m.device_to_host_latency_ns = rate("device_to_host_latency_s", kDefaultLatencyNs * 1e-9) * 1e9;
  const uint32_t peers_default = uint32_t(m.nvlink_peers.empty() ? 0 : 1);
  m.peers = uint32_t(count_of(s, "peers", int32_t(peers_default), 64));
  m.peer_bytes_per_second =
      rate("peer_bytes_per_second", m.nvlink_links_up > 0 ? m.nvlink_links_up * kNvlinkBytesPerSecond : pcie);
  return m;
}

void fill_attachment(const LinkModel& m, mt_attachment& out) {
  out.numa_node = m.numa_node;
  out.numa_nodes = m.numa_nodes;
  std::snprintf(out.local_cpus, sizeof out.local_cpus, "%s", m.local_cpus.c_str());
  out.pcie_generation = m.pcie_generation;
  out.pcie_generation_max = m.pcie_generation_max;
  out.pcie_width_lanes = m.pcie_width_lanes;
  out.pcie_width_max_lanes = m.pcie_width_max_lanes;
  out.nvlink_links = m.nvlink_links;
  out.nvlink_links_up = m.nvlink_links_up;
  std::string peers;
  for (const auto& p : m.nvlink_peers) peers += (peers.empty() ? "" : ",") + p;
  std::snprintf(out.nvlink_peers, sizeof out.nvlink_peers, "%s", peers.c_str());
  std::snprintf(out.source, sizeof out.source, "the simulated device's description");
}

int time_link_copies(const LinkModel& m, mt_link_copy& c, std::string& why) {
  const bool far = c.host_numa_node == MT_HOST_NUMA_FAR ||
                   (c.host_numa_node >= 0 && c.host_numa_node != m.numa_node);
  double rate = 0, latency = 0;
  c.peers = int32_t(m.peers);
  c.numa_node_used = -1;
  switch (c.direction) {
    case MT_LINK_HOST_TO_DEVICE:
    case MT_LINK_DEVICE_TO_HOST: {
      const bool in = c.direction == MT_LINK_HOST_TO_DEVICE;
      if (far && m.numa_nodes < 2) {
        why = "the simulated host has one NUMA node ([attachment] numa_nodes)";
        return MT_LINK_UNAVAILABLE;
      }
      if (c.host_numa_node >= m.numa_nodes) {
        why = "no NUMA node " + std::to_string(c.host_numa_node) + " ([attachment] numa_nodes)";
        return MT_LINK_UNAVAILABLE;
      }
      rate = far ? (in ? m.host_to_device_far_bytes_per_second : m.device_to_host_far_bytes_per_second)
                 : (in ? m.host_to_device_bytes_per_second : m.device_to_host_bytes_per_second);
      latency = in ? m.host_to_device_latency_ns : m.device_to_host_latency_ns;
      c.numa_node_used = c.host_numa_node >= 0 ? c.host_numa_node : far ? (m.numa_node + 1) % m.numa_nodes : m.numa_node;
      break;
    }
    case MT_LINK_PEER:
      if (c.peer >= m.peers) {
        why = m.peers ? "the simulated GPU reaches " + std::to_string(m.peers) + " peers" : "the simulated GPU has no peer";
        return MT_LINK_UNAVAILABLE;
      }
      rate = m.peer_bytes_per_second;
      latency = m.host_to_device_latency_ns;
      std::snprintf(c.peer_name, sizeof c.peer_name, "%s",
                    c.peer < m.nvlink_peers.size() ? m.nvlink_peers[c.peer].c_str() : "simulated peer");
      break;
    default:
      why = "unknown direction " + std::to_string(c.direction);
      return 1;
  }
  for (uint32_t i = 0; i < c.repeats; ++i) c.elapsed_ns[i] = latency + double(c.bytes) / rate * 1e9;
  return 0;
}

}  // namespace memtopo::sim
