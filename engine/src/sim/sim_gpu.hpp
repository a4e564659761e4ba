// The simulated GPU's memory hierarchy: every cache and TLB instance of a Model, and the
// walk of one load through them (docs/simulator.md, "Latency model").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "memtopo/measure.h"
#include "sim/sim_cache.hpp"
#include "sim/sim_model.hpp"

namespace memtopo::sim {

// Latency of a load on one memory path, by the level that serves it.
struct PathLatency {
  int64_t first = 0;   // hit in the path's own SM cache (L1, texture, read-only, constant L1)
  int64_t second = 0;  // constant path only: hit in the constant L1.5
  int64_t l2_near = 0, l2_far = 0, dram_near = 0, dram_far = 0;
};

class Gpu {
 public:
  explicit Gpu(const Model& model);

  // As the constructor left it: every cache and TLB empty, the random streams at their seeds.
  // A probe starts here, so that its values do not depend on the probes before it.
  void restart();
  // Start of a run_jobs call: every cache and TLB empty, the L1s back to full size.
  void begin_call();
  // Start of a probe kernel's launch: the SMs' own caches empty (as a launch finds them on the
  // GPU), the L2 and the TLBs as the last launch left them.
  void begin_launch();
  // The shared-memory carveout of the block on `sm` (-1: the default).
  void set_carveout(uint32_t sm, int32_t percent);

  // Cycles of one load, without timing overhead and noise.
  // Where the last load was answered: the SM (its caches, shared memory), the L2 or DRAM.
  enum class Served { Sm, L2, Dram };
  Served served() const { return served_; }

  // What each level served since the GPU was built, counted as the hardware counters count it
  // (mt_counts): 32 B sectors looked up (a job's load is one; a probe kernel looks up the L2's
  // fetch granularity at once, an H100's 64 B two); DRAM in bytes it moved, an L2 miss the L2's
  // fetch granularity.
  struct Counts {
    uint64_t l1_load = 0, l1_load_hit = 0, l2_read = 0, l2_read_hit = 0, l2_write = 0;
    uint64_t dram_read_bytes = 0, dram_write_bytes = 0;
  };
  static constexpr uint32_t kCountedSectorBytes = 32;
  const Counts& counts() const { return counts_; }
  // Counts the probe-kernel runtime priced at once (kernel_fast_forward.cpp).
  void add_counts(const Counts& c) { add_to(counts_, c); }
  static void add_to(Counts& to, const Counts& c) {
    to.l1_load += c.l1_load;
    to.l1_load_hit += c.l1_load_hit;
    to.l2_read += c.l2_read;
    to.l2_read_hit += c.l2_read_hit;
    to.l2_write += c.l2_write;
    to.dram_read_bytes += c.dram_read_bytes;
    to.dram_write_bytes += c.dram_write_bytes;
  }
  // Dirty lines written back to DRAM (the probe-kernel runtime, which tracks what is dirty).
  void count_dram_write(uint64_t bytes) { counts_.dram_write_bytes += bytes; }

  // A store of one sector through the L2 (a write request): it allocates and looks up as a
  // load does, and counts as an L2 write; what DRAM later receives is count_dram_write's.
  int64_t store(uint32_t sm, uint64_t addr, uint32_t counted_sectors = 1) {
    weight_ = counted_sectors;
    storing_ = true;
    const int64_t cycles = below_sm(sm, addr, cg_);
    storing_ = false;
    return cycles;
  }

  // `counted_sectors`: the 32 B sectors this lookup stands for in the counts.
  int64_t load(uint32_t sm, uint32_t lane, mt_space space, uint64_t addr, uint32_t counted_sectors = 1) {
    weight_ = counted_sectors;
    served_ = Served::Sm;
    switch (space) {
      case MT_SPACE_SHARED:
        return model_.shared_latency_cycles;
      case MT_SPACE_CONSTANT:
        return load_constant(sm, addr);
      case MT_SPACE_GLOBAL_CA:
        return load_through(storage_cache(l1d_storage_, sm, lane), sm, addr, ca_, 0);
      case MT_SPACE_READONLY:
        return load_through(storage_cache(model_.readonly_storage, sm, lane), sm, addr, ro_, ro_unit_bytes_);
      case MT_SPACE_TEXTURE:
        return load_through(storage_cache(model_.texture_storage, sm, lane), sm, addr, tex_, tex_unit_bytes_);
      case MT_SPACE_GLOBAL_CG:
      default:
        counts_.l1_load += weight_;  // .cg loads look the L1 up too, and miss by design
        return below_sm(sm, addr, cg_);
    }
  }

  // Lines (address >> line bits) the L2 evicted since the last call, while tracking is on (the
  // probe-kernel runtime writes dirty ones back to DRAM).
  void track_l2_evictions(bool on) {
    track_evictions_ = on;
    l2_evicted_.clear();
  }
  std::vector<uint64_t>& l2_evictions() { return l2_evicted_; }
  uint32_t l2_line_shift() const { return uint32_t(__builtin_ctzll(model_.l2.geometry.line_bytes)); }

