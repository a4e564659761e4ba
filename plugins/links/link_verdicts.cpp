// The links probes' conclusions (link_verdicts.hpp).
#include "link_verdicts.hpp"

#include <algorithm>
#include <cmath>

namespace links {

namespace {

std::string pcie_text(int generation, int width) {
  return "Gen" + std::to_string(generation) + " x" + std::to_string(width);
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double at = p * double(sorted.size() - 1);
  const size_t lo = size_t(std::floor(at)), hi = std::min(sorted.size() - 1, lo + 1);
  return sorted[lo] + (at - double(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace

bool pcie_known(int generation, int generation_max, int width_lanes, int width_max_lanes) {
  return generation > 0 && generation_max > 0 && width_lanes > 0 && width_max_lanes > 0;
}

std::string pcie_verdict(int generation, int generation_max, int width_lanes, int width_max_lanes) {
  if (!pcie_known(generation, generation_max, width_lanes, width_max_lanes)) return "unknown";
  const bool narrow = width_lanes < width_max_lanes, slow = generation < generation_max;
  if (!narrow && !slow) return "ok";
  std::string why = "PCIe " + pcie_text(generation, width_lanes) + ", below its maximum " +
                    pcie_text(generation_max, width_max_lanes) + ": ";
  if (narrow) why += "the link trained " + std::to_string(width_lanes) + " of " + std::to_string(width_max_lanes) + " lanes wide";
  if (narrow && slow) why += " and ";
  if (slow) why += "at generation " + std::to_string(generation) + " of " + std::to_string(generation_max);
  why += narrow ? " (a card not fully seated, a riser or slot wired narrower, a damaged lane)"
                : " (a signal-integrity fallback: a riser, a retimer, a BIOS setting)";
  return why;
}

std::string nvlink_verdict(int links, int links_up) {
  if (links <= 0 || links_up >= links) return "ok";
  return std::to_string(links - links_up) + " of " + std::to_string(links) + " NVLinks down";
}

CopyRate copy_rate(uint64_t bytes, std::vector<double> elapsed_ns) {
  CopyRate r;
  if (elapsed_ns.empty()) return r;
  std::sort(elapsed_ns.begin(), elapsed_ns.end());
  r.median_ns = percentile(elapsed_ns, 0.5);
  r.p10_ns = percentile(elapsed_ns, 0.1);
  r.p90_ns = percentile(elapsed_ns, 0.9);
  r.bytes_per_second = r.median_ns > 0 ? double(bytes) / r.median_ns * 1e9 : 0;
  return r;
}

}  // namespace links
