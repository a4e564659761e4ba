// NVML through dlopen (nvml_query.hpp): the few calls and types of its stable C interface.
#include "nvml_query.hpp"

#include <dlfcn.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <mutex>
#include <vector>

namespace memtopo::cuda {

namespace {

using nvmlDevice = void*;
constexpr int kSuccess = 0;
constexpr unsigned kNvlinkMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS

struct PciInfo {  // nvmlPciInfo_t
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

struct NvmlApi {
  int (*init)();
  int (*by_bus_id)(const char*, nvmlDevice*);
  int (*version)(char*, unsigned);
  int (*curr_gen)(nvmlDevice, unsigned*);
  int (*max_gen)(nvmlDevice, unsigned*);
  int (*curr_width)(nvmlDevice, unsigned*);
  int (*max_width)(nvmlDevice, unsigned*);
  int (*nvlink_state)(nvmlDevice, unsigned, int*);
  int (*nvlink_remote)(nvmlDevice, unsigned, PciInfo*);
  int (*cpu_affinity)(nvmlDevice, unsigned, unsigned long*);
  std::string why_not;
};

// What the process holds when NVML refuses to open: its open files and memory mappings, the
// resources an operating-system refusal (NVML_ERROR_OPERATING_SYSTEM) runs out of.
std::string process_resources() {
  size_t files = 0, mappings = 0;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator("/proc/self/fd", ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    ++files;
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) ++mappings;
  return std::to_string(files) + " open files, " + std::to_string(mappings) + " memory mappings";
}

template <class F>
void bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}

const NvmlApi& api() {
  static NvmlApi a{};
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      a.why_not = "libnvidia-ml.so.1 not found (the NVIDIA driver's management library)";
      return;
    }
    bind(lib, "nvmlInit_v2", a.init);
    bind(lib, "nvmlDeviceGetHandleByPciBusId_v2", a.by_bus_id);
    bind(lib, "nvmlSystemGetNVMLVersion", a.version);
    bind(lib, "nvmlDeviceGetCurrPcieLinkGeneration", a.curr_gen);
    bind(lib, "nvmlDeviceGetMaxPcieLinkGeneration", a.max_gen);
    bind(lib, "nvmlDeviceGetCurrPcieLinkWidth", a.curr_width);
    bind(lib, "nvmlDeviceGetMaxPcieLinkWidth", a.max_width);
    bind(lib, "nvmlDeviceGetNvLinkState", a.nvlink_state);
    bind(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2", a.nvlink_remote);
    bind(lib, "nvmlDeviceGetCpuAffinity", a.cpu_affinity);
    if (!a.init || !a.by_bus_id) a.why_not = "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetHandleByPciBusId_v2";
    else if (const int rc = a.init(); rc != kSuccess)
      a.why_not = "nvmlInit_v2 returned " + std::to_string(rc) + " with " + process_resources();
  });
  return a;
}

int number(int (*f)(nvmlDevice, unsigned*), nvmlDevice d) {
  unsigned v = 0;
  return f && f(d, &v) == kSuccess ? int(v) : -1;
}

// "0-15,32-47" from the bit mask NVML gives.
std::string cpu_list(const std::vector<unsigned long>& mask) {
  std::string out;
  const int bits = int(mask.size() * sizeof(unsigned long) * 8);
  auto set = [&](int i) { return (mask[size_t(i) / (sizeof(unsigned long) * 8)] >> (i % (sizeof(unsigned long) * 8))) & 1ul; };
  for (int i = 0; i < bits;) {
    if (!set(i)) {
      ++i;
      continue;
    }
    int j = i;
    while (j + 1 < bits && set(j + 1)) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(i) + (j > i ? "-" + std::to_string(j) : "");
    i = j + 1;
  }
  return out;
}

}  // namespace

NvmlLinks query_nvml(const char* pci_bus_id) {
  NvmlLinks out;
  const NvmlApi& a = api();
  if (!a.why_not.empty()) {
    out.why_not = a.why_not;
    return out;
  }
  nvmlDevice d = nullptr;
  if (a.by_bus_id(pci_bus_id, &d) != kSuccess) {
    out.why_not = std::string("NVML does not know the GPU at ") + pci_bus_id;
    return out;
  }
  char version[96] = {0};
  out.version = a.version && a.version(version, sizeof version) == kSuccess ? std::string("NVML ") + version : "NVML";
  out.pcie_generation = number(a.curr_gen, d);
  out.pcie_generation_max = number(a.max_gen, d);
  out.pcie_width_lanes = number(a.curr_width, d);
  out.pcie_width_max_lanes = number(a.max_width, d);
  if (a.nvlink_state) {
    out.nvlink_links = out.nvlink_links_up = 0;
    for (unsigned l = 0; l < kNvlinkMaxLinks; ++l) {
      int active = 0;
      if (a.nvlink_state(d, l, &active) != kSuccess) continue;
      ++out.nvlink_links;
      if (!active) continue;
      ++out.nvlink_links_up;
      PciInfo remote{};
      if (a.nvlink_remote && a.nvlink_remote(d, l, &remote) == kSuccess) {
        remote.bus_id[sizeof remote.bus_id - 1] = 0;
        const std::string id = remote.bus_id;
        // A link that ends at an NVSwitch (or is hidden from a virtual machine) names no PCI
        // function: all ones.
        if (id.rfind("FFFFFFFF", 0) == 0 || id.rfind("ffffffff", 0) == 0) continue;
        if (!id.empty() && out.nvlink_peers.find(id) == std::string::npos)
          out.nvlink_peers += (out.nvlink_peers.empty() ? "" : ",") + id;
      }
    }
  }
  if (a.cpu_affinity) {
    std::vector<unsigned long> mask(64, 0);  // 4096 CPUs
    if (a.cpu_affinity(d, unsigned(mask.size()), mask.data()) == kSuccess) out.local_cpus = cpu_list(mask);
  }
  return out;
}

}  // namespace memtopo::cuda
