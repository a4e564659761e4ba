// `memtopo export --hwloc`: the host's hwloc topology as XML, with each measured GPU's memory
// hierarchy attached to the GPU's PCI device as Misc objects (name and info attributes), so that
// `lstopo --input host.xml` shows what memtopo measured (docs/links.md, "hwloc and lstopo").
// A GPU the host has no PCI device for (a simulated one, or a topology measured elsewhere) hangs
// from the host's root object, its info saying why.
#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "tools/export/topology_export.hpp"
#include "tools/export/topology_reads.hpp"

#ifdef MEMTOPO_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace memtopo::host {

#ifdef MEMTOPO_HAVE_HWLOC
namespace {

class GpuAttacher {
 public:
  GpuAttacher(hwloc_topology_t topo, const toml::table& doc, std::string source)
      : topo_(topo), t_(doc), source_(std::move(source)) {}

  void attach() {
    hwloc_obj_t parent = pci_device();
    const std::string name = t_.text(t_.key("gpu.name")).value_or("GPU");
    hwloc_obj_t gpu = misc(parent, "GPU " + name + " (memtopo)");
    info(gpu, "memtopo_topology", source_);
    for (const char* role : {"gpu.uuid", "gpu.pci_bus_id", "gpu.compute_capability", "gpu.sm_count"}) text_info(gpu, role);
    if (!found_) info(gpu, "memtopo_attachment", why_not_found_);
    for (const char* role : {"host.numa_node", "bus.host_to_device_bytes_per_second", "bus.device_to_host_bytes_per_second"})
      number_info(gpu, role);
    hwloc_obj_t dram = misc(gpu, "DRAM " + size_text(t_.key("gpu.global_memory_bytes")));
    for (const char* role : {"memory.latency_cycles@main", "memory.read_bytes_per_second@main", "memory.write_bytes_per_second@main"})
      number_info(dram, role);
    for (const auto& [size, subject] : caches()) {
      // Named by its table ("l2 50 MiB"), as lstopo names a cache by its level.
      const std::string& size_key = t_.key("cache.size_bytes@" + subject);
      const std::string b = t_.bound(size_key);
      const std::string element = size_key.substr(0, size_key.find('.'));
      hwloc_obj_t c = misc(gpu, element + (b == "exact" ? " " : b == "at_least" ? " at least " : " at most ") + size_words(size));
      for (const auto& [role, k] : t_.roles().starting_with("cache."))
        if (role.size() > subject.size() && role.compare(role.size() - subject.size() - 1, std::string::npos, "@" + subject) == 0) {
          if (auto v = t_.text(k)) info(c, k, *v);
          else if (auto n = t_.number(k)) info(c, k, number_text(*n) + bound_suffix(k));
        }
    }
    hwloc_obj_t shared = misc(gpu, "shared memory " + size_text(t_.key("gpu.shared_per_sm_bytes")) + " per SM");
    number_info(shared, "memory.latency_cycles@shared");
    number_info(gpu, "cache.read_bytes_per_second@l2_cache");
  }

 private:
  hwloc_obj_t pci_device() {
    const std::string bus = t_.text(t_.key("gpu.pci_bus_id")).value_or("");
    unsigned domain = 0, b = 0, dev = 0, fn = 0;
    if (std::sscanf(bus.c_str(), "%x:%x:%x.%x", &domain, &b, &dev, &fn) == 4)
      if (hwloc_obj_t obj = hwloc_get_pcidev_by_busid(topo_, domain, b, dev, fn)) {
        found_ = true;
        return obj;
      }
    why_not_found_ = bus.empty() ? "the topology names no PCI bus id (a simulated GPU): attached to the host's root"
                                 : "this host has no PCI device " + bus + ": attached to the host's root";
    return hwloc_get_root_obj(topo_);
  }
  hwloc_obj_t misc(hwloc_obj_t parent, const std::string& name) {
    hwloc_obj_t o = hwloc_topology_insert_misc_object(topo_, parent, name.c_str());
    if (!o) throw TopologyExportError(0, "hwloc refused a Misc object under " + std::string(hwloc_obj_type_string(parent->type)));
    return o;
  }
  void info(hwloc_obj_t o, const std::string& name, const std::string& value) {
    hwloc_obj_add_info(o, name.c_str(), value.c_str());
  }
  void text_info(hwloc_obj_t o, const char* role) {
    const std::string& k = t_.key(role);
    if (auto v = t_.text(k)) info(o, k, *v);
    else if (auto n = t_.number(k)) info(o, k, number_text(*n));
  }
  void number_info(hwloc_obj_t o, const char* role) {
    const std::string& k = t_.key(role);
    if (auto n = t_.number(k)) info(o, k, number_text(*n) + bound_suffix(k));
  }
  std::string bound_suffix(const std::string& k) const {
    const std::string b = t_.bound(k);
    return b == "exact" ? "" : " (" + b + ")";
  }
  std::string size_text(const std::string& k) const {
    const auto n = t_.number(k);
    return n ? size_words(*n) : std::string("(size not known)");
  }
  // 50 MiB, 240.5 KiB: the size as lstopo writes its caches'.
  static std::string size_words(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
      bytes /= 1024;
      ++u;
    }
    char s[64];
    std::snprintf(s, sizeof s, "%.4g %s", bytes, units[u]);
    return s;
  }
  static std::string number_text(double v) {
    char s[64];
    std::snprintf(s, sizeof s, "%.10g", v);
    return s;
  }
  // Every cache with a size, by its subject ("l2_cache"), largest first (the L2 before the per-SM
  // caches).
  std::vector<std::pair<double, std::string>> caches() const {
    const std::string size_role = "cache.size_bytes@";
    std::vector<std::pair<double, std::string>> out;
    for (const auto& [role, k] : t_.roles().starting_with(size_role))
      if (auto size = t_.number(k)) out.emplace_back(*size, role.substr(size_role.size()));
    std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    return out;
  }

  hwloc_topology_t topo_;
  TopologyReads t_;
  std::string source_, why_not_found_;
  bool found_ = false;
};

}  // namespace

bool hwloc_export_built() { return true; }

std::string hwloc_xml_text(const std::vector<std::pair<std::string, const toml::table*>>& gpus) {
  hwloc_topology_t topo = nullptr;
  if (hwloc_topology_init(&topo) != 0) throw TopologyExportError(0, "hwloc could not start a topology");
  hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
  hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_ALL);
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    throw TopologyExportError(0, "hwloc could not read this host's topology");
  }
  std::string out;
  try {
    for (const auto& [source, doc] : gpus) GpuAttacher(topo, *doc, source).attach();
    char* buffer = nullptr;
    int length = 0;
    if (hwloc_topology_export_xmlbuffer(topo, &buffer, &length, 0) != 0)
      throw TopologyExportError(0, "hwloc could not write the topology as XML");
    out.assign(buffer, size_t(std::max(length - 1, 0)));  // the length counts the ending NUL
    hwloc_free_xmlbuffer(topo, buffer);
  } catch (...) {
    hwloc_topology_destroy(topo);
    throw;
  }
  hwloc_topology_destroy(topo);
  return out;
}

#else

bool hwloc_export_built() { return false; }

std::string hwloc_xml_text(const std::vector<std::pair<std::string, const toml::table*>>&) {
  throw TopologyExportError(0, "this memtopo was built without hwloc (libhwloc-dev): install it and rebuild");
}

#endif

}  // namespace memtopo::host
