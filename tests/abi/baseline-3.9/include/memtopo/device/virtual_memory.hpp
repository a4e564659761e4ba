#pragma once
// The CUDA driver's virtual-memory functions (cuMemCreate, cuMemMap, ...), which the runtime
// does not wrap, found once through the runtime (driver_function), so that a probe that maps
// physical blocks itself needs no link to libcuda. For .cu files only: CUDA GPUs have them,
// the simulated GPU has no such mappings.

#if defined(__CUDACC__)
#include <cuda.h>
#include <cudaTypedefs.h>

#include <type_traits>

#include "memtopo/device/launch.hpp"

namespace memtopo::device {

// The prototypes of CUDA 10.2 (API version 10020), the first with these functions.
struct VirtualMemoryDriver {
  PFN_cuMemGetAllocationGranularity_v10020 granularity = nullptr;
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemAddressReserve_v10020 reserve = nullptr;
  PFN_cuMemAddressFree_v10020 address_free = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
};

// Looked up on first use; throws memtopo::Error naming a function the driver lacks.
inline const VirtualMemoryDriver& virtual_memory_driver() {
  static const VirtualMemoryDriver d = [] {
    constexpr unsigned kVersion = 10020;
    const auto find = [](auto& f, const char* symbol) {
      f = reinterpret_cast<std::remove_reference_t<decltype(f)>>(driver_function(symbol, kVersion));
    };
    VirtualMemoryDriver r;
    find(r.granularity, "cuMemGetAllocationGranularity");
    find(r.create, "cuMemCreate");
    find(r.release, "cuMemRelease");
    find(r.reserve, "cuMemAddressReserve");
    find(r.address_free, "cuMemAddressFree");
    find(r.map, "cuMemMap");
    find(r.unmap, "cuMemUnmap");
    find(r.set_access, "cuMemSetAccess");
    return r;
  }();
  return d;
}

}  // namespace memtopo::device
#endif
