// The NVML C interface, declared here: only stable entry points of the driver's
// libnvidia-ml.so.1, each looked up by name and skipped where the driver lacks it. Loaded at
// run time, so memtopo neither links NVML nor needs it.
#pragma once

#include <dlfcn.h>

#include <string>

namespace memtopo::host {

using nvml_device = void*;
using nvml_return = int;  // 0: success
constexpr nvml_return kNvmlSuccess = 0, kNvmlInsufficientSize = 7;
constexpr unsigned kClockSm = 1, kClockMem = 2;

struct Nvml {
  void* lib = nullptr;
  nvml_device device = nullptr;
  template <typename F>
  F fn(const char* name) const {
    return lib ? reinterpret_cast<F>(::dlsym(lib, name)) : nullptr;
  }
};

// Opens NVML (once per process, again after close_nvml) and the device with this PCI bus id;
// empty Nvml (lib null) when either fails, with the reason in `why`. The handle is valid
// until close_nvml: take a new one for each reading.
Nvml open_nvml(const std::string& pci_bus_id, std::string* why);

// Shuts NVML down where this process opened it. Called before a worker forks: a child of a
// process that holds NVML open cannot open it.
void close_nvml();

}  // namespace memtopo::host
