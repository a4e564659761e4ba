#include "formats/nvml_library.hpp"

namespace memtopo::host {

Nvml open_nvml(const std::string& pci_bus_id, std::string* why) {
  Nvml n;
  n.lib = ::dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n.lib) {
    *why = "no NVML (libnvidia-ml.so.1 not found)";
    return n;
  }
  auto init = n.fn<nvml_return (*)()>("nvmlInit_v2");
  auto by_bus = n.fn<nvml_return (*)(const char*, nvml_device*)>("nvmlDeviceGetHandleByPciBusId_v2");
  if (!init || !by_bus || init() != kNvmlSuccess || by_bus(pci_bus_id.c_str(), &n.device) != kNvmlSuccess) {
    *why = "NVML does not know the GPU at " + pci_bus_id;
    n.lib = nullptr;  // the library stays loaded (libraries are never unloaded before exit)
  }
  return n;
}

}  // namespace memtopo::host
