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
  const uint64_t sector = uint64_t(1) << sector_shift_;
  line_done_.clear();
  away_ = 0;
  for (size_t i = 0; i < sectors_.size();) {
    const uint64_t l = sectors_[i] >> request_shift_;
    int64_t latency = 0;
    int served = 0;
    size_t n = 0;
    for (; i < sectors_.size() && sectors_[i] >> request_shift_ == l; ++i, ++n) {
      latency = std::max(latency, gpu_.load(sm, lane, space, sectors_[i], counted_sectors_));
      served = std::max(served, served_rank(gpu_.served()));
    }
    write_back_evicted(issued);
    // Each level's rate is that of the loads it answers ([sim.memory]: the L1's hits, the L2's
    // hits, DRAM's reads), so that a description's levels stay independent.
    const double bytes = double(n * sector);
    double start = issued;
    InFlight* queue = served == 1 ? &l2_in_flight_[sm] : served == 2 ? &dram_in_flight_[sm] : nullptr;
    if (!queue) {
      start = l1_[sm].serve(start, bytes);
    } else {
      start = queue->start(start);
      start = served == 1 ? book(l2_port_, start, bytes, l2_read_rate_) : book_dram(start, bytes, false);
    }
    const Gpu::Noise noise = gpu_.noise_parts();
    const double done = start + double(latency + noise.jitter);
    away_ = std::max(away_, double(noise.interruption));
    if (queue) queue->end(done);
    line_done_.push_back({l, done});  // in ascending line order
  }
}

double KernelRuntime::line_done(uint64_t sector_address, double issued) const {
  const uint64_t l = sector_address >> request_shift_;
  auto it = std::lower_bound(line_done_.begin(), line_done_.end(), std::make_pair(l, -1e300));
  return it != line_done_.end() && it->first == l ? it->second : issued;
}

void KernelRuntime::sorted_distinct_sectors() {
  if (!std::is_sorted(sectors_.begin(), sectors_.end())) std::sort(sectors_.begin(), sectors_.end());
  sectors_.erase(std::unique(sectors_.begin(), sectors_.end()), sectors_.end());
}

double KernelRuntime::book_dram(double t, double bytes, bool write) {
  dram_write_share_ += std::min(1.0, bytes / kTurnBytes) * ((write ? 1.0 : 0.0) - dram_write_share_);
  // Half reads and half writes (a copy, an update) lose all the turns cost; one direction alone,
  // nothing.
  const double mixed = 4 * dram_write_share_ * (1 - dram_write_share_);
  const double rate = write ? dram_write_rate_ : dram_read_rate_;
  return book(dram_port_, t, bytes, rate * (1 - (1 - dram_turn_factor_) * mixed));
}

void KernelRuntime::write_back_evicted(double t) {
  std::vector<uint64_t>& evicted = gpu_.l2_evictions();
  const double line = double(gpu_.model().l2.geometry.line_bytes);
  for (uint64_t l : evicted)
    if (dirty_.erase(l)) {
      drain_ = std::max(drain_, book_dram(t, line, true));
      gpu_.count_dram_write(uint64_t(line));
    }
  evicted.clear();
}

double KernelRuntime::store_sectors(uint32_t sm, double issued) {
  const Model& m = gpu_.model();
  const uint64_t sector = uint64_t(1) << sector_shift_;
  // A block's stores are one request to the L2, which keeps the lines (dirty) and writes them to
  // DRAM when it evicts them; a store of whole sectors fetches nothing. The warp does not wait for
  // its stores, but for a place among the SM's requests in flight, which a backed-up L2 keeps
  // taken; the launch ends once all are in.
  double go_on = issued;
  for (size_t i = 0; i < sectors_.size();) {
    const uint64_t r = sectors_[i] >> request_shift_;
    size_t n = 0, hits = 0;
    for (; i < sectors_.size() && sectors_[i] >> request_shift_ == r; ++i, ++n) {
      gpu_.store(sm, sectors_[i], counted_sectors_);
      hits += gpu_.served() == Gpu::Served::Dram ? 0 : 1;
      dirty_.insert(sectors_[i] >> line_shift_);  // line numbers, as the L2 reports what it evicts
    }
    write_back_evicted(issued);
    InFlight& queue = l2_in_flight_[sm];
    double start = queue.start(issued);
    go_on = std::max(go_on, start);
    // Sectors the L2 held take its write rate; new ones cost DRAM's, once evicted.
    start = book(l2_port_, start, double(hits * sector), l2_write_rate_);
    const double done = start + double(m.l2.latency_cycles);
    queue.end(done);
    drain_ = std::max(drain_, done);
  }
  return go_on;
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
  // The sectors the lanes touch: one request per line, one lookup per sector.
  sectors_.clear();
  for (const Thread* t : g.members)
    for (uint32_t i = 0; i < t->op.count; ++i) push_sectors(t->op.addresses[i], t->op.bytes);
  sorted_distinct_sectors();
  request_lines(sm, first->linear, mt_space(g.path), issued);
  // A warp goes on once every lane's data is in: its lanes stay in step.
  double done = issued;
  for (const auto& [line, at] : line_done_) done = std::max(done, at);
  for (Thread* t : g.members) t->clock = done + away_ + (t->op.timed ? overhead : 0);
}

