// The CUDA device: its properties (mt_device_info) and the mt_backend function table that
// forwards to CudaEngine. CUDA 13 removed clockRate from cudaDeviceProp, so clocks are
// read as device attributes.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "cuda_engine.hpp"
#include "cuda_util.hpp"
#include "host_link.hpp"
#include "engine/param_bank.hpp"
#include "engine/jobs.hpp"
#include "engine/utf8_copy.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"

namespace memtopo::engine {
namespace {

using cuda::CudaEngine;

// Runs f on the engine under its lock; any exception becomes the error return of
// measure.h, prefixed with the primitive's name.
template <class F>
int guarded(void* self, const char* what, char* err, size_t err_size, F&& f) {
  auto* engine = static_cast<CudaEngine*>(self);
  try {
    std::lock_guard<std::mutex> lock(engine->mutex());
    cuda::check(cudaSetDevice(engine->ordinal()), "cudaSetDevice");
    f(*engine);
    return 0;
  } catch (const std::exception& e) {
    return fail(err, err_size, std::string(what) + ": " + e.what());
  } catch (...) {
    return fail(err, err_size, std::string(what) + ": unknown error");
  }
}

// MEMTOPO_TRACE_JOBS=1: one stderr line per call (jobs, loads, largest array, wall time),
// to see where a probe's time goes (docs/results: "Where a default run's time goes").
void trace_call(mt_job* const* jobs, size_t n, double ms) {
  uint64_t warm = 0, timed = 0, bytes = 0;
  for (size_t i = 0; i < n; ++i) {
    warm += jobs[i]->warmup_steps;
    timed += jobs[i]->steps;
    if (jobs[i]->array) bytes = std::max<uint64_t>(bytes, jobs[i]->array->elems * 4);
  }
  std::fprintf(stderr,
               "trace run_jobs: jobs=%zu pattern=%d record=%d streams=%u warmup=%llu steps=%llu array_bytes=%llu ms=%.2f "
               "slow=%llu cycles_per_load=%.1f\n",
               n, n ? int(jobs[0]->pattern) : -1, n ? int(jobs[0]->record) : -1, n ? jobs[0]->rate.streams : 0,
               (unsigned long long)warm, (unsigned long long)timed, (unsigned long long)bytes, ms,
               n ? (unsigned long long)jobs[0]->out.slow : 0ull,
               n && jobs[0]->steps ? double(jobs[0]->out.cycles) / double(jobs[0]->steps) : 0.0);
}
int cu_run_jobs(void* self, mt_job* const* jobs, size_t n, char* err, size_t size) {
  static const bool trace = std::getenv("MEMTOPO_TRACE_JOBS") != nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  const int rc = guarded(self, "run_jobs", err, size, [&](CudaEngine& e) { e.run_jobs(jobs, n); });
  if (trace)
    trace_call(jobs, n, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return rc;
}
int cu_alloc(void* self, uint64_t bytes, void** out, char* err, size_t size) {
  return guarded(self, "alloc_buffer", err, size, [&](CudaEngine& e) {
    if (!out) throw Error("no output pointer");
    *out = e.alloc_buffer(bytes);
  });
}
void cu_free(void* self, void* data) {
  char err[8];
  guarded(self, "free_buffer", err, sizeof err, [&](CudaEngine& e) { e.free_buffer(data); });
}
int cu_copy(void* self, void* dst, const void* src, uint64_t bytes, uint32_t kind, char* err, size_t size) {
  return guarded(self, "copy_buffer", err, size, [&](CudaEngine&) {
    const cudaMemcpyKind k = kind == MT_COPY_TO_DEVICE ? cudaMemcpyHostToDevice
                             : kind == MT_COPY_TO_HOST ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyDeviceToDevice;
    cuda::check(cudaMemcpy(dst, src, bytes, k), "cudaMemcpy");
  });
}
int cu_fill(void* self, void* dst, int value, uint64_t bytes, char* err, size_t size) {
  return guarded(self, "fill_buffer", err, size,
                 [&](CudaEngine&) { cuda::check(cudaMemset(dst, value, bytes), "cudaMemset"); });
}
int cu_overhead(void* self, double* out, char* err, size_t size) {
  return guarded(self, "timing_overhead", err, size, [&](CudaEngine& e) {
    if (!out) throw Error("no output pointer");
    *out = e.timing_overhead();
  });
}

int cu_attachment(void* self, mt_attachment* out, char* err, size_t size) {
  if (!out || out->struct_size < sizeof(mt_attachment)) return fail(err, size, "attachment: no output");
  return guarded(self, "attachment", err, size,
                 [&](CudaEngine& e) { cuda::read_attachment(e.ordinal(), e.info().pci_bus_id, *out); });
}
int cu_link_copies(void* self, mt_link_copy* c, char* err, size_t size) {
  if (!c || c->struct_size < sizeof(mt_link_copy) || (c->repeats && !c->elapsed_ns))
    return fail(err, size, "time_link_copies: no copy or no room for its times");
  std::string why;
  int rc = 0;
  const int failed = guarded(self, "time_link_copies", err, size, [&](CudaEngine& e) {
    rc = cuda::time_link_copies(e.ordinal(), e.info().pci_bus_id, *c, why);
  });
  if (failed) return failed;
  if (rc != 0) fail(err, size, why);
  return rc;
}

// Not under the engine's lock: the counted work runs jobs and probe kernels of its own.
int cu_count(void* self, int (*work)(void*), void* arg, mt_counts* out, char* err, size_t size) {
  auto* engine = static_cast<CudaEngine*>(self);
  if (!work || !out) return fail(err, size, "count: no work or output");
  if (const std::string off = gpu_counting_off_reason(); !off.empty()) {
    fail(err, size, off);
    return MT_COUNT_REFUSED;
  }
  try {
    cuda::check(cudaSetDevice(engine->ordinal()), "cudaSetDevice");
    std::string why;
    const int rc = engine->counters().count(work, arg, out, &why);
    if (!why.empty()) fail(err, size, why);
    return rc;
  } catch (const std::exception& e) {
    return fail(err, size, std::string("count: ") + e.what());
  }
}

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {
    using cuda::check;
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess) {
      cudaGetLastError();
      throw Error("cuda:" + std::to_string(ordinal) + ": no CUDA device can be used (cudaGetDeviceCount: " +
                  cudaGetErrorString(e) + "); use --device sim for the simulated GPU");
    }
    if (ordinal < 0 || ordinal >= count)
      throw Error("cuda:" + std::to_string(ordinal) + ": no such device (" + std::to_string(count) + " present)");
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties");
    info_.struct_size = sizeof(info_);
    engine::copy_utf8_truncated(info_.name, sizeof info_.name, p.name);
    std::snprintf(info_.backend, sizeof info_.backend, "cuda");
    info_.ordinal = ordinal;
    info_.cc_major = p.major;
    info_.cc_minor = p.minor;
    info_.sm_count = p.multiProcessorCount;
    info_.warp_size = p.warpSize;
    info_.sm_clock_khz = cuda::device_attribute(cudaDevAttrClockRate, ordinal);
    info_.memory_clock_khz = cuda::device_attribute(cudaDevAttrMemoryClockRate, ordinal);
    info_.memory_bus_width_bits = p.memoryBusWidth;
    info_.global_memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    info_.l2_bytes = p.l2CacheSize;
    info_.shared_per_sm_bytes = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
    info_.shared_per_block_bytes = static_cast<int64_t>(p.sharedMemPerBlock);
    info_.shared_per_block_optin_bytes = static_cast<int64_t>(p.sharedMemPerBlockOptin);
    info_.constant_memory_bytes = static_cast<int64_t>(p.totalConstMem);
    info_.constant_reach_bytes = engine::constant_reach(info_.constant_memory_bytes, p.major);
    info_.registers_per_sm = p.regsPerMultiprocessor;
    info_.registers_per_block = p.regsPerBlock;
    info_.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
    info_.max_threads_per_block = p.maxThreadsPerBlock;
    info_.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
    check(cudaDriverGetVersion(&info_.driver_version), "cudaDriverGetVersion");
    check(cudaRuntimeGetVersion(&info_.runtime_version), "cudaRuntimeGetVersion");
    const unsigned char* u = reinterpret_cast<const unsigned char*>(p.uuid.bytes);
    std::snprintf(info_.uuid, sizeof info_.uuid,
                  "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                  u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    check(cudaDeviceGetPCIBusId(info_.pci_bus_id, sizeof info_.pci_bus_id, ordinal), "cudaDeviceGetPCIBusId");
    engine_ = std::make_unique<CudaEngine>(ordinal, info_);
    backend_.struct_size = sizeof(backend_);
    backend_.self = engine_.get();
    backend_.name = "cuda";
    backend_.capabilities = CudaEngine::limits().capabilities;
    backend_.streams_max = CudaEngine::limits().streams_max;
    backend_.pump_warps_max = CudaEngine::limits().pump_warps_max;
    backend_.run_jobs = &cu_run_jobs;
    backend_.timing_overhead = &cu_overhead;
    backend_.alloc_buffer = &cu_alloc;
    backend_.free_buffer = &cu_free;
    backend_.copy_buffer = &cu_copy;
    backend_.fill_buffer = &cu_fill;
    backend_.count = &cu_count;
    backend_.attachment = &cu_attachment;
    backend_.time_link_copies = &cu_link_copies;
    // Probe kernels launch through the CUDA runtime in the plugin: no launch_kernel here.
  }
  const mt_backend* backend() const override { return &backend_; }
  const mt_device_info& info() const override { return info_; }
  std::string description() const override { return "cuda:" + std::to_string(ordinal_); }
  std::string sticky_error() const override {
    if (cudaSetDevice(ordinal_) == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess) return {};
    cudaGetLastError();  // clears an error that is not sticky
    const cudaError_t again = cudaDeviceSynchronize();
    if (again == cudaSuccess) return {};
    return std::string(cudaGetErrorName(again)) + ": " + cudaGetErrorString(again);
  }

 private:
  int ordinal_;
  mt_device_info info_{};
  std::unique_ptr<CudaEngine> engine_;
  mt_backend backend_{};
};

}  // namespace

bool cuda_built() { return true; }

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the non-sticky "no device" error
    return 0;
  }
  return n;
}

std::unique_ptr<Device> open_cuda(int ordinal) { return std::make_unique<CudaDevice>(ordinal); }

}  // namespace memtopo::engine
