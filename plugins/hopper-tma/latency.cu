// hopper-tma/latency: cycles from issuing a bulk copy to the completion of its mbarrier, by
// transfer size, for cp.async.bulk (1D) and cp.async.bulk.tensor (2D tiles), with the source
// in L2 and in DRAM.
#include <cudaTypedefs.h>

#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "probes.hpp"
#include "tma_analysis.hpp"
#include "tma_ptx.cuh"

namespace hopper_tma {
namespace {

constexpr uint64_t kFreshGapBytes = 8 * 1024;  // between the sources of two copies

// A barrier that completes on one arrival and the transactions it expects.
__device__ __forceinline__ uint32_t single_barrier(unsigned long long* bar) {
  const uint32_t b = cta_address(bar);
  barrier_init(b, 1);
  barrier_init_fence();
  return b;
}

// Issues one copy (`issue` completes `bytes` on barrier `b`) and waits for it, after an
// untimed one of the same region when `warm`. Returns the cycles of the timed copy.
template <class Issue>
__device__ __forceinline__ unsigned long long timed_copy(Issue issue, uint32_t b, uint32_t bytes, uint32_t& parity,
                                                         bool warm) {
  for (int pass = warm ? 0 : 1; pass < 2; ++pass) {
    const unsigned long long t0 = memtopo::device::clock_now();
    barrier_expect(b, bytes);
    issue();
    barrier_wait(b, parity);
    const unsigned long long t1 = memtopo::device::clock_now();
    parity ^= 1;
    if (pass == 1) return t1 - t0;
  }
  return 0;
}

// Thread 0 times `reps` copies of every size, each from a region no copy read before. From L2
// (fresh == 0) an untimed copy of the same region brings it in first; from DRAM (fresh == 1)
// the caller evicted L2. Many regions: L2 hits cost more in the far partition than in the near.
__global__ void bulk_latency(const char* src, const unsigned* sizes, unsigned n_sizes, unsigned reps, int fresh,
                             unsigned long long* out) {
  extern __shared__ __align__(1024) unsigned char dst[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  const uint32_t b = single_barrier(&bar), d = cta_address(dst);
  uint32_t parity = 0;
  unsigned long long offset = 0;
  for (unsigned s = 0; s < n_sizes; ++s) {
    for (unsigned r = 0; r <= reps; ++r) {
      const char* from = src + offset;
      offset += (sizes[s] + kFreshGapBytes + 4095) / 4096 * 4096;
      const uint32_t bytes = sizes[s];  // in a register: no load between the clock reads
      const unsigned long long cycles = timed_copy([=] { bulk_copy(d, from, bytes, b); }, b, bytes, parity, !fresh);
      if (r > 0) out[s * reps + r - 1] = cycles;  // the first copy of a size is not kept
    }
  }
}

// The same for tiles of the 2D tensor `map`: copy r reads the tile at column r % per_row * step
// (`step` elements: no 128 B line of one tile is in another), row r / per_row * tile_h.
__global__ void tensor_latency(const __grid_constant__ CUtensorMap map, unsigned step, unsigned per_row,
                               unsigned tile_h, unsigned tile_bytes, unsigned reps, int fresh, unsigned long long* out) {
  extern __shared__ __align__(1024) unsigned char dst[];
  __shared__ __align__(8) unsigned long long bar;
  if (threadIdx.x != 0) return;
  const uint32_t b = single_barrier(&bar), d = cta_address(dst);
  uint32_t parity = 0;
  for (unsigned r = 0; r <= reps; ++r) {
    const int x = int(r % per_row * step), y = int(r / per_row * tile_h);
    const CUtensorMap* m = &map;  // the parameter itself: a copy would be in local memory
    const unsigned long long cycles = timed_copy([=] { tensor_copy_2d(d, m, x, y, b); }, b, tile_bytes, parity, !fresh);
    if (r > 0) out[r - 1] = cycles;
  }
}

// Keeps every SM busy for `ns`: the clocks leave their idle state before anything is timed.
__global__ void busy(unsigned long long ns) {
  const unsigned long long t0 = memtopo::device::globaltimer_ns();
  while (memtopo::device::globaltimer_ns() - t0 < ns) {
  }
}

// Reads `bytes` through L2 so that what was there before is evicted.
__global__ void evict_l2(const uint4* p, unsigned long long words, unsigned* sink) {
  uint32_t acc = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < words; i += gridDim.x * blockDim.x)
    acc ^= __ldcg(p + i).x;
  if (acc == 0x9e3779b9u) *sink = acc;
}

struct Scratch {
  memtopo::device::Buffer<char> src;      // copy sources: a 2D tensor of floats too
  memtopo::device::Buffer<uint4> evict;   // twice the L2
  memtopo::device::Buffer<unsigned> sink;
  Scratch(const memtopo::Context& ctx, size_t src_bytes)
      : src(ctx, src_bytes), evict(ctx, size_t(2 * ctx.device().l2_bytes) / 16 + 1), sink(ctx, 1) {}
};

void evict(const memtopo::Context& ctx, const Scratch& s) {
  memtopo::device::LaunchConfig cfg;
  cfg.grid = {unsigned(ctx.device().sm_count) * 4};
  cfg.block = {256};
  cfg.warmup_launches = 0;
  memtopo::device::launch_cuda(ctx, "evict_l2", evict_l2, cfg, static_cast<const uint4*>(s.evict.get()),
                        (unsigned long long)(s.evict.size()), s.sink.get());
}

int max_shared_bytes(const memtopo::Context& ctx) {
  int optin = 0;
  memtopo::device::cuda_check(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, ctx.device().ordinal),
                       "bulk_latency", "cudaDeviceGetAttribute");
  return optin;
}

// A 2D tensor of floats, `width` x `height`, at `base`, read in tiles of tile_w x tile_h.
CUtensorMap tensor_map(void* base, uint64_t width, uint64_t height, uint32_t tile_w, uint32_t tile_h) {
  static const auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(
      memtopo::device::driver_function("cuTensorMapEncodeTiled", 12000));
  CUtensorMap map{};
  const cuuint64_t dims[2] = {width, height}, strides[1] = {width * 4};
  const cuuint32_t box[2] = {tile_w, tile_h}, steps[2] = {1, 1};
  const CUresult r = encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, base, dims, strides, box, steps,
                            CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                            CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw memtopo::Error("cuTensorMapEncodeTiled refused a tile of " + std::to_string(tile_w) + " x " +
                         std::to_string(tile_h) + " floats (CUresult " + std::to_string(int(r)) + ")");
  return map;
}

}  // namespace

