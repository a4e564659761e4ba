// What the links probes conclude from what the backend told or timed: the link's verdicts
// and the rates of timed copies. Plain C++, tested without a GPU (tests/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace links {

// "ok" where the PCIe link trained at its maximum generation and width; else what is lower, by
// how much, and the usual causes. A field below 1 is unknown: "ok" only where all four are known.
std::string pcie_verdict(int generation, int generation_max, int width_lanes, int width_max_lanes);
// "ok" where every NVLink is up; else how many are down.
std::string nvlink_verdict(int links, int links_up);
// Whether the four PCIe fields are known (pcie_verdict judges only then).
bool pcie_known(int generation, int generation_max, int width_lanes, int width_max_lanes);

// A series of timed copies of one size: the rate of its median copy and the spread.
struct CopyRate {
  double median_ns = 0, p10_ns = 0, p90_ns = 0;
  double bytes_per_second = 0;  // bytes over the median copy's time
};
CopyRate copy_rate(uint64_t bytes, std::vector<double> elapsed_ns);

}  // namespace links
