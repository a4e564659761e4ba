// Reading the GPU's state through NVML, which the NVIDIA driver installs; loaded at run time,
// so memtopo neither links it nor needs it. Not installed.
#pragma once

#include <string>

#include "memtopo/abi.h"
#include "topology/values/gpu_state.hpp"

namespace memtopo::host {

// The state of the CUDA GPU `info` names (by PCI bus id) now: driver version, clocks, power
// limit and draw, ECC mode and error counts, retired pages and remapped rows, MIG mode,
// throttle reasons, temperature, utilization, compute processes.
// `when` prefixes the keys that change during a run ("start", "end": start_temperature_c); the
// rest are written once (with `when` "start"). A simulated GPU, or no NVML: {source = "..."}.
GpuState read_gpu_state(const mt_device_info& info, const std::string& when);

}  // namespace memtopo::host