  // Time passes (cycles, possibly fractional: loads of concurrent streams overlap); other
  // clients bring lines into the L2 at [sim.l2] foreign_lines_per_kcycle.
  void advance(double cycles) {
    if (model_.l2_foreign_lines_per_kcycle <= 0 || l2_.empty()) return;
    foreign_due_ += cycles * model_.l2_foreign_lines_per_kcycle / 1000.0;
    for (; foreign_due_ >= 1.0; foreign_due_ -= 1.0)
      l2_access(kForeignBase + traffic_rng_.below(kForeignLines) * model_.l2.geometry.line_bytes);
  }

  // Random extra cycles of one measured load ([sim] noise_cycles, outliers): the jitter is
  // the memory's (a load that takes longer holds its slot longer, so it queues), the
  // interruption the clock's (the thread was away; nothing else waited for it).
  struct Noise {
    int64_t jitter = 0, interruption = 0;
  };
  Noise noise_parts() {
    Noise n;
    if (!noisy_) return n;
    if (model_.noise_cycles > 0) {
      if (model_.noise_geometric) {  // failures before a success, mean noise_cycles
        const double p = 1.0 / (1.0 + double(model_.noise_cycles));
        n.jitter = int64_t(std::floor(std::log1p(-noise_rng_.uniform()) / std::log1p(-p)));
      } else {
        n.jitter = int64_t(noise_rng_.below(uint64_t(model_.noise_cycles) + 1));
      }
    }
    if (model_.outlier_probability > 0 && noise_rng_.uniform() < model_.outlier_probability)
      n.interruption = model_.outlier_cycles;
    return n;
  }
  int64_t noise() {
    const Noise n = noise_parts();
    return n.jitter + n.interruption;
  }

  // Partition of a per-SM cache that `lane` uses: warps go round-robin to the warp
  // schedulers, and the schedulers are split evenly among the partitions.
  uint32_t partition_of(uint32_t lane, uint32_t partitions) const {
    if (partitions <= 1) return 0;
    const uint32_t groups = std::max(model_.warp_schedulers, partitions);
    const uint32_t warp = lane / uint32_t(model_.info.warp_size);
    return (warp % groups) * partitions / groups;
  }

  const Model& model() const { return model_; }
  const PathLatency& path(mt_space s) const;

 private:
  struct PerSmCaches {
    uint32_t partitions = 0;
    std::vector<std::unique_ptr<Cache>> caches;  // [sm * partitions + partition]
  };

  Cache* storage_cache(Storage s, uint32_t sm, uint32_t lane) {
    PerSmCaches* c = s == Storage::L1d ? &l1d_ : s == Storage::Texture ? &tex_cache_ : s == Storage::Readonly ? &ro_cache_ : nullptr;
    if (!c || c->caches.empty()) return nullptr;
    return c->caches[size_t(sm) * c->partitions + partition_of(lane, c->partitions)].get();
  }

  // `unit_bytes` (0: one line of `first`): what a miss of this path allocates in `first`, where
  // the path's own line spans several lines of a storage it shares (docs/simulator.md).
  int64_t load_through(Cache* first, uint32_t sm, uint64_t addr, const PathLatency& p, uint32_t unit_bytes) {
    const bool global = &p == &ca_;
    counts_.l1_load += global ? weight_ : 0;
    if (first && first->access(addr)) {
      counts_.l1_load_hit += global ? weight_ : 0;
      return p.first + (model_.tlb_on_l1_hit ? translate(sm, addr) : 0);
    }
    if (first && unit_bytes) {
      const uint64_t line = first->line_bytes(), own = addr / line * line;
      for (uint64_t a = addr / unit_bytes * unit_bytes; a < addr / unit_bytes * unit_bytes + unit_bytes; a += line)
        if (a != own) first->reserve(a);
    }
    return below_sm(sm, addr, p);
  }

  int64_t load_constant(uint32_t sm, uint64_t addr) {
    if (!c1_.empty() && c1_[sm]->access(addr)) return const_.first;
    if (!c15_.empty() && c15_[model_.l15_instance(sm)]->access(addr)) return const_.second;
    return below_sm(sm, addr, const_);
  }

