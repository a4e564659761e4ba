// memtopo launch helper for probes that bring their own kernels (include from a .cu file of
// the plugin; memtopo_add_probe builds it with nvcc). The SDK owns what nvbench's framework
// owns: the device the host selected, buffers from the host's pool, the launch settings
// (dynamic shared memory, carveout, cluster dimensions), a warm-up outside timing, the SM
// clock around the timed launch, and CUDA errors turned into the probe's error naming the
// kernel. The kernel itself is the probe's; memtopo/cuda/device.cuh has the device toolkit.
//
//   __global__ void my_kernel(uint64_t* buf, uint64_t n);
//   memtopo::cuda::DeviceBuffer<uint64_t> buf(ctx, 4096);
//   memtopo::cuda::LaunchConfig cfg;
//   cfg.block = dim3(32);
//   const auto report = memtopo::cuda::launch(ctx, "my_kernel", my_kernel, cfg, buf.get(), uint64_t(4096));
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "memtopo/context.hpp"
#include "memtopo/cuda/clock.cuh"

namespace memtopo::cuda {

// Throws memtopo::Error "kernel <name>: <what>: <CUDA message>" when e is not cudaSuccess.
inline void check(cudaError_t e, const std::string& kernel, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  throw Error("kernel " + kernel + ": " + what + ": " + cudaGetErrorString(e));
}

// Makes the host's device current; throws when the host did not select a CUDA GPU (a probe
// that declares backends(MT_BACKEND_CUDA) is never run elsewhere).
inline void use_device(const Context& ctx, const std::string& kernel) {
  if (std::string(ctx.device().backend) != "cuda")
    throw Error("kernel " + kernel + ": the device is not a CUDA GPU (backend " + ctx.device().backend +
                "); declare .backends(MT_BACKEND_CUDA) so the host skips the probe there");
  check(cudaSetDevice(ctx.device().ordinal), kernel, "cudaSetDevice");
}

// `count` elements of device memory from the backend's pool (2 MiB aligned), given back
// when the buffer goes out of scope.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(const Context& ctx, size_t count)
      : backend_(&ctx.backend()), data_(static_cast<T*>(ctx.backend().alloc_buffer(count * sizeof(T)))), count_(count) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { backend_->free_buffer(data_); }
  T* get() const { return data_; }
  size_t size() const { return count_; }
  void upload(const std::vector<T>& host) const {
    check(cudaMemcpy(data_, host.data(), std::min(host.size(), count_) * sizeof(T), cudaMemcpyHostToDevice), "upload",
          "cudaMemcpy");
  }
  void zero() const { check(cudaMemset(data_, 0, count_ * sizeof(T)), "zero", "cudaMemset"); }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    check(cudaMemcpy(host.data(), data_, count_ * sizeof(T), cudaMemcpyDeviceToHost), "download", "cudaMemcpy");
    return host;
  }

 private:
  const Backend* backend_;
  T* data_;
  size_t count_;
};

// A CUDA driver API function that the runtime does not wrap (cuTensorMapEncodeTiled, ...),
// found through the runtime, so that a plugin needs no link to libcuda. `version` is the API
// version of the prototype the caller casts it to (12000: CUDA 12.0).
inline void* driver_function(const char* symbol, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  check(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found), symbol,
        "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw Error(std::string("the CUDA driver has no ") + symbol + " of version " + std::to_string(version));
  return fn;
}

struct LaunchConfig {
  dim3 grid{1, 1, 1};
  dim3 block{32, 1, 1};
  unsigned dynamic_shared_bytes = 0;
  int shared_carveout_percent = -1;  // -1: the driver's default; 0: the largest L1
  dim3 cluster{1, 1, 1};             // blocks per cluster (compute capability 9.0); 1: none
  bool non_portable_cluster = false; // clusters of more than 8 blocks
  int warmup_launches = 1;           // untimed launches first (module load, caches, TLB)
};

struct LaunchReport {
  double elapsed_ms = 0;           // the timed launch, by CUDA events
  double sm_clock_mhz_before = 0;  // the SM clock just before and just after the timed launch
  double sm_clock_mhz_after = 0;
};

