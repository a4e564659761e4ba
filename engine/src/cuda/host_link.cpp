// A CUDA GPU in its host (host_link.hpp): its NUMA node and CPUs from hwloc (sysfs where the
// build has no hwloc), its links from NVML, and copies over them timed with CUDA events.
#include "host_link.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "cuda_util.hpp"
#include "memtopo/errors.hpp"
#include "nvml_query.hpp"

#ifdef MEMTOPO_HAVE_HWLOC
#include <hwloc.h>
#endif

namespace memtopo::cuda {

namespace {

struct HostPlacement {
  int numa_node = -1, numa_nodes = 0, far_node = -1;
  std::string local_cpus, source, why_no_far = "the host has one NUMA node";
};

#ifdef MEMTOPO_HAVE_HWLOC
// The host's topology with its PCI devices, loaded once per process.
hwloc_topology_t host_topology() {
  static hwloc_topology_t topo = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) return;
    hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(t) != 0) {
      hwloc_topology_destroy(t);
      return;
    }
    topo = t;
  });
  return topo;
}

hwloc_obj_t numa_node_obj(int os_index) {
  hwloc_topology_t t = host_topology();
  for (hwloc_obj_t n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, nullptr); n;
       n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n))
    if (int(n->os_index) == os_index) return n;
  return nullptr;
}
#endif

std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

// The PCI function's sysfs folder: "0000:1b:00.0" whatever case the bus id came in.
std::string sysfs_folder(const char* bus_id) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) != 4) return "";
  char canonical[64];
  std::snprintf(canonical, sizeof canonical, "/sys/bus/pci/devices/%04x:%02x:%02x.%x/", domain, bus, dev, fn);
  return canonical;
}

// The kernel's view of the PCIe link (its Link Status and Capabilities registers), where NVML
// could not tell: "32.0 GT/s PCIe" is generation 5.
struct SysfsLink {
  int generation = -1, generation_max = -1, width = -1, width_max = -1;
};
int generation_of(const std::string& speed) {
  const double gts = std::atof(speed.c_str());
  for (const auto& [rate, gen] : {std::pair{2.5, 1}, {5.0, 2}, {8.0, 3}, {16.0, 4}, {32.0, 5}, {64.0, 6}})
    if (std::abs(gts - rate) < 0.01) return gen;
  return -1;
}
SysfsLink sysfs_link(const char* bus_id) {
  SysfsLink l;
  const std::string dir = sysfs_folder(bus_id);
  if (dir.empty()) return l;
  auto number = [&](const char* file) {
    const std::string s = first_line(dir + file);
    return s.empty() ? -1 : std::atoi(s.c_str());
  };
  l.generation = generation_of(first_line(dir + "current_link_speed"));
  l.generation_max = generation_of(first_line(dir + "max_link_speed"));
  l.width = number("current_link_width");
  l.width_max = number("max_link_width");
  return l;
}

HostPlacement placement_of(const char* bus_id) {
  HostPlacement p;
#ifdef MEMTOPO_HAVE_HWLOC
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  const bool parsed = std::sscanf(bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &fn) == 4;
  hwloc_topology_t t = host_topology();
  if (t && parsed) {
    p.source = std::string("hwloc ") + HWLOC_VERSION;
    hwloc_obj_t pci = hwloc_get_pcidev_by_busid(t, domain, bus, dev, fn);
    hwloc_obj_t near = pci ? hwloc_get_non_io_ancestor_obj(t, pci) : nullptr;
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, nullptr); n;
         n = hwloc_get_next_obj_by_type(t, HWLOC_OBJ_NUMANODE, n)) {
      ++p.numa_nodes;
      const bool local = near && near->nodeset && hwloc_bitmap_isset(near->nodeset, n->os_index);
      if (local && p.numa_node < 0) p.numa_node = int(n->os_index);
      if (!local && p.far_node < 0) p.far_node = int(n->os_index);
    }
    if (near && near->cpuset) {
      char list[256] = {0};
      hwloc_bitmap_list_snprintf(list, sizeof list, near->cpuset);
      p.local_cpus = list;
    }
    if (p.far_node < 0 && p.numa_nodes > 1) p.why_no_far = "every NUMA node is local to the GPU";
    return p;
  }
