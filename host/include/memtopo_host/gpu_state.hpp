// The GPU's state around a run, recorded beside the topology in [meta.gpu_state]: a fleet
// outlier is often a state (a throttling board, a busy GPU, ECC off), not a part
// (docs/fleet.md, "GPU state"). Read through NVML, which the NVIDIA driver installs; loaded at
// run time, so memtopo neither links it nor needs it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "memtopo/abi.h"
#include "memtopo_host/value.hpp"

namespace memtopo::host {

using GpuState = std::vector<std::pair<std::string, Value>>;

// The state of the CUDA GPU `info` names (by PCI bus id) now: driver version, clocks, power
// limit and draw, ECC mode and error counts, retired pages and remapped rows, MIG mode,
// throttle reasons, temperature, utilization, compute processes.
// `when` prefixes the keys that change during a run ("start", "end": start_temperature_c); the
// rest are written once (with `when` "start"). A simulated GPU, or no NVML: {source = "..."}.
GpuState read_gpu_state(const mt_device_info& info, const std::string& when);

// The keys of [meta.gpu_state] in the order a run writes them (read_gpu_state at the start,
// then at the end), so that `export` writes a run's file back byte for byte.
std::vector<std::string> gpu_state_key_order();

// What in a recorded state makes a measurement doubtful, one line each ("throttled at the end:
// sw_power_cap", "not idle at the start: 37 % utilization", "2 processes had a CUDA context",
// uncorrected ECC errors, a failed or pending memory repair). Rows remapped in the past are
// recorded, not warned: a remap that took is a repair, and the GPU is healthy.
std::vector<std::string> gpu_state_warnings(const nlohmann::json& state);

}  // namespace memtopo::host
