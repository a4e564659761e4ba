// hopper-dsmem/latency: a dependent load from another block's shared memory (mapa and
// ld.shared::cluster) at every rank distance of the largest cluster, against the block's own.
#include <string>
#include <vector>

#include <memtopo/cuda/device.cuh>
#include <memtopo/cuda/launch.cuh>
#include <memtopo/probe.hpp>

#include "cluster_ptx.cuh"
#include "dsmem_analysis.hpp"
#include "probes.hpp"

namespace hopper_dsmem {
namespace {

constexpr unsigned kChainWords = 1024;

// Every block writes two rings of pointers into its shared memory: one of its own cluster
// addresses, one of its shared::cta addresses. Thread 0 of rank 0 then chases the cluster ring
// of the block at each distance in turn, and its own shared::cta ring; the other blocks wait at
// the last cluster barrier, so their shared memory lives until the chases end.
// out: per cluster, cycles of `loads` loads at distance 0 .. n-1, then the shared::cta chase.
__global__ void peer_chase(unsigned warm, unsigned loads, unsigned long long* out, int* sm_of_block) {
  __shared__ uint32_t ring[kChainWords], local_ring[kChainWords];
  __shared__ uint32_t sink;
  const uint32_t rank = memtopo::device::cluster_rank(), n = memtopo::device::cluster_blocks();
  for (unsigned i = threadIdx.x; i < kChainWords; i += blockDim.x) {
    const unsigned next = (i + 33) % kChainWords;  // a ring through every word, 33 words apart
    ring[i] = cluster_address(cta_address(&ring[next]), rank);
    local_ring[i] = cta_address(&local_ring[next]);
  }
  if (threadIdx.x == 0) sm_of_block[blockIdx.x] = int(memtopo::device::smid());
  cluster_sync();
  if (rank == 0 && threadIdx.x == 0) {
    const unsigned long long slot = cta_address(&sink);
    unsigned long long* mine = out + (blockIdx.x / n) * (n + 1);
    for (uint32_t d = 0; d < n; ++d) {
      uint32_t p = cluster_address(cta_address(&ring[0]), d);
      for (unsigned i = 0; i < warm; ++i) p = load_cluster(p);
      const unsigned long long t0 = memtopo::device::clock_after(p, slot);
      for (unsigned i = 0; i < loads; ++i) p = load_cluster(p);
      mine[d] = memtopo::device::clock_after(p, slot) - t0;
    }
    uint32_t p = cta_address(&local_ring[0]);
    for (unsigned i = 0; i < warm; ++i) p = load_cta(p);
    const unsigned long long t0 = memtopo::device::clock_after(p, slot);
    for (unsigned i = 0; i < loads; ++i) p = load_cta(p);
    mine[n] = memtopo::device::clock_after(p, slot) - t0;
  }
  cluster_sync();
}

}  // namespace

void measure_latency(memtopo::Context& ctx) {
  const unsigned size = unsigned(ctx.input<int64_t>("dsmem.max_cluster_blocks"));
  const std::vector<int64_t> resident = ctx.input<std::vector<int64_t>>("dsmem.resident_clusters");
  const unsigned clusters = unsigned(std::max<int64_t>(resident.at(size - 1), 1));
  const unsigned loads = unsigned(ctx.option<int64_t>("loads")), warm = 64;
  memtopo::cuda::LaunchConfig cfg;
  cfg.block = dim3(128);
  cfg.cluster = dim3(size);
  cfg.non_portable_cluster = size > 8;
  cfg.grid = dim3(clusters * size);
  memtopo::cuda::DeviceBuffer<unsigned long long> out(ctx, size_t(clusters) * (size + 1));
  memtopo::cuda::DeviceBuffer<int> sms(ctx, cfg.grid.x);
  std::vector<ChaseSample> samples, local;
  std::vector<double> rows;
  const int repeats = int(ctx.option<int64_t>("repeats"));
  for (int rep = 0; rep < repeats; ++rep) {
    memtopo::cuda::launch(ctx, "peer_chase", peer_chase, cfg, warm, loads, out.get(), sms.get());
    const std::vector<unsigned long long> cycles = out.download();
    const std::vector<int> sm = sms.download();
    for (unsigned c = 0; c < clusters; ++c) {
      for (unsigned d = 0; d <= size; ++d) {
        const double per_load = double(cycles[c * (size + 1) + d]) / loads;
        const int64_t cluster = int64_t(rep) * clusters + c;
        (d < size ? samples : local).push_back({cluster, int64_t(d), per_load});
        const int peer = d < size ? sm[c * size + d] : sm[c * size];
        rows.insert(rows.end(), {double(cluster), d < size ? double(d) : -1.0, double(sm[c * size]), double(peer),
                                 per_load});
      }
    }
  }
  ctx.raw("chases", {"cluster", "distance", "sm", "peer_sm", "cycles_per_load"}, rows);
  const std::vector<DistanceLatency> by = latency_by_distance(samples);
  const std::vector<DistanceLatency> own = latency_by_distance(local);
  const auto peer = peer_latency(by);
  if (!peer || own.empty()) throw memtopo::NotDeterminable("no chase into another block's shared memory completed");
  std::vector<double> medians;
  for (const DistanceLatency& d : by) medians.push_back(d.median_cycles);
  const std::string how = std::to_string(loads) + " dependent loads per chase, " + std::to_string(samples.size() / size) +
                          " clusters of " + std::to_string(size) + " blocks";
  ctx.result("dsmem.remote_latency_cycles", peer->median_cycles,
             {0.95, memtopo::Bound::Exact,
              "median over rank distances 1.." + std::to_string(size - 1) + " of ld.shared::cluster into another " +
                  "block; the distances' medians span " + std::to_string(int(peer->spread_cycles + 0.5)) + " cycles" +
                  (peer->depends_on_distance ? " (more than 3 %: see dsmem.latency_by_distance_cycles); " : "; ") + how});
  ctx.result("dsmem.latency_by_distance_cycles", medians,
             {0.95, memtopo::Bound::Exact, "median per rank distance 0.." + std::to_string(size - 1) +
                                               " (0: the block's own shared memory through its cluster address); " + how});
  ctx.result("dsmem.local_cluster_latency_cycles", by.front().median_cycles,
             {0.95, memtopo::Bound::Exact, "ld.shared::cluster into the block's own shared memory; " + how});
  ctx.result("dsmem.local_latency_cycles", own.front().median_cycles,
             {0.95, memtopo::Bound::Exact, "ld.shared with a shared::cta address; " + how});
}

}  // namespace hopper_dsmem
