// hopper-dsmem/bandwidth: how fast one SM reads another block's shared memory, by cluster size
// and access width, against its own shared memory and against L2.
#include <algorithm>
#include <iterator>
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
constexpr unsigned kThreads = 1024;
enum Source : int { kPeer = 0, kOwn = 1, kL2 = 2 };

constexpr int kWidths[3] = {4, 8, 16};

// One timed sweep of the block: every thread reads `Width` bytes at a time, a block-wide sweep of
// the `Bytes` buffer per round, of the block of the next rank (kPeer, `base` a cluster address),
// of its own block (kOwn) or of the block's `Bytes` of global memory through L2 (kL2, `mine`).
// The block's threads wait for each other after it; thread 0 writes the cycles from `t0` (the
// clock after the barrier before it) to then, and returns the clock the next sweep starts at.
template <int From, int Width, unsigned Bytes>
MEMTOPO_INLINE uint32_t timed_sweep(uint32_t base, const char* mine, unsigned t, unsigned threads, unsigned rounds,
                                    unsigned long long& t0, unsigned long long* cycles) {
  namespace md = memtopo::device;
  uint32_t acc = 0;
  if constexpr (From == kPeer) acc = md::block_sweep<md::Path::Cluster, Width, Bytes>(base, t, threads, rounds);
  if constexpr (From == kOwn) acc = md::block_sweep<md::Path::Shared, Width, Bytes>(base, t, threads, rounds);
  if constexpr (From == kL2)
    acc = md::block_sweep<md::Path::GlobalCg, Width, Bytes>(reinterpret_cast<unsigned long long>(mine), t, threads, rounds);
  md::sync_block();
  if (t == 0) {
    const unsigned long long t1 = md::clock_now();
    *cycles = t1 - t0;
    t0 = t1;
  }
  return acc;
}

// The three widths' sweeps of one source, one after the other in one launch, each timed from
// the barrier before it to the one after it (a launch per width, each thread reading the clock,
// cost the simulated GPU three times the threads); cycles[w x blocks + block] is width w's.
template <int From, unsigned Bytes>
MEMTOPO_KERNEL void sweep(unsigned rounds, const char* global, unsigned long long* cycles, unsigned* sink) {
  namespace md = memtopo::device;
  uint32_t* buf = md::dynamic_shared<uint32_t>();
  const unsigned t = md::thread_index(), threads = md::block_threads();
  for (unsigned i = t; i < Bytes / 4; i += threads) buf[i] = i / 4 + i % 4;
  const uint32_t rank = md::cluster_rank(), n = md::cluster_blocks();
  const uint32_t own = md::shared_address(buf);
  const uint32_t base = From == kPeer ? md::cluster_address(own, (rank + 1) % n) : own;
  const unsigned block = md::block_index(), blocks = md::grid_blocks();
  const char* mine = global + size_t(block) * Bytes;
  md::cluster_sync();  // every block's buffer written
  unsigned long long t0 = t == 0 ? md::clock_now() : 0;
  uint32_t acc = timed_sweep<From, kWidths[0], Bytes>(base, mine, t, threads, rounds, t0, cycles + block);
  acc ^= timed_sweep<From, kWidths[1], Bytes>(base, mine, t, threads, rounds, t0, cycles + blocks + block);
  acc ^= timed_sweep<From, kWidths[2], Bytes>(base, mine, t, threads, rounds, t0, cycles + 2 * blocks + block);
  if (acc == 0x9e3779b9u) *sink = acc;
  md::cluster_sync();  // no block leaves while another reads its shared memory
}

// Per-SM GB/s of every block of one launch.
template <int From, unsigned Bytes>
memtopo::device::LaunchReport launch_sweep(const memtopo::Context& ctx, const memtopo::device::LaunchConfig& cfg,
                                           unsigned rounds, const char* global, unsigned long long* cycles,
                                           unsigned* sink) {
  return memtopo::device::launch<sweep<From, Bytes>, kThreads>(ctx, "sweep", cfg, rounds, global, cycles, sink);
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
  return memtopo::device::max_active_clusters<sweep<kPeer, kBufferBytes>>(ctx, "sweep", sweep_config(ctx, cluster, 1)) > 0;
}

