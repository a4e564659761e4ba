#include "topology/values/gpu_state.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace memtopo::host {

std::vector<std::string> gpu_state_key_order() {
  std::vector<std::string> keys{"source",          "nvidia_driver_version",
                                "max_sm_clock_mhz", "max_memory_clock_mhz",
                                "applications_sm_clock_mhz", "default_applications_sm_clock_mhz",
                                "power_limit_w",   "default_power_limit_w",
                                "ecc_enabled",     "mig_enabled",
                                "persistence_mode", "ecc_corrected_errors",
                                "ecc_uncorrected_errors", "retired_pages",
                                "retired_pages_pending", "remapped_rows_corrected",
                                "remapped_rows_uncorrected", "row_remap_pending",
                                "row_remap_failed"};
  for (const char* when : {"start_", "end_"})
    for (const char* k : {"throttle_reasons", "temperature_c", "sm_clock_mhz", "power_draw_w", "utilization_percent",
                          "compute_processes"})
      keys.push_back(std::string(when) + k);
  for (const char* k : {"throttled_probes", "throttled_during"}) keys.push_back(k);  // throttle_watch.hpp
  return keys;
}

std::vector<std::string> gpu_state_warnings(const nlohmann::json& state) {
  std::vector<std::string> out;
  if (!state.is_object()) return out;
  auto number = [&](const std::string& key) -> double {
    const auto it = state.find(key);
    // Capped: a file's 1e300 would overflow the int each warning shows.
    return it != state.end() && it->is_number() ? std::min(it->get<double>(), 1e9) : -1;
  };
  for (const char* when : {"start", "end"}) {
    const std::string w(when);
    if (auto r = state.find(w + "_throttle_reasons"); r != state.end() && r->is_array()) {
      std::string list;
      for (const auto& reason : *r)
        if (reason.is_string() && reason != "gpu_idle" && reason != "applications_clocks_setting")
          list += (list.empty() ? "" : ", ") + reason.get<std::string>();
      if (!list.empty()) out.push_back("clocks held back at the " + w + ": " + list);
    }
  }
  if (auto probes = state.find("throttled_probes"); probes != state.end() && probes->is_array() && !probes->empty()) {
    const auto during = state.find("throttled_during");
    std::string list;
    for (size_t i = 0; i < probes->size() && i < 3; ++i) {
      const auto& p = (*probes)[i];
      list += (i ? "; " : "") + (p.is_string() ? p.get<std::string>() : std::string("?"));
      if (during != state.end() && during->is_array() && i < during->size() && (*during)[i].is_string())
        list += " (" + (*during)[i].get<std::string>() + ")";
    }
    if (probes->size() > 3) list += "; " + std::to_string(probes->size() - 3) + " more";
    out.push_back("clocks held back while " + std::to_string(probes->size()) + " probe" +
                  (probes->size() == 1 ? "" : "s") + " measured: " + list);
  }
  if (const double u = number("start_utilization_percent"); u > 10)
    out.push_back("not idle at the start: " + std::to_string(static_cast<int>(u)) + " % utilization");
  if (const double p = number("start_compute_processes"); p > 1)
    out.push_back(std::to_string(static_cast<int>(p)) + " processes held a CUDA context at the start (memtopo's is one)");
  if (auto mig = state.find("mig_enabled"); mig != state.end() && mig->is_boolean() && mig->get<bool>())
    out.push_back("MIG is enabled: the values are those of one GPU instance");
  auto flag = [&](const char* key) {
    const auto it = state.find(key);
    return it != state.end() && it->is_boolean() && it->get<bool>();
  };
  if (const double e = number("ecc_uncorrected_errors"); e > 0)
    out.push_back(std::to_string(static_cast<int64_t>(e)) + " uncorrected ECC errors since the driver loaded");
  if (flag("row_remap_failed")) out.push_back("a row remap failed: the GPU needs service");
  if (flag("row_remap_pending") || flag("retired_pages_pending"))
    out.push_back("a memory repair is pending until the GPU is reset");
  const double limit = number("power_limit_w"), standard = number("default_power_limit_w");
  if (limit > 0 && standard > 0 && limit < 0.95 * standard)
    out.push_back("power limit " + std::to_string(static_cast<int>(limit)) + " W, below the default " +
                  std::to_string(static_cast<int>(standard)) + " W");
  return out;
}

}  // namespace memtopo::host
