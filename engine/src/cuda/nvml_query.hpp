// What the driver's management library (NVML, opened at run time: no build dependency) tells
// of one GPU's links.
#pragma once

#include <string>

namespace memtopo::cuda {

struct NvmlLinks {
  int pcie_generation = -1, pcie_generation_max = -1, pcie_width_lanes = -1, pcie_width_max_lanes = -1;
  int nvlink_links = -1, nvlink_links_up = -1;
  std::string nvlink_peers;  // PCI bus ids, comma-separated
  std::string local_cpus;    // the CPUs NVML names near the GPU, as a list ("0-15")
  std::string version;       // "NVML 12.575.57"; "" where NVML could not be used
  std::string why_not;       // why NVML could not be used
};

NvmlLinks query_nvml(const char* pci_bus_id);

}  // namespace memtopo::cuda