namespace detail {

// The SM clock over `spin_ns` of the global timer, in MHz (one thread).
template <int Unused = 0>
__global__ void sm_clock_kernel(double* mhz, unsigned long long spin_ns) {
  const unsigned long long g0 = device::globaltimer_ns(), c0 = device::clock_now();
  unsigned long long g1 = g0;
  while (g1 - g0 < spin_ns) g1 = device::globaltimer_ns();
  const unsigned long long c1 = device::clock_now();
  *mhz = double(c1 - c0) * 1000.0 / double(g1 - g0);
}

inline double sm_clock_mhz(double* scratch, const std::string& kernel) {
  sm_clock_kernel<<<1, 1>>>(scratch, 20000);
  check(cudaGetLastError(), kernel, "launching the clock reading");
  double mhz = 0;
  check(cudaMemcpy(&mhz, scratch, sizeof mhz, cudaMemcpyDeviceToHost), kernel, "reading the SM clock");
  return mhz;
}

template <class... Params>
void configure(void (*kernel)(Params...), const LaunchConfig& cfg, const std::string& name) {
  const void* f = reinterpret_cast<const void*>(kernel);
  check(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(cfg.dynamic_shared_bytes)), name,
        "cudaFuncSetAttribute (dynamic shared memory)");
  check(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cfg.shared_carveout_percent < 0 ? int(cudaSharedmemCarveoutDefault) : cfg.shared_carveout_percent),
        name, "cudaFuncSetAttribute (carveout)");
  if (cfg.non_portable_cluster)
    check(cudaFuncSetAttribute(f, cudaFuncAttributeNonPortableClusterSizeAllowed, 1), name,
          "cudaFuncSetAttribute (non-portable cluster size)");
}

// The launch settings of `cfg`; `attr` holds the cluster dimension when there is one.
inline cudaLaunchConfig_t launch_config(const LaunchConfig& cfg, cudaLaunchAttribute& attr) {
  cudaLaunchConfig_t lc{};
  lc.gridDim = cfg.grid;
  lc.blockDim = cfg.block;
  lc.dynamicSmemBytes = cfg.dynamic_shared_bytes;
  if (cfg.cluster.x * cfg.cluster.y * cfg.cluster.z > 1) {
    attr = cudaLaunchAttribute{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = cfg.cluster.x;
    attr.val.clusterDim.y = cfg.cluster.y;
    attr.val.clusterDim.z = cfg.cluster.z;
    lc.attrs = &attr;
    lc.numAttrs = 1;
  }
  return lc;
}

}  // namespace detail

// How many clusters of `cfg.cluster` blocks, with the kernel configured as launch() would
// configure it, the device holds at once (cudaOccupancyMaxActiveClusters); 0 when a cluster
// of that size cannot run at all (too large, or more resources than a GPC has).
template <class... Params>
int max_active_clusters(const Context& ctx, const std::string& name, void (*kernel)(Params...),
                        const LaunchConfig& cfg) {
  use_device(ctx, name);
  detail::configure(kernel, cfg, name);
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t lc = detail::launch_config(cfg, attr);
  lc.gridDim = cfg.cluster;  // the query wants a grid of whole clusters; its size does not matter
  int clusters = 0;
  const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kernel, &lc);
  if (e == cudaErrorInvalidClusterSize || e == cudaErrorInvalidConfiguration) {
    cudaGetLastError();
    return 0;
  }
  check(e, name, "cudaOccupancyMaxActiveClusters");
  return clusters;
}

// Launches `kernel` with `args` on the host's device: configures it, runs the warm-up
// launches, then one timed launch between two readings of the SM clock, and waits for it.
template <class... Params, class... Args>
LaunchReport launch(const Context& ctx, const std::string& name, void (*kernel)(Params...), const LaunchConfig& cfg,
                    Args&&... args) {
  use_device(ctx, name);
  detail::configure(kernel, cfg, name);
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t lc = detail::launch_config(cfg, attr);
  auto once = [&]() { check(cudaLaunchKernelEx(&lc, kernel, args...), name, "cudaLaunchKernelEx"); };
  for (int i = 0; i < cfg.warmup_launches; ++i) once();
  check(cudaDeviceSynchronize(), name, "warm-up launch");
  DeviceBuffer<double> scratch(ctx, 1);
  LaunchReport report;
  report.sm_clock_mhz_before = detail::sm_clock_mhz(scratch.get(), name);
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), name, "cudaEventCreate");
  check(cudaEventCreate(&stop), name, "cudaEventCreate");
  check(cudaEventRecord(start), name, "cudaEventRecord");
  once();
  check(cudaEventRecord(stop), name, "cudaEventRecord");
  const cudaError_t done = cudaEventSynchronize(stop);
  float ms = 0;
  if (done == cudaSuccess) cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  check(done, name, "kernel");
  report.elapsed_ms = double(ms);
  report.sm_clock_mhz_after = detail::sm_clock_mhz(scratch.get(), name);
  return report;
}

}  // namespace memtopo::cuda
