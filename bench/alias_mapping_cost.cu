// memtopo-alias-mapping-cost: what tlb/mapped-levels' aliased mapping costs (plain CUDA driver
// API): N virtual pages of the mapping granularity, each block mapped at many pages, mapped
// one cuMemMap at a time from 1 to T host threads, then unmapped page by page or as one range.
//   memtopo-alias-mapping-cost [DEVICE] [PAGES (0: the device's memory)] [ALIASES (0: one per line)] [THREADS...]
// With MEMTOPO_ALIAS_EXIT=1 it exits after mapping (the teardown is then the context's).
#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

void check(CUresult r, const char* what) {
  if (r == CUDA_SUCCESS) return;
  const char* s = nullptr;
  cuGetErrorString(r, &s);
  std::fprintf(stderr, "%s: %s\n", what, s ? s : "?");
  std::exit(1);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Mapping {
  CUdeviceptr base = 0;
  uint64_t pages = 0, block = 0, per_block = 0;
  std::vector<CUmemGenericAllocationHandle> handles;
};

void map_range(const Mapping& m, uint64_t first, uint64_t end) {
  for (uint64_t k = first; k < end; ++k)
    check(cuMemMap(m.base + k * m.block, m.block, 0, m.handles[k / m.per_block], 0), "cuMemMap");
}

}  // namespace

int main(int argc, char** argv) {
  const int dev_index = argc > 1 ? std::atoi(argv[1]) : 0;
  check(cuInit(0), "cuInit");
  CUdevice dev;
  check(cuDeviceGet(&dev, dev_index), "cuDeviceGet");
  CUcontext ctx;
  check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = dev_index;
  size_t gran = 0;
  check(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), "granularity");
  size_t total = 0;
  check(cuDeviceTotalMem(&total, dev), "cuDeviceTotalMem");
  Mapping m;
  m.block = gran;
  m.per_block = argc > 3 && std::atoll(argv[3]) > 0 ? uint64_t(std::atoll(argv[3])) : gran / 128;
  m.pages = argc > 2 && std::atoll(argv[2]) > 0 ? uint64_t(std::atoll(argv[2])) : (total + gran - 1) / gran;
  std::vector<int> thread_counts;
  for (int i = 4; i < argc; ++i) thread_counts.push_back(std::atoi(argv[i]));
  if (thread_counts.empty()) thread_counts = {1, 2, 4, 8};
  for (uint64_t b = 0; b < (m.pages + m.per_block - 1) / m.per_block; ++b) {
    m.handles.push_back(0);
    check(cuMemCreate(&m.handles.back(), m.block, &prop, 0), "cuMemCreate");
  }
  check(cuMemAddressReserve(&m.base, m.pages * m.block, m.block, 0, 0), "cuMemAddressReserve");
  std::printf("pages %llu of %zu B, %llu aliases a block, %zu blocks\n", (unsigned long long)m.pages, gran,
              (unsigned long long)m.per_block, m.handles.size());
  CUmemAccessDesc access{};
  access.location = prop.location;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  // Each step spread over `threads` host threads, each its share of the pages.
  auto spread = [&](int threads, auto&& step) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
        step(m.pages * t / threads, m.pages * (t + 1) / threads);
      });
    for (auto& th : pool) th.join();
    return seconds_since(t0);
  };
  for (int threads : thread_counts) {
    const double map_s = spread(threads, [&](uint64_t first, uint64_t end) { map_range(m, first, end); });
    const double access_s = spread(threads, [&](uint64_t first, uint64_t end) {
      check(cuMemSetAccess(m.base + first * m.block, (end - first) * m.block, &access, 1), "cuMemSetAccess");
    });
    // MEMTOPO_ALIAS_EXIT=1: end the process with every page mapped, so that the time the
    // driver takes to tear them down with the context shows in the caller's clock.
    if (std::getenv("MEMTOPO_ALIAS_EXIT")) {
      std::printf("threads %d: map %.3f s, access %.3f s; exiting with the pages mapped\n", threads, map_s, access_s);
      std::fflush(stdout);
      std::_Exit(0);
    }
    const double unmap_s = spread(threads, [&](uint64_t first, uint64_t end) {
      for (uint64_t k = first; k < end; ++k) check(cuMemUnmap(m.base + k * m.block, m.block), "cuMemUnmap");
    });
    std::printf("threads %d: map %.3f s, access %.3f s, unmap %.3f s (page by page)\n", threads, map_s, access_s, unmap_s);
  }
  // Access page by page as each is mapped, unmapped as one range.
  {
    auto t0 = std::chrono::steady_clock::now();
    for (uint64_t k = 0; k < m.pages; ++k) {
      map_range(m, k, k + 1);
      check(cuMemSetAccess(m.base + k * m.block, m.block, &access, 1), "cuMemSetAccess");
    }
    const double map_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const bool whole = cuMemUnmap(m.base, m.pages * m.block) == CUDA_SUCCESS;
    if (!whole)
      for (uint64_t k = 0; k < m.pages; ++k) check(cuMemUnmap(m.base + k * m.block, m.block), "cuMemUnmap");
    std::printf("access each page as mapped: map and access %.3f s, unmap %.3f s (%s)\n", map_s, seconds_since(t0),
                whole ? "one range" : "one range refused, page by page");
  }
  check(cuMemAddressFree(m.base, m.pages * m.block), "cuMemAddressFree");
  for (auto h : m.handles) check(cuMemRelease(h), "cuMemRelease");
  return 0;
}
