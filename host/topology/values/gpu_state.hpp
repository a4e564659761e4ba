// The GPU's state around a run, recorded beside the topology in [meta.gpu_state]: a fleet
// outlier is often a state (a throttling board, a busy GPU, ECC off), not a part
// (docs/fleet.md, "GPU state"). What a run records (read_gpu_state, gpu_reading.hpp) and what
// a reader of the file makes of it.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "topology/values/value.hpp"

namespace memtopo::host {

using GpuState = std::vector<std::pair<std::string, Value>>;

// The keys of [meta.gpu_state] in the order a run writes them (read_gpu_state at the start,
// then at the end), so that `export` writes a run's file back byte for byte.
std::vector<std::string> gpu_state_key_order();

// What in a recorded state makes a measurement doubtful, one line each ("throttled at the end:
// sw_power_cap", "not idle at the start: 37 % utilization", "2 processes had a CUDA context",
// uncorrected ECC errors, a failed or pending memory repair). Rows remapped in the past are
// recorded, not warned: a remap that took is a repair, and the GPU is healthy.
std::vector<std::string> gpu_state_warnings(const nlohmann::json& state);

}  // namespace memtopo::host
