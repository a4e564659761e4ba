// memtopo launch helper for probes that bring their own kernels. The SDK owns what nvbench's
// framework owns: the device the host selected, buffers from the host's pool, the launch
// settings (dynamic shared memory, carveout, cluster dimensions), warm-up launches outside
// timing, the SM clock around the timed launch, and errors turned into the probe's error
// naming the kernel. The kernel is the probe's, written with the device toolkit
// (memtopo/device/kernel.hpp); it runs on a CUDA GPU and on the simulated GPU alike:
//
//   MEMTOPO_KERNEL void my_kernel(uint64_t* buf, uint64_t n) { ... }
//   memtopo::device::Buffer<uint64_t> buf(ctx, 4096);
//   memtopo::device::LaunchConfig cfg;
//   cfg.block = {32};
//   const auto report = memtopo::device::launch<my_kernel>(ctx, "my_kernel", cfg, buf.get(), uint64_t(4096));
//
// The file that launches must be a .cu file (compiled by nvcc) for the CUDA GPU; compiled as
// plain C++ it launches on the simulated GPU only.
#pragma once

#include <algorithm>
#include <cstring>
#include <exception>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

#include "memtopo/context.hpp"
#include "memtopo/device/clock.hpp"
#include "memtopo/device/portable.hpp"

namespace memtopo::device {

struct LaunchConfig {
  Dim3 grid{1, 1, 1};
  Dim3 block{32, 1, 1};
  unsigned dynamic_shared_bytes = 0;
  int shared_carveout_percent = -1;  // -1: the driver's default; 0: the largest L1
  Dim3 cluster{1, 1, 1};             // blocks per cluster (compute capability 9.0); 1: none
  bool non_portable_cluster = false; // clusters of more than 8 blocks
  int warmup_launches = 1;           // untimed launches first (module load, caches, TLB)
  int timed_launches = 1;            // launches back to back between the events
};

struct LaunchReport {
  double elapsed_ms = 0;           // the timed launch (CUDA events; the simulated GPU's clock)
  double sm_clock_mhz_before = 0;  // the SM clock just before and just after the timed launch
  double sm_clock_mhz_after = 0;
};

// The device refused a launch's shape (a cluster size it cannot run, a block too large, more
// shared memory than a block may have): the probe may try another.
struct LaunchRefused : Error {
  using Error::Error;
};

// Whether kernels of this context run on the simulated GPU (else on the CUDA GPU).
inline bool simulated(const Context& ctx) {
  const mt_backend* b = ctx.backend().c();
  return b && b->launch_kernel != nullptr;
}

// How many times a timing repeats its work to average the clock's noise: `on_gpu` on a GPU; on
// the simulated GPU, whose clock is exact (every repeat is priced alike), at most `least`. The
// framework owns the count, as nvbench owns its samples: a probe states what a noisy clock needs.
inline int64_t noise_repeats(const Context& ctx, int64_t on_gpu, int64_t least = 1) {
  return simulated(ctx) ? std::min(on_gpu, least) : on_gpu;
}

// How many bytes a timed window streams: `on_gpu` on a GPU, whose window must outlast the
// launch's edges and the events' resolution by far; on the simulated GPU, whose clock is exact
// but which prices every sector on the host, at most `least`. The framework owns the size, as
// nvbench owns its samples' time: a probe derives the rest of its experiment (passes, a second
// window, fresh lines) from the bytes it gets, on every backend alike.
inline uint64_t window_bytes(const Context& ctx, uint64_t on_gpu, uint64_t least) {
  return simulated(ctx) ? std::min(on_gpu, least) : on_gpu;
}

// The most threads, in all, of a launch that a probe runs beyond what its answer needs (a
// refinement of a point it has, another shape of the same experiment): any on a GPU, which runs
// them in its own time; on the simulated GPU, which runs every thread on the host, what 16 SMs
// of 2048 threads hold.
inline uint64_t optional_launch_threads(const Context& ctx) {
  return simulated(ctx) ? uint64_t(16) * 2048 : ~uint64_t(0);
}

// `count` elements of device memory from the backend's pool (2 MiB aligned), given back
// when the buffer goes out of scope.
template <class T>
class Buffer {
 public:
  Buffer(const Context& ctx, size_t count)
      : backend_(&ctx.backend()), data_(static_cast<T*>(ctx.backend().alloc_buffer(count * sizeof(T)))), count_(count) {}
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { backend_->free_buffer(data_); }
  T* get() const { return data_; }
  size_t size() const { return count_; }
  void upload(const std::vector<T>& host) const {
    backend_->copy_buffer(data_, host.data(), std::min(host.size(), count_) * sizeof(T), MT_COPY_TO_DEVICE);
  }
  void zero() const { backend_->fill_buffer(data_, 0, count_ * sizeof(T)); }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    backend_->copy_buffer(host.data(), data_, count_ * sizeof(T), MT_COPY_TO_HOST);
    return host;
  }

