#include "mapped_memory.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

namespace memtopo::cuda {
namespace {

// The driver functions, looked up once through the runtime (the engine does not link libcuda).
struct Driver {
  PFN_cuMemGetAllocationGranularity_v10020 granularity = nullptr;
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemAddressReserve_v10020 reserve = nullptr;
  PFN_cuMemAddressFree_v10020 address_free = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
  bool complete() const {
    return granularity && create && release && reserve && address_free && map && unmap && set_access;
  }
};

template <class F>
void look_up(F& f, const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 10020, cudaEnableDefault, &found) == cudaSuccess &&
      found == cudaDriverEntryPointSuccess)
    f = reinterpret_cast<F>(fn);
  cudaGetLastError();
}

const Driver& driver() {
  static const Driver d = [] {
    Driver r;
    look_up(r.granularity, "cuMemGetAllocationGranularity");
    look_up(r.create, "cuMemCreate");
    look_up(r.release, "cuMemRelease");
    look_up(r.reserve, "cuMemAddressReserve");
    look_up(r.address_free, "cuMemAddressFree");
    look_up(r.map, "cuMemMap");
    look_up(r.unmap, "cuMemUnmap");
    look_up(r.set_access, "cuMemSetAccess");
    return r;
  }();
  return d;
}

}  // namespace

std::optional<MappedMemory> map_device_memory(uint64_t bytes) {
  const Driver& d = driver();
  int device = 0;
  if (!d.complete() || cudaGetDevice(&device) != cudaSuccess) {  // a device without the API fails cuMemCreate
    cudaGetLastError();
    return std::nullopt;
  }
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t granularity = 0;
  if (d.granularity(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) != CUDA_SUCCESS || granularity == 0)
    return std::nullopt;
  const uint64_t page = granularity < (uint64_t(2) << 20) ? (uint64_t(2) << 20) : granularity;
  MappedMemory m;
  m.bytes = (bytes + page - 1) / page * page;
  CUmemGenericAllocationHandle handle = 0;
  if (d.create(&handle, m.bytes, &prop, 0) != CUDA_SUCCESS) return std::nullopt;
  CUdeviceptr base = 0;
  if (d.reserve(&base, m.bytes, page, 0, 0) != CUDA_SUCCESS) {
    d.release(handle);
    return std::nullopt;
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (d.map(base, m.bytes, 0, handle, 0) != CUDA_SUCCESS) {
    d.address_free(base, m.bytes);
    d.release(handle);
    return std::nullopt;
  }
  if (d.set_access(base, m.bytes, &access, 1) != CUDA_SUCCESS) {
    d.unmap(base, m.bytes);
    d.address_free(base, m.bytes);
    d.release(handle);
    return std::nullopt;
  }
  m.data = reinterpret_cast<void*>(base);
  m.handle = handle;
  return m;
}

void unmap_device_memory(const MappedMemory& m) {
  const Driver& d = driver();
  const auto base = reinterpret_cast<CUdeviceptr>(m.data);
  // Errors ignored: nothing to do about them when memory is given back.
  d.unmap(base, m.bytes);
  d.address_free(base, m.bytes);
  d.release(m.handle);
}

}  // namespace memtopo::cuda
