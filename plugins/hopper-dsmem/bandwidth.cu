// hopper-dsmem/bandwidth: how fast one SM reads another block's shared memory, by cluster size
// and access width, against its own shared memory and against L2.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/cuda/device.cuh>
#include <memtopo/cuda/launch.cuh>
#include <memtopo/probe.hpp>

#include "cluster_ptx.cuh"
#include "dsmem_analysis.hpp"
#include "probes.hpp"

namespace hopper_dsmem {
namespace {

constexpr unsigned kBufferBytes = 64 * 1024;
constexpr unsigned kThreads = 1024;
enum Source : int { kPeer = 0, kOwn = 1, kL2 = 2 };

// Every thread reads `Width` bytes at a time, a block-wide sweep of the 64 KiB buffer per
// round: of the block of the next rank (kPeer), of its own block (kOwn) or of the block's
// 64 KiB of global memory through L2 (kL2). Cycles from the first to the last thread's end.
template <int Width, int From>
__global__ void __launch_bounds__(kThreads) sweep(unsigned rounds, const char* global, unsigned long long* cycles,
                                                  unsigned* sink) {
  extern __shared__ uint4 buf[];
  for (unsigned i = threadIdx.x; i < kBufferBytes / 16; i += blockDim.x) buf[i] = make_uint4(i, i + 1, i + 2, i + 3);
  const uint32_t rank = memtopo::device::cluster_rank(), n = memtopo::device::cluster_blocks();
  cluster_sync();
  const uint32_t own = cta_address(buf);
  const uint32_t base = From == kPeer ? cluster_address(own, (rank + 1) % n) : own;
  const char* mine = global + size_t(blockIdx.x) * kBufferBytes;
  const unsigned step = blockDim.x * Width;
  uint32_t acc = 0;
  __syncthreads();
  const unsigned long long t0 = memtopo::device::clock_now();
  for (unsigned r = 0; r < rounds; ++r) {
#pragma unroll 16
    for (unsigned off = threadIdx.x * Width; off < kBufferBytes; off += step) {
      if constexpr (From == kPeer) acc ^= load_cluster_wide<Width>(base + off);
      if constexpr (From == kOwn) acc ^= load_cta_wide<Width>(base + off);
      if constexpr (From == kL2) acc ^= load_global_cg<Width>(mine + off);
    }
  }
  __syncthreads();
  const unsigned long long t1 = memtopo::device::clock_now();
  if (acc == 0x9e3779b9u) *sink = acc;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  cluster_sync();
}

struct Sweep {
  int width, from;
  unsigned cluster;
};

// Per-SM GB/s of every block of one launch.
std::vector<double> run_sweep(const memtopo::Context& ctx, const Sweep& s, unsigned clusters, unsigned rounds,
                              const memtopo::cuda::DeviceBuffer<char>& global) {
  memtopo::cuda::LaunchConfig cfg;
  cfg.block = dim3(kThreads);
  cfg.cluster = dim3(s.cluster);
  cfg.non_portable_cluster = s.cluster > 8;
  cfg.grid = dim3(clusters * s.cluster);
  cfg.dynamic_shared_bytes = unsigned(std::max<int64_t>(kBufferBytes, ctx.device().shared_per_sm_bytes / 2 + 1024));
  memtopo::cuda::DeviceBuffer<unsigned long long> cycles(ctx, cfg.grid.x);
  memtopo::cuda::DeviceBuffer<unsigned> sink(ctx, 1);
  using K = void (*)(unsigned, const char*, unsigned long long*, unsigned*);
  static const K kernels[3][3] = {{sweep<4, kPeer>, sweep<4, kOwn>, sweep<4, kL2>},
                                  {sweep<8, kPeer>, sweep<8, kOwn>, sweep<8, kL2>},
                                  {sweep<16, kPeer>, sweep<16, kOwn>, sweep<16, kL2>}};
  const int w = s.width == 4 ? 0 : s.width == 8 ? 1 : 2;
  const auto report = memtopo::cuda::launch(ctx, "sweep", kernels[w][s.from], cfg, rounds,
                                            static_cast<const char*>(global.get()), cycles.get(), sink.get());
  const double mhz = 0.5 * (report.sm_clock_mhz_before + report.sm_clock_mhz_after);
  std::vector<double> per_sm;
  for (unsigned long long c : cycles.download()) per_sm.push_back(memtopo::analysis::gbps_from_cycles(double(rounds) * kBufferBytes, double(c), mhz));
  return per_sm;
}

}  // namespace

void measure_bandwidth(memtopo::Context& ctx) {
  const int64_t max_blocks = ctx.input<int64_t>("dsmem.max_cluster_blocks");
  const std::vector<int64_t> resident = ctx.input<std::vector<int64_t>>("dsmem.resident_clusters");
  const unsigned rounds = unsigned(ctx.option<int64_t>("rounds"));
  memtopo::cuda::DeviceBuffer<char> global(ctx, size_t(ctx.device().sm_count) * kBufferBytes);
  const std::vector<int> widths = {4, 8, 16};
  std::vector<int64_t> sizes;
  for (int64_t s = 2; s <= max_blocks; s *= 2) sizes.push_back(s);
  std::vector<double> rows, peer(widths.size(), 0.0), own, l2, by_cluster;
  auto median_of = [&](const Sweep& s, unsigned clusters) {
    const std::vector<double> per_sm = run_sweep(ctx, s, clusters, rounds, global);
    const double m = memtopo::analysis::median(per_sm);
    rows.insert(rows.end(), {double(s.from), double(s.width), double(s.cluster), double(per_sm.size()), m,
                             memtopo::analysis::percentile(per_sm, 10), memtopo::analysis::percentile(per_sm, 90)});
    return m;
  };
  for (size_t w = 0; w < widths.size(); ++w) {
    for (int64_t s : sizes) {
      const double m = median_of({widths[w], kPeer, unsigned(s)}, unsigned(std::max<int64_t>(resident.at(size_t(s - 1)), 1)));
      peer[w] = std::max(peer[w], m);
      if (widths[w] == 16) by_cluster.push_back(m);
    }
    own.push_back(median_of({widths[w], kOwn, 1}, unsigned(ctx.device().sm_count)));
    l2.push_back(median_of({widths[w], kL2, 1}, unsigned(ctx.device().sm_count)));
  }
  ctx.raw("sweeps", {"source", "width_bytes", "cluster_blocks", "blocks", "median_gbps", "p10_gbps", "p90_gbps"}, rows);
  const std::string how = "median over the blocks of one resident wave, 1024 threads each sweeping 64 KiB " +
                          std::to_string(rounds) + " times; widths 4, 8, 16 B";
  ctx.result("dsmem.bandwidth_widths_bytes", std::vector<int64_t>(widths.begin(), widths.end()));
  ctx.result("dsmem.bandwidth_cluster_blocks", sizes);
  ctx.result("dsmem.sm_to_sm_gbps", peer,
             {0.9, memtopo::Bound::Exact, "per SM reading the next rank's shared memory, the best cluster size; " + how});
  ctx.result("dsmem.sm_to_sm_by_cluster_gbps", by_cluster,
             {0.9, memtopo::Bound::Exact, "per SM, 16 B loads, by cluster size (dsmem.bandwidth_cluster_blocks); " + how});
  ctx.result("dsmem.local_shared_gbps", own, {0.9, memtopo::Bound::Exact, "per SM, its own shared memory; " + how});
  ctx.result("dsmem.l2_gbps", l2,
             {0.9, memtopo::Bound::Exact, "per SM, ld.global.cg of 64 KiB per block held in L2, every SM at once; " + how});
}

}  // namespace hopper_dsmem
