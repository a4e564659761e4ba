#include "run/running/nvml_library.hpp"

#include <mutex>

namespace memtopo::host {

namespace {

// NVML is initialised once for the process and shut down before a worker forks: a process
// forked while its parent holds NVML open cannot open it (nvmlInit_v2 fails there).
struct NvmlSession {
  std::mutex lock;
  void* lib = nullptr;  // dlopen'ed once, never unloaded
  bool tried_load = false, initialised = false;
};

NvmlSession& session() {
  static NvmlSession s;
  return s;
}

}  // namespace

Nvml open_nvml(const std::string& pci_bus_id, std::string* why) {
  NvmlSession& s = session();
  std::lock_guard<std::mutex> hold(s.lock);
  if (!s.tried_load) {
    s.tried_load = true;
    s.lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  }
  Nvml n;
  if (!s.lib) {
    *why = "no NVML (libnvidia-ml.so.1 not found)";
    return n;
  }
  n.lib = s.lib;
  auto init = n.fn<nvml_return (*)()>("nvmlInit_v2");
  auto by_bus = n.fn<nvml_return (*)(const char*, nvml_device*)>("nvmlDeviceGetHandleByPciBusId_v2");
  if (!s.initialised && init && init() == kNvmlSuccess) s.initialised = true;
  if (!s.initialised || !by_bus || by_bus(pci_bus_id.c_str(), &n.device) != kNvmlSuccess) {
    *why = "NVML does not know the GPU at " + pci_bus_id;
    n = Nvml{};
  }
  return n;
}

void close_nvml() {
  NvmlSession& s = session();
  std::lock_guard<std::mutex> hold(s.lock);
  if (!s.initialised) return;
  Nvml n;
  n.lib = s.lib;
  if (auto shutdown = n.fn<nvml_return (*)()>("nvmlShutdown")) shutdown();
  s.initialised = false;
}

}  // namespace memtopo::host
