// What one warp instruction of a probe kernel costs on the simulated GPU: the clock each lane
// of the group goes on at. Memory contents were read or written when the lanes issued it
// (kernel_memory.cpp); here only time is decided.
#include <algorithm>
#include <array>
#include <unordered_map>
#include <utility>

#include "sim/kernel/kernel_runtime.hpp"

namespace memtopo::sim::kernel {

namespace {

int served_rank(Gpu::Served s) { return s == Gpu::Served::Sm ? 0 : s == Gpu::Served::L2 ? 1 : 2; }

// The cluster address's block: the rank in the address, or the block itself for a plain
// shared-space address (which names the block's own shared memory).
uint32_t cluster_rank_of(uint64_t address, uint32_t own) {
  return (address & 0x80000000u) ? uint32_t(address >> 24) & 0x7fu : own;
}

}  // namespace

void KernelRuntime::request_lines(uint32_t sm, uint32_t lane, mt_space space, double issued) {
  const Model& m = gpu_.model();
  const uint64_t sector = std::max<uint32_t>(m.l2.geometry.sector_bytes, 4);
  const uint64_t line = std::max<uint64_t>(m.l2.geometry.line_bytes, sector);
  line_done_.clear();
  for (size_t i = 0; i < sectors_.size();) {
    const uint64_t l = sectors_[i] / line;
    int64_t latency = 0;
    int served = 0;
    size_t n = 0;
    for (; i < sectors_.size() && sectors_[i] / line == l; ++i, ++n) {
      latency = std::max(latency, gpu_.load(sm, lane, space, sectors_[i]));
      served = std::max(served, served_rank(gpu_.served()));
    }
    const double bytes = double(n * sector);
    double start = issued;
    InFlight* queue = served == 1 ? &l2_in_flight_[sm] : served == 2 ? &dram_in_flight_[sm] : nullptr;
    if (!queue) {
      start = l1_[sm].serve(start, bytes);
    } else {
      start = queue->start(start);
      start = l2_read_.serve(start, bytes);
      if (served == 2) start = dram_read_.serve(start, bytes);
    }
    const double done = start + double(latency) + noise();
    if (queue) queue->end(done);
    line_done_.push_back({l, done});  // in ascending line order
  }
}

double KernelRuntime::line_done(uint64_t sector_address, double issued) const {
  const Model& m = gpu_.model();
  const uint64_t l = sector_address / std::max<uint64_t>(m.l2.geometry.line_bytes, 4);
  auto it = std::lower_bound(line_done_.begin(), line_done_.end(), std::make_pair(l, -1e300));
  return it != line_done_.end() && it->first == l ? it->second : issued;
}

void KernelRuntime::store_sectors(uint32_t sm, uint32_t lane, double issued) {
  const uint64_t sector = std::max<uint32_t>(gpu_.model().l2.geometry.sector_bytes, 4);
  // Stores go to the L2 (a missing line is allocated there and, later, written to DRAM); the
  // thread does not wait for them, but the launch ends only once they are all in.
  for (uint64_t s : sectors_) {
    const int64_t latency = gpu_.load(sm, lane, MT_SPACE_GLOBAL_CG, s);
    double start = l2_write_.serve(issued, double(sector));
    if (gpu_.served() == Gpu::Served::Dram) start = dram_write_.serve(start, double(sector));
    drain_ = std::max(drain_, start + double(latency));
  }
}

void KernelRuntime::price_global_loads(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const uint32_t sm = first->block->sm;
  const double overhead = double(m.timing_overhead_cycles);
  uint32_t instructions = 0;
  for (const Thread* t : g.members) instructions = std::max(instructions, t->op.count);
  const double issued = issue_[sm].serve(g.clock, instructions);
  if (g.path == MT_OP_PATH_REGISTER) {
    for (Thread* t : g.members) t->clock = issued + (t->op.timed ? overhead : 0);
    return;
  }
  const uint64_t sector = std::max<uint32_t>(m.l2.geometry.sector_bytes, 4);
  // The sectors the lanes touch: one request per line, one lookup per sector.
  sectors_.clear();
  for (const Thread* t : g.members)
    for (uint32_t i = 0; i < t->op.count; ++i) {
      const uint64_t a = t->op.addresses[i];
      for (uint64_t s = a / sector; s <= (a + t->op.bytes - 1) / sector; ++s) sectors_.push_back(s * sector);
    }
  std::sort(sectors_.begin(), sectors_.end());
  sectors_.erase(std::unique(sectors_.begin(), sectors_.end()), sectors_.end());
  request_lines(sm, first->linear, mt_space(g.path), issued);
  for (Thread* t : g.members) {
    double done = issued;
    for (uint32_t i = 0; i < t->op.count; ++i) {
      const uint64_t a = t->op.addresses[i];
      for (uint64_t s = a / sector; s <= (a + t->op.bytes - 1) / sector; ++s) done = std::max(done, line_done(s * sector, issued));
    }
    t->clock = done + (t->op.timed ? overhead : 0);
  }
}

void KernelRuntime::price_shared(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const uint32_t sm = first->block->sm;
  const double overhead = double(m.timing_overhead_cycles);
  const double issued = issue_[sm].serve(g.clock, 1);
  if (g.path == MT_OP_PATH_CLUSTER) {
    const double local = double(m.cluster_local_latency_cycles ? m.cluster_local_latency_cycles : m.shared_latency_cycles);
    const double remote =
        double(m.cluster_remote_latency_cycles ? m.cluster_remote_latency_cycles : 6 * m.shared_latency_cycles);
    for (Thread* t : g.members) {
      double done = issued;
      for (uint32_t i = 0; i < t->op.count; ++i) {
        const bool own = cluster_rank_of(t->op.addresses[i], t->block->rank) == t->block->rank;
        const double start = own ? issued : cluster_port_[sm].serve(issued, double(t->op.bytes));
        done = std::max(done, start + (own ? local : remote) + noise());
      }
      t->clock = done + (t->op.timed ? overhead : 0);
    }
    return;
  }
  // Bank turns: the most distinct words of one bank among the lanes (one word shared by several
  // lanes is a broadcast). Wider loads cover several banks and are served in phases of as many
  // lanes as fill the banks once; the phases' turns add up.
  const uint64_t bank_bytes = std::max<uint32_t>(m.shared_bank_bytes, 1), banks = std::max<uint32_t>(m.shared_banks, 1);
  const size_t phase_lanes = size_t(std::max<uint64_t>(1, banks * bank_bytes / std::max<uint32_t>(g.bytes, 4)));
  const uint64_t words_per_load = std::max<uint64_t>(1, g.bytes / bank_bytes);
  int64_t turns = 0;
  std::vector<std::pair<uint64_t, uint64_t>> pairs;
  for (size_t p = 0; p < g.members.size(); p += phase_lanes) {
    pairs.clear();
    for (size_t k = p; k < std::min(p + phase_lanes, g.members.size()); ++k) {
      const Thread* t = g.members[k];
      for (uint32_t i = 0; i < t->op.count; ++i)
        for (uint64_t w = 0; w < words_per_load; ++w) {
          const uint64_t word = t->op.addresses[i] / bank_bytes + w;
          pairs.push_back({word % banks, word});
        }
    }
    std::sort(pairs.begin(), pairs.end());
    size_t most = 0, run = 0;
    for (size_t i = 0; i < pairs.size(); ++i) {
      if (i && pairs[i] == pairs[i - 1]) continue;
      run = i && pairs[i].first == pairs[i - 1].first ? run + 1 : 1;
      most = std::max(most, run);
    }
    turns += int64_t(most);
  }
  const double latency = double(m.shared_latency_cycles + std::max<int64_t>(turns - 1, 0) * m.shared_conflict_cycles);
  for (Thread* t : g.members) t->clock = issued + latency + noise() + (t->op.timed ? overhead : 0);
}

void KernelRuntime::price_store(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const uint32_t sm = first->block->sm;
  const double issued = issue_[sm].serve(g.clock, 1);
  if (g.path != MT_SPACE_SHARED) {
    const uint64_t sector = std::max<uint32_t>(m.l2.geometry.sector_bytes, 4);
    sectors_.clear();
    for (const Thread* t : g.members) sectors_.push_back(t->op.addresses[0] / sector * sector);
    std::sort(sectors_.begin(), sectors_.end());
    sectors_.erase(std::unique(sectors_.begin(), sectors_.end()), sectors_.end());
    store_sectors(sm, first->linear, issued);
  }
  for (Thread* t : g.members) t->clock = issued + 1;
}

void KernelRuntime::price_atomic(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const uint32_t sm = first->block->sm;
  const double issued = issue_[sm].serve(g.clock, 1);
  // Lanes on one address take turns; each atomic is answered by the L2 (or shared memory).
  std::unordered_map<uint64_t, int> same;
  for (Thread* t : g.members) {
    const uint64_t a = t->op.addresses[0];
    const char* p = reinterpret_cast<const char*>(a);
    const Block* b = t->block;
    const bool shared = p >= b->shared && p < b->shared + b->shared_bytes;
    const int64_t latency = shared ? m.shared_latency_cycles : gpu_.load(sm, t->linear, MT_SPACE_GLOBAL_CG, a);
    t->clock = issued + double(latency) + 2.0 * same[a]++ + noise();
  }
}

}  // namespace memtopo::sim::kernel
