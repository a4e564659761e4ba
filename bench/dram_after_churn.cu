// memtopo-dram-after-churn: does device memory that a process mapped and released before slow
// its later DRAM streams? (data-cache/l1d-geometry leaves a process whose DRAM streams are 16 %
// slower, docs/results/log/h100.md, "What l1d-geometry leaves behind".) Plain CUDA C++ and driver
// calls, none of memtopo's code. One process per variant:
//
//   memtopo-dram-after-churn VARIANT [STREAM_MIB] [CHURN_MIB] [PIECE_MIB]
//
//   fresh       the stream buffer mapped in a fresh process
//   big         first one mapping of CHURN_MIB, written, released
//   bigkeep     first one mapping of CHURN_MIB, written and kept
//   granules    first CHURN_MIB in separate 2 MiB mappings, written, released
//   buffers     first CHURN_MIB in 256 MiB mappings, one after another (each written, released)
//   early       the stream buffer mapped first, then the big churn
//
// PIECE_MIB (0: one piece): the stream buffer's physical allocations, mapped side by side.
//
// Prints the best DRAM read rate of ten reads of the stream buffer (TB/s by CUDA events), for a
// buffer mapped like memtopo's (cuMemCreate + cuMemMap) and one from cudaMalloc.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// A copy of the driver table of memtopo/device/virtual_memory.hpp, on purpose: the programs of
// bench/ are plain CUDA checks, independent of memtopo's SDK.
struct Driver {
  PFN_cuMemCreate_v10020 create = nullptr;
  PFN_cuMemRelease_v10020 release = nullptr;
  PFN_cuMemAddressReserve_v10020 reserve = nullptr;
  PFN_cuMemAddressFree_v10020 address_free = nullptr;
  PFN_cuMemMap_v10020 map = nullptr;
  PFN_cuMemUnmap_v10020 unmap = nullptr;
  PFN_cuMemSetAccess_v10020 set_access = nullptr;
};

template <class F>
void look_up(F& f, const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion(symbol, &fn, 10020, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    std::fprintf(stderr, "no driver entry point %s\n", symbol);
    std::exit(1);
  }
  f = reinterpret_cast<F>(fn);
}

Driver d;
CUmemAllocationProp prop{};
constexpr size_t kGranule = size_t(2) << 20;

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, int(r));
    std::exit(1);
  }
}

struct Mapping {
  CUdeviceptr base = 0;
  size_t bytes = 0;
  std::vector<CUmemGenericAllocationHandle> handles;
  size_t piece = 0;
};

// `bytes` in pieces of `piece` bytes (each its own physical allocation), one reservation.
Mapping map_pieces(size_t bytes, size_t piece) {
  Mapping m;
  m.bytes = bytes, m.piece = piece;
  check(d.reserve(&m.base, bytes, kGranule, 0, 0), "cuMemAddressReserve");
  for (size_t off = 0; off < bytes; off += piece) {
    CUmemGenericAllocationHandle h = 0;
    check(d.create(&h, piece, &prop, 0), "cuMemCreate");
    check(d.map(m.base + off, piece, 0, h, 0), "cuMemMap");
    m.handles.push_back(h);
  }
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check(d.set_access(m.base, bytes, &access, 1), "cuMemSetAccess");
  return m;
}

void unmap(Mapping& m) {
  check(d.unmap(m.base, m.bytes), "cuMemUnmap");
  for (auto h : m.handles) check(d.release(h), "cuMemRelease");
  check(d.address_free(m.base, m.bytes), "cuMemAddressFree");
}

__global__ void read_all(const uint4* p, unsigned long long n, unsigned* sink) {
  unsigned acc = 0;
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    const uint4 v = __ldcg(p + i);
    acc ^= v.x ^ v.w;
  }
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

double best_tbps(const void* p, size_t bytes, int sms, unsigned* sink) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  double best = 0;
  for (int r = 0; r < 11; ++r) {
    cudaEventRecord(a);
    read_all<<<sms * 8, 256>>>(static_cast<const uint4*>(p), bytes / 16, sink);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    if (r > 0 && bytes / (ms * 1e-3) / 1e12 > best) best = bytes / (ms * 1e-3) / 1e12;
  }
  return best;
}

void churn(const std::string& variant, size_t churn_bytes) {
  if (variant == "big" || variant == "bigkeep" || variant == "granules" || variant == "early") {
    Mapping m = map_pieces(churn_bytes, variant == "granules" ? kGranule : churn_bytes);
    cudaMemset(reinterpret_cast<void*>(m.base), 1, churn_bytes);
    cudaDeviceSynchronize();
    if (variant != "bigkeep") unmap(m);
  } else if (variant == "buffers") {
    for (size_t done = 0; done < churn_bytes; done += size_t(256) << 20) {
      Mapping m = map_pieces(size_t(256) << 20, size_t(256) << 20);
      cudaMemset(reinterpret_cast<void*>(m.base), 1, m.bytes);
      cudaDeviceSynchronize();
      unmap(m);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string variant = argc > 1 ? argv[1] : "fresh";
  const size_t stream_bytes = (argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 1600) << 20;
  const size_t churn_bytes = (argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 8192) << 20;
  const size_t piece_bytes = (argc > 4 ? std::strtoull(argv[4], nullptr, 10) : 0) << 20;
  if (cudaSetDevice(0) != cudaSuccess) return std::printf("no CUDA device\n"), 1;
  cudaFree(nullptr);
  look_up(d.create, "cuMemCreate");
  look_up(d.release, "cuMemRelease");
  look_up(d.reserve, "cuMemAddressReserve");
  look_up(d.address_free, "cuMemAddressFree");
  look_up(d.map, "cuMemMap");
  look_up(d.unmap, "cuMemUnmap");
  look_up(d.set_access, "cuMemSetAccess");
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = 0;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned* sink = nullptr;
  cudaMalloc(&sink, 64);
  const size_t piece = piece_bytes ? piece_bytes : (stream_bytes + kGranule - 1) / kGranule * kGranule;
  const size_t rounded = (stream_bytes + piece - 1) / piece * piece;
  Mapping early;
  if (variant == "early") early = map_pieces(rounded, piece);
  churn(variant, churn_bytes);
  Mapping m = variant == "early" ? early : map_pieces(rounded, piece);
  cudaMemset(reinterpret_cast<void*>(m.base), 0, rounded);
  const double mapped = best_tbps(reinterpret_cast<void*>(m.base), rounded, sms, sink);
  void* plain = nullptr;
  double malloced = 0;
  if (cudaMalloc(&plain, rounded) == cudaSuccess) {
    cudaMemset(plain, 0, rounded);
    malloced = best_tbps(plain, rounded, sms, sink);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("%-9s stream %zu MiB in %zu MiB pieces, churn %zu MiB: mapped %.3f TB/s, cudaMalloc %.3f TB/s%s%s\n",
              variant.c_str(), rounded >> 20, piece >> 20, variant == "fresh" ? size_t(0) : churn_bytes >> 20, mapped, malloced,
              e == cudaSuccess ? "" : ", error: ", e == cudaSuccess ? "" : cudaGetErrorString(e));
  return e == cudaSuccess ? 0 : 1;
}