 private:
  const Backend* backend_;
  T* data_;
  size_t count_;
};

namespace detail {

template <class F>
struct kernel_traits;
template <class... P>
struct kernel_traits<void (*)(P...)> {
  using args = std::tuple<std::decay_t<P>...>;
};

// One thread of kernel K on the simulated GPU: its arguments unpacked, errors reported.
template <auto K>
void sim_thread_main(void* args) {
  using Args = typename kernel_traits<decltype(K)>::args;
  try {
    std::apply(K, *static_cast<Args*>(args));
  } catch (const std::exception& e) {
    sim().fail(sim().self, e.what());
  } catch (...) {
    sim().fail(sim().self, "an exception that is no std::exception");
  }
}

inline mt_dim3 c_dim(const Dim3& d) { return mt_dim3{d.x, d.y, d.z}; }

inline mt_kernel_launch sim_launch(const std::string& name, const LaunchConfig& cfg, void (*main)(void*), void* args) {
  mt_kernel_launch l{};
  l.struct_size = sizeof l;
  l.name = name.c_str();
  l.grid = c_dim(cfg.grid);
  l.block = c_dim(cfg.block);
  l.cluster = c_dim(cfg.cluster);
  l.dynamic_shared_bytes = cfg.dynamic_shared_bytes;
  l.shared_carveout_percent = cfg.shared_carveout_percent;
  l.thread_main = main;
  l.args = args;
  l.flags = cfg.non_portable_cluster ? MT_LAUNCH_NON_PORTABLE_CLUSTER : 0u;
  return l;
}

// Runs launch `l` on the simulated GPU with this plugin's toolkit pointed at it.
inline mt_kernel_report sim_run(const Context& ctx, const std::string& name, const mt_kernel_launch& l) {
  const mt_backend* b = ctx.backend().c();
  struct Ops {
    explicit Ops(const mt_kernel_ops* ops) { g_sim_ops = ops; }
    ~Ops() { g_sim_ops = nullptr; }
  } ops(b->kernel_ops);
  mt_kernel_report r{};
  r.struct_size = sizeof r;
  char err[512] = {0};
  const int rc = b->launch_kernel(b->self, &l, &r, err, sizeof err);
  if (rc == MT_LAUNCH_REFUSED) throw LaunchRefused("kernel " + name + ": " + err);
  if (rc != 0) throw Error("kernel " + name + ": " + err);
  return r;
}

#if defined(__CUDACC__)
// The GPU's entry for kernel K: a __global__ function that calls it; with MaxThreads, bounded
// (__launch_bounds__): the compiler then keeps the registers few enough for that many threads.
template <auto K, class... P>
__global__ void kernel_entry(P... p) {
  K(p...);
}
template <auto K, unsigned MaxThreads, class... P>
__global__ void __launch_bounds__(MaxThreads) bounded_entry(P... p) {
  K(p...);
}
template <auto K, unsigned MaxThreads = 0, class... P>
constexpr auto entry_of(void (*)(P...)) {
  if constexpr (MaxThreads == 0)
    return &kernel_entry<K, P...>;
  else
    return &bounded_entry<K, MaxThreads, P...>;
}

// Throws memtopo::Error "kernel <name>: <what>: <CUDA message>" when e is not cudaSuccess.
inline void check(cudaError_t e, const std::string& kernel, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  throw Error("kernel " + kernel + ": " + what + ": " + cudaGetErrorString(e));
}

inline void use_device(const Context& ctx, const std::string& kernel) {
  if (std::string(ctx.device().backend) != "cuda")
    throw Error("kernel " + kernel + ": the device is neither a CUDA GPU nor the simulated GPU (backend " +
                ctx.device().backend + ")");
  check(cudaSetDevice(ctx.device().ordinal), kernel, "cudaSetDevice");
}

// The SM clock over `spin_ns` of the global timer, in MHz (one thread).
template <int Unused = 0>
__global__ void sm_clock_kernel(double* mhz, unsigned long long spin_ns) {
  const unsigned long long g0 = globaltimer_ns(), c0 = clock_now();
  unsigned long long g1 = g0;
  while (g1 - g0 < spin_ns) g1 = globaltimer_ns();
  const unsigned long long c1 = clock_now();
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
  lc.gridDim = dim3(cfg.grid.x, cfg.grid.y, cfg.grid.z);
  lc.blockDim = dim3(cfg.block.x, cfg.block.y, cfg.block.z);
  lc.dynamicSmemBytes = cfg.dynamic_shared_bytes;
  if (cfg.cluster.count() > 1) {
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

template <class... Params, class... Args>
LaunchReport cuda_launch(const Context& ctx, const std::string& name, void (*kernel)(Params...),
                         const LaunchConfig& cfg, Args&&... args) {
  use_device(ctx, name);
  configure(kernel, cfg, name);
  cudaLaunchAttribute attr{};
  const cudaLaunchConfig_t lc = launch_config(cfg, attr);
  auto once = [&]() {
    const cudaError_t e = cudaLaunchKernelEx(&lc, kernel, args...);
    if (e == cudaErrorInvalidClusterSize || e == cudaErrorInvalidConfiguration || e == cudaErrorInvalidValue ||
        e == cudaErrorLaunchOutOfResources) {
      cudaGetLastError();
      throw LaunchRefused("kernel " + name + ": cudaLaunchKernelEx: " + cudaGetErrorString(e));
    }
    check(e, name, "cudaLaunchKernelEx");
  };
  for (int i = 0; i < cfg.warmup_launches; ++i) once();
  check(cudaDeviceSynchronize(), name, "warm-up launch");
  Buffer<double> scratch(ctx, 1);
  LaunchReport report;
  report.sm_clock_mhz_before = sm_clock_mhz(scratch.get(), name);
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), name, "cudaEventCreate");
  check(cudaEventCreate(&stop), name, "cudaEventCreate");
  check(cudaEventRecord(start), name, "cudaEventRecord");
  for (int i = 0; i < std::max(cfg.timed_launches, 1); ++i) once();
  check(cudaEventRecord(stop), name, "cudaEventRecord");
  const cudaError_t done = cudaEventSynchronize(stop);
  float ms = 0;
  if (done == cudaSuccess) cudaEventElapsedTime(&ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  check(done, name, "kernel");
  report.elapsed_ms = double(ms);
  report.sm_clock_mhz_after = sm_clock_mhz(scratch.get(), name);
  return report;
}
#endif

}  // namespace detail

// Launches kernel K with `args` on the host's device: configures it, runs the warm-up
// launches, then the timed launches between two readings of the SM clock, and waits for them.
// MaxThreads (launch<K, 1024>): the most threads of a block the kernel is compiled for.
template <auto K, unsigned MaxThreads = 0, class... Args>
LaunchReport launch(const Context& ctx, const std::string& name, const LaunchConfig& cfg, Args&&... args) {
  if (simulated(ctx)) {
    typename detail::kernel_traits<decltype(K)>::args packed(std::forward<Args>(args)...);
    const mt_kernel_launch l = detail::sim_launch(name, cfg, &detail::sim_thread_main<K>, &packed);
    for (int i = 0; i < cfg.warmup_launches; ++i) detail::sim_run(ctx, name, l);
    LaunchReport report;
    for (int i = 0; i < std::max(cfg.timed_launches, 1); ++i) report.elapsed_ms += detail::sim_run(ctx, name, l).elapsed_ns / 1e6;
    report.sm_clock_mhz_before = report.sm_clock_mhz_after = double(ctx.device().sm_clock_khz) / 1000.0;
    return report;
  }
#if defined(__CUDACC__)
  return detail::cuda_launch(ctx, name, detail::entry_of<K, MaxThreads>(K), cfg, std::forward<Args>(args)...);
#else
  throw Error("kernel " + name + ": built without CUDA (a .cpp file), it runs on the simulated GPU only");
#endif
}

namespace detail {
// What the simulated GPU holds of launches shaped as `l` (its grid: one cluster).
inline mt_occupancy sim_occupancy(const Context& ctx, const std::string& name, mt_kernel_launch l) {
  l.grid = l.cluster;
  const mt_backend* b = ctx.backend().c();
  mt_occupancy o{};
  o.struct_size = sizeof o;
  char err[512] = {0};
  if (b->occupancy(b->self, &l, &o, err, sizeof err) != 0) throw Error("kernel " + name + ": " + err);
  return o;
}
}  // namespace detail

// How many clusters of `cfg.cluster` blocks, with the kernel configured as launch() would
// configure it, the device holds at once; 0 when a cluster of that size cannot run at all.
template <auto K>
int max_active_clusters(const Context& ctx, const std::string& name, const LaunchConfig& cfg) {
  if (simulated(ctx))
    return int(detail::sim_occupancy(ctx, name, detail::sim_launch(name, cfg, &detail::sim_thread_main<K>, nullptr))
                   .clusters);
#if defined(__CUDACC__)
  auto kernel = detail::entry_of<K>(K);
  detail::use_device(ctx, name);
  detail::configure(kernel, cfg, name);
  cudaLaunchAttribute attr{};
  cudaLaunchConfig_t lc = detail::launch_config(cfg, attr);
  lc.gridDim = dim3(cfg.cluster.x, cfg.cluster.y, cfg.cluster.z);  // the query wants whole clusters
  int clusters = 0;
  const cudaError_t e = cudaOccupancyMaxActiveClusters(&clusters, kernel, &lc);
  if (e == cudaErrorInvalidClusterSize || e == cudaErrorInvalidConfiguration) {
    cudaGetLastError();
    return 0;
  }
  detail::check(e, name, "cudaOccupancyMaxActiveClusters");
  return clusters;
#else
  throw Error("kernel " + name + ": built without CUDA (a .cpp file), it runs on the simulated GPU only");
#endif
}

// How many blocks of `cfg.block` threads (and its dynamic shared memory) one SM holds at once.
template <auto K>
int max_active_blocks_per_sm(const Context& ctx, const std::string& name, const LaunchConfig& cfg) {
  if (simulated(ctx))
    return int(detail::sim_occupancy(ctx, name, detail::sim_launch(name, cfg, &detail::sim_thread_main<K>, nullptr))
                   .blocks_per_sm);
#if defined(__CUDACC__)
  auto kernel = detail::entry_of<K>(K);
  detail::use_device(ctx, name);
  detail::configure(kernel, cfg, name);
  int blocks = 0;
  detail::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, int(cfg.block.count()),
                                                              size_t(cfg.dynamic_shared_bytes)),
                name, "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
#else
  throw Error("kernel " + name + ": built without CUDA (a .cpp file), it runs on the simulated GPU only");
#endif
}

