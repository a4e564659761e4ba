// The simulated GPU in its host: where it sits ([attachment]) and what its links move ([link],
// [sim.link]), read from the description and priced by mt_backend::time_link_copies.
// Semantics: docs/simulator.md, "The host link".
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtopo/measure.h"

namespace memtopo::sim {

class Reader;

struct LinkModel {
  int32_t numa_node = 0, numa_nodes = 1;
  std::string local_cpus;  // "": not described
  int32_t pcie_generation = 4, pcie_generation_max = 4, pcie_width_lanes = 16, pcie_width_max_lanes = 16;
  int32_t nvlink_links = 0, nvlink_links_up = 0;
  std::vector<std::string> nvlink_peers;
  // Bytes per second of a large copy each way, near and far; latency of a small one.
  double host_to_device_bytes_per_second = 0, device_to_host_bytes_per_second = 0;
  double host_to_device_far_bytes_per_second = 0, device_to_host_far_bytes_per_second = 0;
  double host_to_device_latency_ns = 0, device_to_host_latency_ns = 0;
  double peer_bytes_per_second = 0;
  uint32_t peers = 0;
};

// Reads [attachment], [link] and [sim.link]; what they leave out follows from the PCIe link.
LinkModel read_link(Reader& attachment, Reader& link, Reader& sim_link);

// PCIe payload bytes per second per lane after line coding, for generation 1 to 6; 0 beyond.
double pcie_lane_bytes_per_second(int32_t generation);

void fill_attachment(const LinkModel& m, mt_attachment& out);
// Each copy's time: the latency plus the bytes at the link's rate. Returns 0, or
// MT_LINK_UNAVAILABLE with `why` set.
int time_link_copies(const LinkModel& m, mt_link_copy& copy, std::string& why);

}  // namespace memtopo::sim