#endif
  // sysfs: the node and CPUs of the PCI function; no far node to bind memory to.
  const std::string dir = sysfs_folder(bus_id);
  const std::string node = dir.empty() ? "" : first_line(dir + "numa_node");
  if (!node.empty()) p.numa_node = std::max(-1, std::atoi(node.c_str()));
  if (!dir.empty()) p.local_cpus = first_line(dir + "local_cpulist");
  p.source = "sysfs";
  p.why_no_far = "memtopo was built without hwloc, which binds host memory to a NUMA node";
  return p;
}

// Page-locked host memory, bound to NUMA node `node` where hwloc can (-1: anywhere).
class PinnedHostBuffer {
 public:
  PinnedHostBuffer(uint64_t bytes, int node) : bytes_(bytes) {
#ifdef MEMTOPO_HAVE_HWLOC
    if (node >= 0)
      if (hwloc_obj_t n = numa_node_obj(node)) {
        data_ = hwloc_alloc_membind(host_topology(), bytes, n->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
        if (data_) {
          std::memset(data_, 1, bytes);  // the pages land on the node now
          check(cudaHostRegister(data_, bytes, cudaHostRegisterDefault), "cudaHostRegister");
          bound_ = node;
          return;
        }
      }
#endif
    (void)node;
    check(cudaMallocHost(&data_, bytes), "cudaMallocHost");
    std::memset(data_, 1, bytes);
  }
  ~PinnedHostBuffer() {
#ifdef MEMTOPO_HAVE_HWLOC
    if (bound_ >= 0) {
      cudaHostUnregister(data_);
      hwloc_free(host_topology(), data_, bytes_);
      return;
    }
#endif
    cudaFreeHost(data_);
  }
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;
  void* data() const { return data_; }
  int bound_node() const { return bound_; }

 private:
  void* data_ = nullptr;
  uint64_t bytes_;
  int bound_ = -1;
};

struct LinkDeviceBuffer {
  LinkDeviceBuffer(int ordinal, uint64_t bytes) : ordinal(ordinal) {
    int was = 0;
    check(cudaGetDevice(&was), "cudaGetDevice");
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    const cudaError_t e = cudaMalloc(&data, bytes);
    cudaSetDevice(was);
    check(e, "cudaMalloc");
  }
  ~LinkDeviceBuffer() { cudaFree(data); }
  LinkDeviceBuffer(const LinkDeviceBuffer&) = delete;
  LinkDeviceBuffer& operator=(const LinkDeviceBuffer&) = delete;
  int ordinal;
  void* data = nullptr;
};

// The GPUs `ordinal` can copy to directly (peer access), by CUDA ordinal.
std::vector<int> peers_of(int ordinal) {
  int n = 0;
  check(cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  std::vector<int> out;
  for (int d = 0; d < n; ++d) {
    int can = 0;
    if (d != ordinal && cudaDeviceCanAccessPeer(&can, ordinal, d) == cudaSuccess && can) out.push_back(d);
  }
  return out;
}

class CopyTimer {
 public:
  CopyTimer() {
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  ~CopyTimer() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    cudaStreamDestroy(stream);
  }
  template <class F>
  double time_ns(F&& enqueue) {
    check(cudaEventRecord(start, stream), "cudaEventRecord");
    enqueue(stream);
    check(cudaEventRecord(stop, stream), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    return double(ms) * 1e6;
  }
  cudaStream_t stream{};
  cudaEvent_t start{}, stop{};
};

}  // namespace

void read_attachment(int ordinal, const char* bus_id, mt_attachment& out) {
  const HostPlacement p = placement_of(bus_id);
  out.numa_node = p.numa_node;
  out.numa_nodes = p.numa_nodes > 0 ? p.numa_nodes : -1;
  // An idle link may step down its generation to save power: read it while copies run.
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  constexpr uint64_t kBytes = 64ull << 20;
  NvmlLinks n;
  bool sysfs_pcie = false;
  {
    PinnedHostBuffer host(kBytes, -1);
    LinkDeviceBuffer device(ordinal, kBytes);
    CopyTimer t;
    for (int i = 0; i < 8; ++i)
      check(cudaMemcpyAsync(device.data, host.data(), kBytes, cudaMemcpyHostToDevice, t.stream), "cudaMemcpyAsync");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    n = query_nvml(bus_id);
    if (n.pcie_generation < 0 || n.pcie_width_lanes < 0) {
      const SysfsLink l = sysfs_link(bus_id);
      n.pcie_generation = l.generation;
      n.pcie_generation_max = l.generation_max;
      n.pcie_width_lanes = l.width;
      n.pcie_width_max_lanes = l.width_max;
      if (l.generation > 0) sysfs_pcie = true;
    }
    check(cudaStreamSynchronize(t.stream), "cudaStreamSynchronize");
  }
  std::snprintf(out.local_cpus, sizeof out.local_cpus, "%s", (p.local_cpus.empty() ? n.local_cpus : p.local_cpus).c_str());
  out.pcie_generation = n.pcie_generation;
  out.pcie_generation_max = n.pcie_generation_max;
  out.pcie_width_lanes = n.pcie_width_lanes;
  out.pcie_width_max_lanes = n.pcie_width_max_lanes;
  out.nvlink_links = n.nvlink_links;
  out.nvlink_links_up = n.nvlink_links_up;
  std::snprintf(out.nvlink_peers, sizeof out.nvlink_peers, "%s", n.nvlink_peers.c_str());
  const std::string nvml = n.version.empty() ? "no NVML: " + n.why_not : n.version;
  std::snprintf(out.source, sizeof out.source, "%s, %s%s", nvml.c_str(), p.source.c_str(),
                sysfs_pcie ? ", PCIe link from sysfs" : "");
}

int time_link_copies(int ordinal, const char* bus_id, mt_link_copy& c, std::string& why) {
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  const std::vector<int> peers = peers_of(ordinal);
  c.peers = int32_t(peers.size());
  c.numa_node_used = -1;
  CopyTimer t;
  LinkDeviceBuffer device(ordinal, std::max<uint64_t>(c.bytes, 1));
  if (c.direction == MT_LINK_PEER) {
    if (c.peer >= peers.size()) {
      int visible = 0;
      cudaGetDeviceCount(&visible);
      const char* only = std::getenv("CUDA_VISIBLE_DEVICES");
      why = !peers.empty() ? "the GPU reaches " + std::to_string(peers.size()) + " peers"
            : visible == 1 && only ? std::string("this run sees one GPU (CUDA_VISIBLE_DEVICES=") + only +
                                         ", as --device all gives each GPU's run): run --device cuda:N for peer copies"
                                   : "no other GPU this one can copy to directly (peer access)";
      return MT_LINK_UNAVAILABLE;
    }
    const int peer = peers[c.peer];
    const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) check(e, "cudaDeviceEnablePeerAccess");
    cudaGetLastError();
    check(cudaDeviceGetPCIBusId(c.peer_name, sizeof c.peer_name, peer), "cudaDeviceGetPCIBusId");
    LinkDeviceBuffer remote(peer, std::max<uint64_t>(c.bytes, 1));
    auto copy = [&](cudaStream_t s) {
      check(cudaMemcpyPeerAsync(remote.data, peer, device.data, ordinal, c.bytes, s), "cudaMemcpyPeerAsync");
    };
    t.time_ns(copy);  // the first copy sets the mappings up
    for (uint32_t i = 0; i < c.repeats; ++i) c.elapsed_ns[i] = t.time_ns(copy);
    if (e == cudaSuccess) cudaDeviceDisablePeerAccess(peer);
    return 0;
  }
  const HostPlacement p = placement_of(bus_id);
  int node = c.host_numa_node == MT_HOST_NUMA_NEAR ? p.numa_node : c.host_numa_node == MT_HOST_NUMA_FAR ? p.far_node
                                                                                                      : c.host_numa_node;
  if (c.host_numa_node == MT_HOST_NUMA_FAR && node < 0) {
    why = p.why_no_far;
    return MT_LINK_UNAVAILABLE;
  }
  PinnedHostBuffer host(std::max<uint64_t>(c.bytes, 1), node);
  c.numa_node_used = host.bound_node();
  const bool in = c.direction == MT_LINK_HOST_TO_DEVICE;
  auto copy = [&](cudaStream_t s) {
    check(in ? cudaMemcpyAsync(device.data, host.data(), c.bytes, cudaMemcpyHostToDevice, s)
             : cudaMemcpyAsync(host.data(), device.data, c.bytes, cudaMemcpyDeviceToHost, s),
          "cudaMemcpyAsync");
  };
  t.time_ns(copy);
  for (uint32_t i = 0; i < c.repeats; ++i) c.elapsed_ns[i] = t.time_ns(copy);
  return 0;
}

}  // namespace memtopo::cuda
