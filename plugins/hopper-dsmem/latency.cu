// hopper-dsmem/latency: a dependent load from another block's shared memory (mapa and
// ld.shared::cluster) at every rank distance of the largest cluster, against the block's own.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <memtopo/analysis/robust.hpp>
#include <memtopo/analysis/stopping.hpp>
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "dsmem_analysis.hpp"
#include "probes.hpp"

namespace hopper_dsmem {
namespace {

constexpr unsigned kChainWords = 1024;

// One chase from `p`: `warm` loads, then `runs` runs by turns of `loads` and 3 x `loads`, the
// cycles of each into `into`.
template <memtopo::device::Path P>
MEMTOPO_INLINE void chase_runs(uint32_t p, unsigned warm, unsigned loads, unsigned runs, unsigned long long slot,
                               unsigned long long* into) {
  namespace md = memtopo::device;
  for (unsigned i = 0; i < warm; ++i) p = md::follow32<P>(p);
  unsigned long long t0 = md::clock_after(p, slot);
  for (unsigned s = 0; s < runs; ++s) {
    for (unsigned i = 0, k = s % 2 ? 3 * loads : loads; i < k; ++i) p = md::follow32<P>(p);
    const unsigned long long t1 = md::clock_after(p, slot);
    into[s] = t1 - t0;
    t0 = t1;
  }
}

// Every block writes two rings of pointers into its shared memory: one of its own cluster
// addresses, one of its shared::cta addresses. Thread 0 of rank 0 then chases the cluster ring
// of the block at each distance in turn, and its own shared::cta ring; the other blocks wait at
// the last cluster barrier, so their shared memory lives until the chases end.
// out: per cluster, per chase (distance 0 .. n-1, then the shared::cta chase), the cycles of
// each of `runs` runs, by turns of `loads` and of 3 x `loads` loads: a chase's time per load is
// the difference of its long and its short runs' medians over 2 x `loads`, which neither an
// interruption in a run nor the clock read that ends each run moves.
MEMTOPO_KERNEL void peer_chase(unsigned warm, unsigned loads, unsigned runs, unsigned long long* out,
                               int* sm_of_block) {
  namespace md = memtopo::device;
  MEMTOPO_SHARED(uint32_t, ring, kChainWords);
  MEMTOPO_SHARED(uint32_t, local_ring, kChainWords);
  MEMTOPO_SHARED_VAR(uint32_t, sink);
  const uint32_t rank = md::cluster_rank(), n = md::cluster_blocks();
  const unsigned t = md::thread_index(), block = md::block_index();
  for (unsigned i = t; i < kChainWords; i += md::block_threads()) {
    const unsigned next = (i + 33) % kChainWords;  // a ring through every word, 33 words apart
    ring[i] = md::cluster_address(md::shared_address(&ring[next]), rank);
    local_ring[i] = md::shared_address(&local_ring[next]);
  }
  if (t == 0) sm_of_block[block] = int(md::smid());
  md::cluster_sync();
  if (rank == 0 && t == 0) {
    const unsigned long long slot = md::shared_address(&sink);
    unsigned long long* mine = out + (block / n) * (n + 1) * runs;
    for (uint32_t d = 0; d < n; ++d)
      chase_runs<md::Path::Cluster>(md::cluster_address(md::shared_address(&ring[0]), d), warm, loads, runs, slot,
                                    mine + d * runs);
    chase_runs<md::Path::Shared>(md::shared_address(&local_ring[0]), warm, loads, runs, slot, mine + n * runs);
  }
  md::cluster_sync();
}

// Runs of a chase, by turns short and three times as long: the loads option is their sum.
constexpr unsigned kRuns = 16;

// The chase's cycles per load: the long runs' median less the short runs' over the loads
// between them. Eight runs of each: an interruption moves one run, not a median; the clock
// read that ends a run cancels (docs/hopper.md: on an H200 about 200 cycles).
double per_load_of(const unsigned long long* runs, unsigned loads) {
  std::vector<double> shorter, longer;
  for (unsigned s = 0; s < kRuns; ++s) (s % 2 ? longer : shorter).push_back(double(runs[s]));
  return (memtopo::analysis::median(longer) - memtopo::analysis::median(shorter)) / (2.0 * loads);
}

// What every chase carries per load beyond its loads' latency (noise, the loop): the block's
// own shared::cta chase against shared.latency_cycles, where shared-memory/banks measured that
// (its chases leave the noise out). Both chases run on one thread of one SM, so the excess is
// the same in each; 0 where the shared latency is not known.
double chase_excess(const memtopo::Context& ctx, double own_chase, std::string& note) {
  const auto shared = ctx.try_input<double>("shared.latency_cycles");
  if (!shared) {
    note = "";
    return 0;
  }
  const double excess = own_chase - *shared;
  note = ", less what the block's own shared::cta chase (" + std::to_string(own_chase) + ") carries over " +
         "shared.latency_cycles (" + std::to_string(*shared) + "): " + std::to_string(excess) + " cycles a load";
  return excess;
}

void report_latency(memtopo::Context& ctx, const std::vector<DistanceLatency>& by, const std::vector<DistanceLatency>& own,
                    unsigned size, const std::string& how) {
  std::string excess_note;
  const double excess = chase_excess(ctx, own.front().median_cycles, excess_note);
  std::vector<DistanceLatency> less = by;
  for (DistanceLatency& d : less)
    for (double* v : {&d.median_cycles, &d.low_cycles, &d.high_cycles}) *v -= excess;
  const auto peer = peer_latency(less);
  if (!peer) throw memtopo::NotDeterminable("no chase into another block's shared memory completed");
  std::vector<double> medians;
  for (const DistanceLatency& d : less) medians.push_back(d.median_cycles);
  ctx.result("dsmem.remote_latency_cycles", peer->median_cycles,
             {0.95, memtopo::Bound::Exact,
              "median over rank distances 1.." + std::to_string(size - 1) + " of ld.shared::cluster into another " +
                  "block" + excess_note + "; the distances' medians span " +
                  std::to_string(int(peer->spread_cycles + 0.5)) + " cycles" +
                  (peer->depends_on_distance ? " (more than 3 %: see dsmem.latency_by_distance_cycles); " : "; ") + how});
  ctx.result("dsmem.latency_by_distance_cycles", medians,
             {0.95, memtopo::Bound::Exact, "median per rank distance 0.." + std::to_string(size - 1) +
                                               " (0: the block's own shared memory through its cluster address)" +
                                               excess_note + "; " + how});
  ctx.result("dsmem.local_cluster_latency_cycles", less.front().median_cycles,
             {0.95, memtopo::Bound::Exact, "ld.shared::cluster into the block's own shared memory" + excess_note + "; " + how});
  ctx.result("dsmem.local_latency_cycles", own.front().median_cycles,
             {0.95, memtopo::Bound::Exact, "ld.shared with a shared::cta address, as chased; " + how});
}

}  // namespace

void measure_latency(memtopo::Context& ctx) {
  const unsigned size = unsigned(ctx.input<int64_t>("dsmem.max_cluster_blocks"));
  const std::vector<int64_t> resident = ctx.input<std::vector<int64_t>>("dsmem.resident_clusters");
  const unsigned clusters = unsigned(std::max<int64_t>(resident.at(size - 1), 1));
  // kRuns / 2 runs of `loads` and as many of 3 x `loads`: the option's loads in all.
  const unsigned loads = std::max(unsigned(ctx.option<int64_t>("loads")) / (2 * kRuns), 1u), warm = 64;
  memtopo::device::LaunchConfig cfg;
  cfg.block = {128};
  cfg.cluster = {size};
  cfg.non_portable_cluster = size > 8;
  cfg.grid = {clusters * size};
  const size_t per_cluster = size_t(size + 1) * kRuns;
  memtopo::device::Buffer<unsigned long long> out(ctx, size_t(clusters) * per_cluster);
  memtopo::device::Buffer<int> sms(ctx, cfg.grid.x);
  std::vector<ChaseSample> samples, local;
  std::vector<double> rows;
  // Launches repeat until the median remote latency is stable (the framework's stopping rule),
  // at least `repeats` of them: one launch's clusters share its clocks and placement.
  memtopo::analysis::StopRule rule;
  rule.min_samples = size_t(ctx.option<int64_t>("repeats"));
  rule.max_samples = std::max(rule.min_samples, size_t(ctx.option<int64_t>("max_repeats")));
  rule.max_relative_noise = ctx.option<double>("max_noise_percent") / 100.0;
  rule.max_seconds = 2.0;
  int64_t rep = 0;
  auto one_launch = [&]() {
    memtopo::device::launch<peer_chase>(ctx, "peer_chase", cfg, warm, loads, kRuns, out.get(), sms.get());
    const std::vector<unsigned long long> cycles = out.download();
    const std::vector<int> sm = sms.download();
    std::vector<double> remote;
    for (unsigned c = 0; c < clusters; ++c) {
      for (unsigned d = 0; d <= size; ++d) {
        const double per_load = per_load_of(&cycles[c * per_cluster + d * kRuns], loads);
        const int64_t cluster = rep * clusters + c;
        (d < size ? samples : local).push_back({cluster, int64_t(d), per_load});
        if (d > 0 && d < size) remote.push_back(per_load);
        const int peer = d < size ? sm[c * size + d] : sm[c * size];
        rows.insert(rows.end(), {double(cluster), d < size ? double(d) : -1.0, double(sm[c * size]), double(peer),
                                 per_load});
      }
    }
    ++rep;
    return remote.empty() ? 0.0 : memtopo::analysis::median(remote);
  };
  const auto start = std::chrono::steady_clock::now();
  const memtopo::analysis::StopResult stop = memtopo::analysis::repeat_until_stable(one_launch, rule, [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  ctx.raw("chases", {"cluster", "distance", "sm", "peer_sm", "cycles_per_load"}, rows);
  const std::vector<DistanceLatency> by = latency_by_distance(samples);
  const std::vector<DistanceLatency> own = latency_by_distance(local);
  if (by.empty() || own.empty()) throw memtopo::NotDeterminable("no chase into another block's shared memory completed");
  report_latency(ctx, by, own, size,
                 std::to_string(kRuns / 2) + " runs of " + std::to_string(loads) + " and of " + std::to_string(3 * loads) +
                     " dependent loads per chase, the difference of their medians over " + std::to_string(2 * loads) +
                     " loads, " + std::to_string(samples.size() / size) +
                     " clusters of " + std::to_string(size) + " blocks in " + std::to_string(rep) + " launches (" +
                     stop.why + ")");
}

}  // namespace hopper_dsmem