namespace {

constexpr uint64_t kTensorWidth = 32768, kTensorHeight = 1024;  // floats: 128 MiB

struct Tile {
  unsigned w, h;
};

// Powers of two from 16 B, then the largest multiple of 16 that the block's shared memory holds.
std::vector<unsigned> transfer_sizes(unsigned largest) {
  std::vector<unsigned> sizes;
  for (unsigned s = 16; s < largest; s *= 2) sizes.push_back(s);
  sizes.push_back(largest);
  return sizes;
}

std::vector<double> centres(const std::vector<unsigned long long>& cycles, size_t groups, unsigned reps,
                            const std::vector<int64_t>& bytes, std::vector<LatencySample>& all) {
  std::vector<LatencySample> samples;
  for (size_t g = 0; g < groups; ++g)
    for (unsigned r = 0; r < reps; ++r) samples.push_back({bytes[g], double(cycles[g * reps + r])});
  all.insert(all.end(), samples.begin(), samples.end());
  std::vector<double> out;
  for (const SizeLatency& s : latency_by_size(samples)) out.push_back(s.centre_cycles);
  return out;
}

// The 10th and 90th percentiles per size: how the copies spread (two levels, the near and far
// L2 partition; two from DRAM too). Percentiles of 256 copies move by several percent between
// runs (their keys are declared to vary).
void store_spread(memtopo::Context& ctx, const std::string& key, const std::vector<LatencySample>& samples) {
  std::vector<double> low, high;
  for (const SizeLatency& s : latency_by_size(samples)) {
    low.push_back(s.low_cycles);
    high.push_back(s.high_cycles);
  }
  const std::string why = "the latencies fall in two levels (near and far homes) whose shares change from run to run";
  ctx.result(key + "_p10_cycles", low, {0.9, memtopo::Bound::Exact, "10th percentile per size; " + why});
  ctx.result(key + "_p90_cycles", high, {0.9, memtopo::Bound::Exact, "90th percentile per size; " + why});
}

}  // namespace