void KernelRuntime::price_shared(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const double overhead = double(m.timing_overhead_cycles);
  const double issued = issue_[first->block->sm].serve(g.clock, 1);
  lane_addresses_.clear();
  for (const Thread* t : g.members)
    for (uint32_t i = 0; i < t->op.count; ++i) lane_addresses_.push_back(t->op.addresses[i]);
  const double done = shared_loads_done(*first->block, g.path, first->op.count, g.bytes, issued);
  for (Thread* t : g.members) t->clock = done + (t->op.timed ? overhead : 0);
}

double KernelRuntime::shared_loads_done(const Block& block, uint32_t path, uint32_t per_lane, uint32_t bytes,
                                        double issued) {
  const Model& m = gpu_.model();
  if (path == MT_OP_PATH_CLUSTER) {
    const double local = double(m.cluster_local_latency_cycles ? m.cluster_local_latency_cycles : m.shared_latency_cycles);
    const double remote =
        double(m.cluster_remote_latency_cycles ? m.cluster_remote_latency_cycles : 6 * m.shared_latency_cycles);
    double done = issued;
    for (uint64_t a : lane_addresses_) {
      const bool own = cluster_rank_of(a, block.rank) == block.rank;
      const double start = own ? issued : cluster_port_[block.sm].serve(issued, double(bytes));
      const Gpu::Noise n = gpu_.noise_parts();
      done = std::max(done, start + (own ? local : remote) + double(n.jitter + n.interruption));
    }
    return done;
  }
  const int64_t turns = bank_turns(lane_addresses_, std::max<uint32_t>(per_lane, 1), bytes);
  const double latency = double(m.shared_latency_cycles + std::max<int64_t>(turns - 1, 0) * m.shared_conflict_cycles);
  const Gpu::Noise n = gpu_.noise_parts();  // the warp's one load: one draw
  return issued + latency + double(n.jitter + n.interruption);
}

int64_t KernelRuntime::bank_turns(const std::vector<uint64_t>& addresses, uint32_t per_lane, uint32_t bytes) const {
  // The most distinct words of one bank among the lanes (one word shared by several lanes is a
  // broadcast). Wider loads cover several banks and are served in phases of as many lanes as
  // fill the banks once; the phases' turns add up.
  const Model& m = gpu_.model();
  const uint64_t bank_bytes = std::max<uint32_t>(m.shared_bank_bytes, 1), banks = std::max<uint32_t>(m.shared_banks, 1);
  const size_t phase = std::max<size_t>(1, banks * bank_bytes / std::max<uint32_t>(bytes, 4)) * std::max<uint32_t>(per_lane, 1);
  const uint64_t words_per_load = std::max<uint64_t>(1, bytes / bank_bytes);
  int64_t turns = 0;
  std::vector<std::pair<uint64_t, uint64_t>>& pairs = bank_pairs_;
  for (size_t p = 0; p < addresses.size(); p += phase) {
    pairs.clear();
    for (size_t k = p; k < std::min(p + phase, addresses.size()); ++k)
      for (uint64_t w = 0; w < words_per_load; ++w) {
        const uint64_t word = addresses[k] / bank_bytes + w;
        pairs.push_back({word % banks, word});
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
  return turns;
}

void KernelRuntime::price_store(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const uint32_t sm = first->block->sm;
  const double issued = issue_[sm].serve(g.clock, 1);
  double go_on = issued;
  if (g.path != MT_SPACE_SHARED) {
    sectors_.clear();
    for (const Thread* t : g.members) push_sectors(t->op.addresses[0], t->op.bytes);
    sorted_distinct_sectors();
    go_on = store_sectors(sm, issued);
  }
  for (Thread* t : g.members) t->clock = std::max(issued + 1, go_on);
}

void KernelRuntime::price_atomic(Group& g) {
  const Model& m = gpu_.model();
  const Thread* first = g.members.front();
  const uint32_t sm = first->block->sm;
  const double issued = issue_[sm].serve(g.clock, 1);
  // Lanes on one address take turns; each atomic is answered by the L2 (or shared memory).
  std::unordered_map<uint64_t, int> same;
  double done = issued;
  for (Thread* t : g.members) {
    const uint64_t a = t->op.addresses[0];
    const char* p = reinterpret_cast<const char*>(a);
    const Block* b = t->block;
    const bool shared = p >= b->shared && p < b->shared + b->shared_bytes;
    const int64_t latency =
        shared ? m.shared_latency_cycles : gpu_.load(sm, t->linear, MT_SPACE_GLOBAL_CG, device_address(a));
    const Gpu::Noise n = gpu_.noise_parts();
    done = std::max(done, issued + double(latency + n.jitter + n.interruption) + 2.0 * same[a]++);
  }
  for (Thread* t : g.members) t->clock = done;
}

}  // namespace memtopo::sim::kernel
