// CUDA backend (minimal: device properties). The measurement kernels arrive with the
// measurement-engine issue.
#include <cuda_runtime.h>

#include <cstdio>
#include <memory>
#include <string>

#include "memtopo/engine.hpp"
#include "memtopo/probe.hpp"

namespace memtopo::engine {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, a, dev), "cudaDeviceGetAttribute");
  return v;
}

int not_yet(char* err, size_t n) {
  std::snprintf(err, n, "the CUDA backend has no measurement kernels yet");
  return 1;
}
int cu_fine(void*, mt_chase_job*, size_t, char* err, size_t n) { return not_yet(err, n); }
int cu_avg(void*, mt_chase_job*, size_t, char* err, size_t n) { return not_yet(err, n); }
int cu_seq(void*, mt_sequence_job*, char* err, size_t n) { return not_yet(err, n); }
int cu_overhead(void*, double*, char* err, size_t n) { return not_yet(err, n); }

class CudaDevice final : public Device {
 public:
  explicit CudaDevice(int ordinal) : ordinal_(ordinal) {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (ordinal < 0 || ordinal >= count)
      throw Error("cuda:" + std::to_string(ordinal) + ": no such device (" + std::to_string(count) + " present)");
    check(cudaSetDevice(ordinal), "cudaSetDevice");
    cudaDeviceProp p{};
    check(cudaGetDeviceProperties(&p, ordinal), "cudaGetDeviceProperties");
    info_.struct_size = sizeof(info_);
    std::snprintf(info_.name, sizeof info_.name, "%s", p.name);
    std::snprintf(info_.backend, sizeof info_.backend, "cuda");
    info_.ordinal = ordinal;
    info_.cc_major = p.major;
    info_.cc_minor = p.minor;
    info_.sm_count = p.multiProcessorCount;
    info_.warp_size = p.warpSize;
    info_.sm_clock_khz = attr(cudaDevAttrClockRate, ordinal);
    info_.memory_clock_khz = attr(cudaDevAttrMemoryClockRate, ordinal);
    info_.memory_bus_width_bits = p.memoryBusWidth;
    info_.global_memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    info_.l2_bytes = p.l2CacheSize;
    info_.shared_per_sm_bytes = static_cast<int64_t>(p.sharedMemPerMultiprocessor);
    info_.shared_per_block_bytes = static_cast<int64_t>(p.sharedMemPerBlock);
    info_.shared_per_block_optin_bytes = static_cast<int64_t>(p.sharedMemPerBlockOptin);
    info_.constant_memory_bytes = static_cast<int64_t>(p.totalConstMem);
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
    backend_.struct_size = sizeof(backend_);
    backend_.self = this;
    backend_.name = "cuda";
    backend_.fine_chase = &cu_fine;
    backend_.average_chase = &cu_avg;
    backend_.sequence_chase = &cu_seq;
    backend_.timing_overhead = &cu_overhead;
  }
  const mt_backend* backend() const override { return &backend_; }
  const mt_device_info& info() const override { return info_; }
  std::string description() const override { return "cuda:" + std::to_string(ordinal_); }

 private:
  int ordinal_;
  mt_device_info info_{};
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