void measure_latency(memtopo::Context& ctx) {
  cudaFuncAttributes attr{};
  memtopo::device::cuda_check(cudaFuncGetAttributes(&attr, bulk_latency), "bulk_latency", "cudaFuncGetAttributes");
  const unsigned largest = unsigned(max_shared_bytes(ctx) - int(attr.sharedSizeBytes) - 1024) / 16 * 16;
  const std::vector<unsigned> sizes = transfer_sizes(largest);
  const unsigned reps = unsigned(ctx.option<int64_t>("repeats"));
  uint64_t fresh_bytes = 0;
  for (unsigned s : sizes) fresh_bytes += (reps + 1) * ((s + kFreshGapBytes + 4095) / 4096 * 4096);
  Scratch scratch(ctx, std::max(fresh_bytes, kTensorWidth * kTensorHeight * 4));
  memtopo::device::Buffer<unsigned> dev_sizes(ctx, sizes.size());
  dev_sizes.upload(sizes);
  memtopo::device::Buffer<unsigned long long> out(ctx, sizes.size() * reps);
  memtopo::device::LaunchConfig cfg;
  cfg.block = {32};
  cfg.dynamic_shared_bytes = largest;
  const std::vector<int64_t> bytes(sizes.begin(), sizes.end());
  memtopo::device::LaunchConfig all_sms;
  all_sms.grid = {unsigned(ctx.device().sm_count)};
  all_sms.warmup_launches = 0;
  memtopo::device::launch_cuda(ctx, "busy", busy, all_sms, 50'000'000ull);
  std::vector<LatencySample> bulk_l2, bulk_dram, tensor_l2, tensor_dram;
  memtopo::device::launch_cuda(ctx, "bulk_latency", bulk_latency, cfg, static_cast<const char*>(scratch.src.get()),
                        static_cast<const unsigned*>(dev_sizes.get()), unsigned(sizes.size()), reps, 0, out.get());
  const std::vector<double> l2 = centres(out.download(), sizes.size(), reps, bytes, bulk_l2);
  evict(ctx, scratch);
  memtopo::device::LaunchConfig cold = cfg;
  cold.warmup_launches = 0;
  memtopo::device::launch_cuda(ctx, "bulk_latency", bulk_latency, cold, static_cast<const char*>(scratch.src.get()),
                        static_cast<const unsigned*>(dev_sizes.get()), unsigned(sizes.size()), reps, 1, out.get());
  const std::vector<double> dram = centres(out.download(), sizes.size(), reps, bytes, bulk_dram);
  ctx.progress(0.5, "tensor tiles");

  std::vector<int64_t> tile_bytes;
  std::vector<double> tl2, tdram;
  for (const Tile t : {Tile{4, 4}, Tile{8, 8}, Tile{16, 16}, Tile{32, 32}, Tile{64, 64}, Tile{128, 128}, Tile{256, 128},
                       Tile{256, 224}}) {
    const unsigned tb = t.w * t.h * 4;
    const unsigned step = std::max(t.w, 64u);  // 256 B at least: tiles share no line or sector
    const unsigned per_row = unsigned(kTensorWidth / step);
    if (tb > largest || (reps + per_row) / per_row * t.h > kTensorHeight) continue;
    const CUtensorMap map = tensor_map(scratch.src.get(), kTensorWidth, kTensorHeight, t.w, t.h);
    tile_bytes.push_back(tb);
    const std::vector<int64_t> one(1, tb);
    memtopo::device::launch_cuda(ctx, "tensor_latency", tensor_latency, cfg, map, step, per_row, t.h, tb, reps, 0, out.get());
    tl2.push_back(centres(out.download(), 1, reps, one, tensor_l2).at(0));
    evict(ctx, scratch);
    memtopo::device::launch_cuda(ctx, "tensor_latency", tensor_latency, cold, map, step, per_row, t.h, tb, reps, 1, out.get());
    tdram.push_back(centres(out.download(), 1, reps, one, tensor_dram).at(0));
  }
  std::vector<double> rows;
  int series = 0;
  for (const auto* v : {&bulk_l2, &bulk_dram, &tensor_l2, &tensor_dram}) {
    for (const LatencySample& s : *v) rows.insert(rows.end(), {double(series), double(s.bytes), s.cycles});
    ++series;
  }
  ctx.raw("latency", {"series", "bytes", "cycles"}, rows);  // series 0 bulk L2, 1 bulk DRAM, 2 tensor L2, 3 tensor DRAM
  const std::string how = "cycles from issue to mbarrier completion, the interquartile mean of " +
                          std::to_string(reps) + " copies by one thread";
  ctx.result("tma.max_transfer_bytes", int64_t(largest),
             {0.99, memtopo::Bound::Exact, "the largest copy into one block's shared memory: the opt-in limit"});
  ctx.result("tma.latency_sizes_bytes", bytes);
  ctx.result("tma.bulk_l2_latency_cycles", l2, {0.95, memtopo::Bound::Exact, "cp.async.bulk from L2; " + how});
  ctx.result("tma.bulk_dram_latency_cycles", dram,
             {0.9, memtopo::Bound::Exact, "cp.async.bulk of regions no copy read before, L2 evicted; " + how});
  store_spread(ctx, "tma.bulk_l2_latency", bulk_l2);
  store_spread(ctx, "tma.bulk_dram_latency", bulk_dram);
  store_spread(ctx, "tma.tensor_l2_latency", tensor_l2);
  store_spread(ctx, "tma.tensor_dram_latency", tensor_dram);
  ctx.result("tma.tensor_tile_bytes", tile_bytes);
  ctx.result("tma.tensor_l2_latency_cycles", tl2,
             {0.95, memtopo::Bound::Exact, "cp.async.bulk.tensor.2d of float tiles from L2; " + how});
  ctx.result("tma.tensor_dram_latency_cycles", tdram,
             {0.9, memtopo::Bound::Exact, "cp.async.bulk.tensor.2d of tiles no copy read before, L2 evicted; " + how});
}

}  // namespace hopper_tma
