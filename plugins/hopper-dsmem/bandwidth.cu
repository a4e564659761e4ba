// hopper-dsmem/bandwidth: how fast one SM reads another block's shared memory, by cluster size
// and access width, against its own shared memory and against L2.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "dsmem_analysis.hpp"
#include "probes.hpp"

namespace hopper_dsmem {
namespace {

constexpr unsigned kBufferBytes = 64 * 1024;
// The simulated GPU gives each SM its own cluster port and shared memory, so that the blocks
// reading those are alike on every SM: at most this many SMs' blocks time them there (an H100
// replay's 132 SMs cost a simulated thread each of 1024 per block). The L2's rate, which every
// SM shares, keeps every SM.
constexpr unsigned kSimulatedSms = 16;
constexpr unsigned kThreads = 1024;
enum Source : int { kPeer = 0, kOwn = 1, kL2 = 2 };

// Every thread reads `Width` bytes at a time, a block-wide sweep of the 64 KiB buffer per
// round: of the block of the next rank (kPeer), of its own block (kOwn) or of the block's
// 64 KiB of global memory through L2 (kL2). Cycles from the first to the last thread's end.
template <int Width, int From>
MEMTOPO_KERNEL void sweep(unsigned rounds, const char* global, unsigned long long* cycles, unsigned* sink) {
  namespace md = memtopo::device;
  uint32_t* buf = md::dynamic_shared<uint32_t>();
  const unsigned t = md::thread_index(), threads = md::block_threads();
  for (unsigned i = t; i < kBufferBytes / 4; i += threads) buf[i] = i / 4 + i % 4;
  const uint32_t rank = md::cluster_rank(), n = md::cluster_blocks();
  md::cluster_sync();
  const uint32_t own = md::shared_address(buf);
  const uint32_t base = From == kPeer ? md::cluster_address(own, (rank + 1) % n) : own;
  const char* mine = global + size_t(md::block_index()) * kBufferBytes;
  const unsigned step = threads * Width;
  uint32_t acc = 0;
  md::sync_block();
  const unsigned long long t0 = md::clock_now();
  for (unsigned r = 0; r < rounds; ++r) {
#pragma unroll 16
    for (unsigned off = t * Width; off < kBufferBytes; off += step) {
      if constexpr (From == kPeer) acc ^= md::load_wide<md::Path::Cluster, Width>(base + off);
      if constexpr (From == kOwn) acc ^= md::load_wide<md::Path::Shared, Width>(base + off);
      if constexpr (From == kL2) acc ^= md::load_wide<md::Path::GlobalCg, Width>(reinterpret_cast<unsigned long long>(mine + off));
    }
  }
  md::sync_block();
  const unsigned long long t1 = md::clock_now();
  if (acc == 0x9e3779b9u) *sink = acc;
  if (t == 0) cycles[md::block_index()] = t1 - t0;
  md::cluster_sync();
}

struct Sweep {
  int width, from;
  unsigned cluster;
};

// Per-SM GB/s of every block of one launch.
template <int Width, int From>
memtopo::device::LaunchReport launch_sweep(const memtopo::Context& ctx, const memtopo::device::LaunchConfig& cfg,
                                           unsigned rounds, const char* global, unsigned long long* cycles,
                                           unsigned* sink) {
  return memtopo::device::launch<sweep<Width, From>, kThreads>(ctx, "sweep", cfg, rounds, global, cycles, sink);
}

std::vector<double> run_sweep(const memtopo::Context& ctx, const Sweep& s, unsigned clusters, unsigned rounds,
                              const memtopo::device::Buffer<char>& global) {
  memtopo::device::LaunchConfig cfg;
  cfg.block = {kThreads};
  cfg.cluster = {s.cluster};
  cfg.non_portable_cluster = s.cluster > 8;
  cfg.grid = {clusters * s.cluster};
  cfg.dynamic_shared_bytes = unsigned(std::max<int64_t>(kBufferBytes, ctx.device().shared_per_sm_bytes / 2 + 1024));
  memtopo::device::Buffer<unsigned long long> cycles(ctx, cfg.grid.x);
  memtopo::device::Buffer<unsigned> sink(ctx, 1);
  using L = memtopo::device::LaunchReport (*)(const memtopo::Context&, const memtopo::device::LaunchConfig&, unsigned,
                                              const char*, unsigned long long*, unsigned*);
  static const L kernels[3][3] = {{launch_sweep<4, kPeer>, launch_sweep<4, kOwn>, launch_sweep<4, kL2>},
                                  {launch_sweep<8, kPeer>, launch_sweep<8, kOwn>, launch_sweep<8, kL2>},
                                  {launch_sweep<16, kPeer>, launch_sweep<16, kOwn>, launch_sweep<16, kL2>}};
  const int w = s.width == 4 ? 0 : s.width == 8 ? 1 : 2;
  const auto report = kernels[w][s.from](ctx, cfg, rounds, static_cast<const char*>(global.get()), cycles.get(), sink.get());
  const double mhz = 0.5 * (report.sm_clock_mhz_before + report.sm_clock_mhz_after);
  std::vector<double> per_sm;
  for (unsigned long long c : cycles.download()) per_sm.push_back(memtopo::analysis::gbps_from_cycles(double(rounds) * kBufferBytes, double(c), mhz));
  return per_sm;
}

}  // namespace

void measure_bandwidth(memtopo::Context& ctx) {
  const int64_t max_blocks = ctx.input<int64_t>("dsmem.max_cluster_blocks");
  const std::vector<int64_t> resident = ctx.input<std::vector<int64_t>>("dsmem.resident_clusters");
  // Rounds average the clock's noise: the framework counts them (at most two on an exact clock).
  const unsigned rounds = unsigned(memtopo::device::noise_repeats(ctx, ctx.option<int64_t>("rounds"), 2));
  memtopo::device::Buffer<char> global(ctx, size_t(ctx.device().sm_count) * kBufferBytes);
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
  const bool sim = memtopo::device::simulated(ctx);
  const unsigned sms = unsigned(ctx.device().sm_count), own_blocks = sim ? std::min(sms, kSimulatedSms) : sms;
  auto clusters_of = [&](int64_t s) {
    const unsigned resident_clusters = unsigned(std::max<int64_t>(resident.at(size_t(s - 1)), 1));
    return sim ? std::min(resident_clusters, std::max(1u, kSimulatedSms / unsigned(s))) : resident_clusters;
  };
  for (size_t w = 0; w < widths.size(); ++w) {
    for (int64_t s : sizes) {
      const double m = median_of({widths[w], kPeer, unsigned(s)}, clusters_of(s));
      peer[w] = std::max(peer[w], m);
      if (widths[w] == 16) by_cluster.push_back(m);
    }
    own.push_back(median_of({widths[w], kOwn, 1}, own_blocks));
    l2.push_back(median_of({widths[w], kL2, 1}, sms));
  }
  ctx.raw("sweeps", {"source", "width_bytes", "cluster_blocks", "blocks", "median_gbps", "p10_gbps", "p90_gbps"}, rows);
  std::string how = "median over the blocks of one resident wave, 1024 threads each sweeping 64 KiB " +
                          std::to_string(rounds) + " times; widths 4, 8, 16 B";
  if (sim && sms > kSimulatedSms)
    how += " (shared memory: the blocks of at most " + std::to_string(kSimulatedSms) + " SMs, alike on the simulated GPU)";
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
