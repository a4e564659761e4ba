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

// Each block sweeps this much, or the smaller buffer where a block may not have it
// (buffer_bytes). A constant of the kernel: with the bound a parameter, the H200's own shared
// memory read 5 % slower at 4 B loads (123.8 against 130.2 GB/s).
constexpr unsigned kBufferBytes = 64 * 1024, kSmallBufferBytes = 16 * 1024;
// The simulated GPU gives each SM its own cluster port and shared memory, so that the blocks
// reading those are alike on every SM: at most this many SMs' blocks time them there (an H100
// replay's 132 SMs cost a simulated thread each of 1024 per block). The L2's rate, which every
// SM shares, keeps every SM.
constexpr unsigned kSimulatedSms = 16;
constexpr unsigned kThreads = 1024;
enum Source : int { kPeer = 0, kOwn = 1, kL2 = 2 };

// Every thread reads `Width` bytes at a time, a block-wide sweep of the `Bytes` buffer per
// round: of the block of the next rank (kPeer), of its own block (kOwn) or of the block's
// `Bytes` of global memory through L2 (kL2). Cycles from the first to the last thread's end.
template <int Width, int From, unsigned Bytes>
MEMTOPO_KERNEL void sweep(unsigned rounds, const char* global, unsigned long long* cycles, unsigned* sink) {
  namespace md = memtopo::device;
  uint32_t* buf = md::dynamic_shared<uint32_t>();
  const unsigned t = md::thread_index(), threads = md::block_threads();
  for (unsigned i = t; i < Bytes / 4; i += threads) buf[i] = i / 4 + i % 4;
  const uint32_t rank = md::cluster_rank(), n = md::cluster_blocks();
  md::cluster_sync();
  const uint32_t own = md::shared_address(buf);
  const uint32_t base = From == kPeer ? md::cluster_address(own, (rank + 1) % n) : own;
  const char* mine = global + size_t(md::block_index()) * Bytes;
  const unsigned step = threads * Width;
  uint32_t acc = 0;
  md::sync_block();
  const unsigned long long t0 = md::clock_now();
  for (unsigned r = 0; r < rounds; ++r) {
#pragma unroll 16
    for (unsigned off = t * Width; off < Bytes; off += step) {
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
template <int Width, int From, unsigned Bytes>
memtopo::device::LaunchReport launch_sweep(const memtopo::Context& ctx, const memtopo::device::LaunchConfig& cfg,
                                           unsigned rounds, const char* global, unsigned long long* cycles,
                                           unsigned* sink) {
  return memtopo::device::launch<sweep<Width, From, Bytes>, kThreads>(ctx, "sweep", cfg, rounds, global, cycles, sink);
}

// The buffer a block sweeps: 64 KiB, else 16 KiB (a round of 16 B loads by every thread) where a
// block may not have that much shared memory (random simulated devices of 48 KiB a block failed
// the probe's launch); 0 where not even that fits.
// The most shared memory a block may have (the buffer's size where the device does not say).
int64_t block_shared_most(const memtopo::Context& ctx) {
  const int64_t optin = ctx.device().shared_per_block_optin_bytes;
  return optin > 0 ? optin : int64_t(kBufferBytes);
}

unsigned buffer_bytes(const memtopo::Context& ctx) {
  const int64_t most = block_shared_most(ctx);
  return most >= int64_t(kBufferBytes) ? kBufferBytes : most >= int64_t(kSmallBufferBytes) ? kSmallBufferBytes : 0;
}

// The launch of `clusters` clusters of `cluster` blocks of the sweep.
memtopo::device::LaunchConfig sweep_config(const memtopo::Context& ctx, unsigned cluster, unsigned clusters) {
  memtopo::device::LaunchConfig cfg;
  cfg.block = {kThreads};
  cfg.cluster = {cluster};
  cfg.non_portable_cluster = cluster > 8;
  cfg.grid = {clusters * cluster};
  // More than half the SM's shared memory, where a block may have it: one block per SM.
  cfg.dynamic_shared_bytes = unsigned(std::min(
      block_shared_most(ctx), std::max<int64_t>(buffer_bytes(ctx), ctx.device().shared_per_sm_bytes / 2 + 1024)));
  return cfg;
}

// Whether clusters of `cluster` blocks of the sweep run at all: its blocks of 1024 threads and
// their shared memory may not fit a GPC in clusters that the clusters probe's smaller blocks
// fill (a 16-block cluster of 48 KiB blocks on hopper-like).
bool cluster_runs(const memtopo::Context& ctx, unsigned cluster) {
  return memtopo::device::max_active_clusters<sweep<16, kPeer, kBufferBytes>>(ctx, "sweep", sweep_config(ctx, cluster, 1)) > 0;
}

std::vector<double> run_sweep(const memtopo::Context& ctx, const Sweep& s, unsigned clusters, unsigned rounds,
                              const memtopo::device::Buffer<char>& global) {
  const memtopo::device::LaunchConfig cfg = sweep_config(ctx, s.cluster, clusters);
  const unsigned bytes = buffer_bytes(ctx);
  memtopo::device::Buffer<unsigned long long> cycles(ctx, cfg.grid.x);
  memtopo::device::Buffer<unsigned> sink(ctx, 1);
  using L = memtopo::device::LaunchReport (*)(const memtopo::Context&, const memtopo::device::LaunchConfig&, unsigned,
                                              const char*, unsigned long long*, unsigned*);
  constexpr unsigned B = kBufferBytes, b = kSmallBufferBytes;
  static const L kernels[2][3][3] = {
      {{launch_sweep<4, kPeer, B>, launch_sweep<4, kOwn, B>, launch_sweep<4, kL2, B>},
       {launch_sweep<8, kPeer, B>, launch_sweep<8, kOwn, B>, launch_sweep<8, kL2, B>},
       {launch_sweep<16, kPeer, B>, launch_sweep<16, kOwn, B>, launch_sweep<16, kL2, B>}},
      {{launch_sweep<4, kPeer, b>, launch_sweep<4, kOwn, b>, launch_sweep<4, kL2, b>},
       {launch_sweep<8, kPeer, b>, launch_sweep<8, kOwn, b>, launch_sweep<8, kL2, b>},
       {launch_sweep<16, kPeer, b>, launch_sweep<16, kOwn, b>, launch_sweep<16, kL2, b>}}};
  const int w = s.width == 4 ? 0 : s.width == 8 ? 1 : 2;
  const auto report = kernels[bytes == kBufferBytes ? 0 : 1][w][s.from](
      ctx, cfg, rounds, static_cast<const char*>(global.get()), cycles.get(), sink.get());
  const double mhz = 0.5 * (report.sm_clock_mhz_before + report.sm_clock_mhz_after);
  std::vector<double> per_sm;
  for (unsigned long long c : cycles.download())
    per_sm.push_back(memtopo::analysis::gbps_from_cycles(double(rounds) * bytes, double(c), mhz));
  return per_sm;
}

}  // namespace

void measure_bandwidth(memtopo::Context& ctx) {
  const int64_t max_blocks = ctx.input<int64_t>("dsmem.max_cluster_blocks");
  const std::vector<int64_t> resident = ctx.input<std::vector<int64_t>>("dsmem.resident_clusters");
  // Rounds average the clock's noise: the framework counts them (at most two on an exact clock).
  const unsigned rounds = unsigned(memtopo::device::noise_repeats(ctx, ctx.option<int64_t>("rounds"), 2));
  const unsigned bytes = buffer_bytes(ctx);
  if (bytes == 0)
    throw memtopo::Skip("a block may have " + std::to_string(ctx.device().shared_per_block_optin_bytes) +
                        " B of shared memory (device.shared_per_block_optin_bytes), less than a round of 16 B loads by " +
                        std::to_string(kThreads) + " threads");
  memtopo::device::Buffer<char> global(ctx, size_t(ctx.device().sm_count) * kBufferBytes);
  const std::vector<int> widths = {4, 8, 16};
  std::vector<int64_t> sizes;
  for (int64_t s = 2; s <= max_blocks; s *= 2)
    if (cluster_runs(ctx, unsigned(s))) sizes.push_back(s);
  if (sizes.empty()) throw memtopo::Skip("no cluster of 2 or more blocks of " + std::to_string(kThreads) + " threads runs");
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
  std::string how = "median over the blocks of one resident wave, 1024 threads each sweeping " +
                    std::to_string(bytes / 1024) + " KiB " + std::to_string(rounds) + " times; widths 4, 8, 16 B";
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
             {0.9, memtopo::Bound::Exact, "per SM, ld.global.cg of the same bytes per block held in L2, every SM at once; " + how});
}

}  // namespace hopper_dsmem