  // A load that left the SM: address translation, then the L2 partition, then DRAM.
  int64_t below_sm(uint32_t sm, uint64_t addr, const PathLatency& p) {
    int64_t cycles = model_.tlb_present ? translate(sm, addr) : 0;
    served_ = Served::Dram;
    if (l2_.empty()) return cycles + p.dram_near;
    if (model_.l2_foreign_line_probability > 0 && traffic_rng_.uniform() < model_.l2_foreign_line_probability)
      l2_access(kForeignBase + traffic_rng_.below(kForeignLines) * model_.l2.geometry.line_bytes);
    const uint32_t near = model_.l2_near_partition[sm];
    const bool far = l2_partition(addr) != near;
    (storing_ ? counts_.l2_write : counts_.l2_read) += weight_;
    // The near partition's copy of a far line answers first; looking it up leaves one there.
    served_ = Served::L2;
    // Where far lines are copied near, the SM's request is looked up (and counted) in the near
    // partition; a line found only in its home partition is a miss there, as an H100 counts it.
    // A store goes to the line's home alone: a near copy of a dirty line would make two places
    // hold it, and evicting either one write-back (a window of writes then left a varying part
    // of the L2 dirty: DRAM wrote 2 to 3 % more or less than the stream).
    const bool via_near = far && model_.l2_far_copies_near && !storing_;
    if (via_near && l2_touch(near, addr)) {
      counts_.l2_read_hit += storing_ ? 0 : weight_;
      return cycles + p.l2_near + slice_cycles(sm, addr);
    }
    if (l2_access(addr)) {
      counts_.l2_read_hit += storing_ || via_near ? 0 : weight_;
      return cycles + (far ? p.l2_far : p.l2_near) + slice_cycles(sm, addr);
    }
    served_ = Served::Dram;
    counts_.dram_read_bytes += storing_ ? 0 : model_.l2.geometry.sector_bytes;
    return cycles + (far ? p.dram_far : p.dram_near);
  }

  // What an L2 hit costs more where the SM's slice class differs from the line's.
  int64_t slice_cycles(uint32_t sm, uint64_t addr) const {
    if (model_.l2_slice_class_of_sm.empty()) return 0;
    const uint64_t unit = addr / model_.l2_slice_granule_bytes;
    const uint32_t line_class = uint32_t(__builtin_parityll(unit & model_.l2_slice_line_mask));
    return model_.l2_slice_class_of_sm[sm] != line_class ? model_.l2_slice_cycles : 0;
  }
  uint32_t l2_partition(uint64_t addr) const {
    uint64_t chunk = addr >> interleave_shift_;
    const uint64_t n = l2_.size();
    // A power of two: a mask, as this runs for every sector a load looks up.
    if (!model_.l2_interleave_hashed && partitions_pow2_) return uint32_t(chunk & (n - 1));
    if (!model_.l2_interleave_hashed || n < 2) return uint32_t(chunk % n);
    if (n == 2) return uint32_t(__builtin_parityll(chunk));
    // Each run of n chunks that differ in the lowest digit only still has one chunk in every
    // partition, so local_address below stays a one-to-one map within a partition.
    uint64_t sum = 0;
    for (; chunk; chunk /= n) sum += chunk % n;
    return uint32_t(sum % n);
  }
  // The address inside a partition: the other partitions' chunks squeezed out.
  uint64_t local_address(uint64_t addr) const {
    const uint64_t chunk = addr >> interleave_shift_;
    const uint64_t in_partition = partitions_pow2_ ? chunk >> partitions_shift_ : chunk / l2_.size();
    return (in_partition << interleave_shift_) | (addr & (model_.l2_interleave_bytes - 1));
  }
  bool l2_access(uint64_t addr) { return l2_touch(l2_partition(addr), addr); }
  bool l2_touch(uint32_t partition, uint64_t addr) {
    const bool hit = l2_[partition]->access(addr, local_address(addr));
    if (track_evictions_)
      if (const uint64_t e = l2_[partition]->take_evicted(); e != UINT64_MAX) l2_evicted_.push_back(e);
    return hit;
  }
  // Other clients' lines: far above every buffer, many more than the L2 holds.
  static constexpr uint64_t kForeignBase = uint64_t(1) << 47;
  static constexpr uint64_t kForeignLines = uint64_t(1) << 24;

  int64_t translate(uint32_t sm, uint64_t addr) {
    int64_t cycles = 0;
    if (!tlb1_.empty()) {
      if (tlb1_[model_.tlb_l1_per_sm ? sm : 0]->access(addr)) return 0;
      cycles += model_.tlb_l1.miss_penalty_cycles;
    }
    if (tlb2_ && !tlb2_->access(addr)) cycles += model_.tlb_l2.miss_penalty_cycles;
    return cycles;
  }

  void restart_randomness();  // the random streams at their seeds

  Model model_;
  Served served_ = Served::Sm;
  Counts counts_;
  bool storing_ = false;  // below_sm walks a store
  uint32_t weight_ = 1;   // counted sectors of the lookup under way
  bool track_evictions_ = false;
  std::vector<uint64_t> l2_evicted_;
  Rng replacement_rng_, noise_rng_, traffic_rng_, stray_rng_;
  double foreign_due_ = 0;
  bool noisy_ = false;
  Storage l1d_storage_ = Storage::None;
  PerSmCaches l1d_, tex_cache_, ro_cache_;
  std::vector<std::unique_ptr<Cache>> c1_, c15_, l2_, tlb1_;
  std::unique_ptr<Cache> tlb2_;
  uint32_t interleave_shift_ = 12;
  bool partitions_pow2_ = false;  // the L2's partitions a power of two: log2 of them below
  uint32_t partitions_shift_ = 0;
  uint32_t tex_unit_bytes_ = 0, ro_unit_bytes_ = 0;  // load_through's unit_bytes of each path
  PathLatency ca_, cg_, tex_, ro_, const_;
};

}  // namespace memtopo::sim