// Per-SM GB/s of every block of one launch of `clusters` clusters of `cluster` blocks, by width.
std::vector<std::vector<double>> run_sweeps(const memtopo::Context& ctx, int from, unsigned cluster, unsigned clusters,
                                            unsigned rounds, const memtopo::device::Buffer<char>& global) {
  const memtopo::device::LaunchConfig cfg = sweep_config(ctx, cluster, clusters);
  const unsigned bytes = buffer_bytes(ctx), blocks = cfg.grid.x;
  memtopo::device::Buffer<unsigned long long> cycles(ctx, size_t(3) * blocks);
  memtopo::device::Buffer<unsigned> sink(ctx, 1);
  using L = memtopo::device::LaunchReport (*)(const memtopo::Context&, const memtopo::device::LaunchConfig&, unsigned,
                                              const char*, unsigned long long*, unsigned*);
  constexpr unsigned B = kBufferBytes, b = kSmallBufferBytes;
  static const L kernels[2][3] = {{launch_sweep<kPeer, B>, launch_sweep<kOwn, B>, launch_sweep<kL2, B>},
                                  {launch_sweep<kPeer, b>, launch_sweep<kOwn, b>, launch_sweep<kL2, b>}};
  const auto report = kernels[bytes == kBufferBytes ? 0 : 1][from](ctx, cfg, rounds, static_cast<const char*>(global.get()),
                                                                  cycles.get(), sink.get());
  const double mhz = 0.5 * (report.sm_clock_mhz_before + report.sm_clock_mhz_after);
  const std::vector<unsigned long long> all = cycles.download();
  std::vector<std::vector<double>> per_width(3);
  for (size_t i = 0; i < all.size(); ++i)
    per_width[i / blocks].push_back(memtopo::analysis::gbps_from_cycles(double(rounds) * bytes, double(all[i]), mhz));
  return per_width;
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
  const std::vector<int> widths(std::begin(kWidths), std::end(kWidths));
  std::vector<int64_t> sizes;
  for (int64_t s = 2; s <= max_blocks; s *= 2)
    if (cluster_runs(ctx, unsigned(s))) sizes.push_back(s);
  if (sizes.empty()) throw memtopo::Skip("no cluster of 2 or more blocks of " + std::to_string(kThreads) + " threads runs");
  std::vector<double> rows, peer(widths.size(), 0.0), own, l2, by_cluster;
  // The medians of one launch's widths, a raw row each.
  auto medians_of = [&](int from, unsigned cluster, unsigned clusters) {
    const std::vector<std::vector<double>> per_width = run_sweeps(ctx, from, cluster, clusters, rounds, global);
    std::vector<double> out;
    for (size_t w = 0; w < widths.size(); ++w) {
      const std::vector<double>& per_sm = per_width[w];
      out.push_back(memtopo::analysis::median(per_sm));
      rows.insert(rows.end(), {double(from), double(widths[w]), double(cluster), double(per_sm.size()), out.back(),
                               memtopo::analysis::percentile(per_sm, 10), memtopo::analysis::percentile(per_sm, 90)});
    }
    return out;
  };
  const unsigned sms = unsigned(ctx.device().sm_count);
  for (int64_t s : sizes) {
    const std::vector<double> m = medians_of(kPeer, unsigned(s), unsigned(std::max<int64_t>(resident.at(size_t(s - 1)), 1)));
    for (size_t w = 0; w < widths.size(); ++w) peer[w] = std::max(peer[w], m[w]);
    by_cluster.push_back(m.back());  // 16 B
  }
  own = medians_of(kOwn, 1, sms);
  l2 = medians_of(kL2, 1, sms);
  ctx.raw("sweeps", {"source", "width_bytes", "cluster_blocks", "blocks", "median_gbps", "p10_gbps", "p90_gbps"}, rows);
  std::string how = "median over the blocks of one resident wave, 1024 threads each sweeping " +
                    std::to_string(bytes / 1024) + " KiB " + std::to_string(rounds) + " times; widths 4, 8, 16 B";
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