#if defined(__CUDACC__)
// Kernels of CUDA alone: a __global__ function with instructions the simulated GPU does not
// model (TMA bulk copies, a __grid_constant__ tensor map), in a probe that declares
// backends(MT_BACKEND_CUDA, reason). Launched as launch() launches on the GPU.
template <class... Params, class... Args>
LaunchReport launch_cuda(const Context& ctx, const std::string& name, void (*kernel)(Params...), const LaunchConfig& cfg,
                         Args&&... args) {
  return detail::cuda_launch(ctx, name, kernel, cfg, std::forward<Args>(args)...);
}

// Throws memtopo::Error "kernel <name>: <what>: <CUDA message>" when e is not cudaSuccess.
inline void cuda_check(cudaError_t e, const std::string& kernel, const char* what) { detail::check(e, kernel, what); }
// Makes the host's device current in this thread (a CUDA GPU, or an error naming `kernel`).
inline void use_cuda_device(const Context& ctx, const std::string& kernel) { detail::use_device(ctx, kernel); }

// A CUDA driver API function that the runtime does not wrap (cuTensorMapEncodeTiled, ...),
// found through the runtime, so that a plugin needs no link to libcuda. `version` is the API
// version of the prototype the caller casts it to (12000: CUDA 12.0).
inline void* driver_function(const char* symbol, unsigned version) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  detail::check(cudaGetDriverEntryPointByVersion(symbol, &fn, version, cudaEnableDefault, &found), symbol,
                "cudaGetDriverEntryPointByVersion");
  if (found != cudaDriverEntryPointSuccess || fn == nullptr)
    throw Error(std::string("the CUDA driver has no ") + symbol + " of version " + std::to_string(version));
  return fn;
}
#endif

}  // namespace memtopo::device
