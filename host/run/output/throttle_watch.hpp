// Whether the GPU held its clocks back while a probe measured (docs/measurement.md, "Start
// state and conditions"): NVML's violation counters, the time the GPU spent below the clocks
// asked of it for power, thermal, board and reliability limits, read when each probe starts
// and ends. Every timed launch of a probe falls between the two reads, so none that ran
// throttled goes unseen; a probe that did is named in [meta.gpu_state] and warned about.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "memtopo/abi.h"
#include "topology/values/gpu_state.hpp"

namespace memtopo::host {

// Nanoseconds below the asked clocks, per limit (power, thermal, board, reliability), since
// the driver loaded.
using ViolationSample = std::array<uint64_t, 4>;
extern const std::array<const char*, 4> kViolationLimits;

// "power 12.0 ms, thermal 3.1 ms" for the limits that held the clocks back between `before`
// and `after`, or empty where none did (counters that went back are ignored).
std::string throttle_between(const ViolationSample& before, const ViolationSample& after);

class ThrottleWatch {
 public:
  // Watches the CUDA GPU `info` names; on a simulated GPU, or without NVML's counters, it
  // watches nothing and entries() is empty.
  explicit ThrottleWatch(const mt_device_info& info);
  void probe_started();
  void probe_finished(const std::string& probe);
  // [meta.gpu_state] entries: throttled_probes and, beside each, throttled_during; none when
  // no probe ran throttled.
  GpuState entries() const;

 private:
  bool read(ViolationSample& out) const;
  std::string pci_bus_id_;
  bool watching_ = false;
  ViolationSample at_start_{};
  bool started_ = false;
  std::vector<std::string> probes_, during_;
};

}  // namespace memtopo::host
