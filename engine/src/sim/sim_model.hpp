// The simulated GPU's description: what a topology TOML file says, checked and with every
// default filled in (sim_description.cpp reads it; sim_gpu.cpp executes it).
// docs/simulator.md documents every field, its TOML key and its default.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/sim_link.hpp"
#include "memtopo/abi.h"

namespace memtopo::sim {

// Srrip: static re-reference interval prediction, 2 bits (Jaleel et al. 2010, "hit priority"):
// a fill predicts 2, a hit 0; the victim is the first way at 3, after aging all ways until one is.
enum class Policy { Lru, Fifo, Random, NonUniform, Srrip };

// Structure of one set-associative cache (or TLB level: line = page).
struct CacheGeometry {
  bool present = false;
  uint64_t size_bytes = 0;            // of one instance (one partition, one L2 partition: whole L2)
  uint32_t line_bytes = 128;
  uint32_t sector_bytes = 128;        // fetch granularity; a miss fills only its sector
  std::vector<uint32_t> set_ways;     // ways of every set (unequal sets allowed)
  Policy policy = Policy::Lru;
  std::vector<double> victim_probabilities;  // NonUniform: victim probability per way
  std::vector<uint64_t> set_hash_masks;   // empty: modulo; else set bit i = parity(addr & mask[i])
  bool mixed_index = false;               // no masks: a multiplicative hash of the line, modulo the sets
  uint32_t sets() const { return static_cast<uint32_t>(set_ways.size()); }
  uint32_t max_ways() const {
    uint32_t m = 0;
    for (uint32_t w : set_ways) m = w > m ? w : m;
    return m;
  }
};

// A cache element as probes report it: structure plus the latency as an SM sees it.
struct CacheElement {
  CacheGeometry geometry;
  int64_t latency_cycles = 0;
  bool has_miss_penalty = false;
  int64_t miss_penalty_cycles = 0;    // only when given (otherwise derived, see simulator.md)
  // A measured penalty of an SM cache is the median over L2 hits of several SMs, near and far
  // partitions pooled: every L2 hit on this element's path then costs latency + penalty.
  bool miss_penalty_pooled = false;
  uint32_t partitions_per_sm = 1;     // l1d, texture, readonly
};

// Which storage a load path uses on the SM.
enum class Storage { None, L1d, Texture, Readonly };

struct TlbLevel {
  CacheGeometry geometry;  // line_bytes = page size
  int64_t miss_penalty_cycles = 0;
};

// [sim.memory]: peak rates of bandwidth streams (0: none; Little's law and issue limit them).
struct StreamPeaks {
  double l1_read_bytes_per_cycle_per_sm = 0;
  double l2_read_bytes_per_cycle = 0, l2_write_bytes_per_cycle = 0;  // the whole GPU, SM cycles
  double dram_read_bytes_per_second = 0, dram_write_bytes_per_second = 0;
  // Bytes read and written a second by a stream that does both (a copy): below the two rates'
  // harmonic mean by what the bus's turns between reads and writes cost (0: no such loss).
  double dram_copy_bytes_per_second = 0;
};

struct Model {
  std::string origin;  // "sim:FILE" or "sim (built-in)"
  mt_device_info info{};
  LinkModel link;  // the host side: [attachment], [link], [sim.link]

  CacheElement l1d, texture, readonly, constant_l1, constant_l15, l2;
  Storage texture_storage = Storage::None;   // where texture loads look first
  Storage readonly_storage = Storage::None;  // where read-only loads look first

  uint32_t l2_partitions = 1;
  int64_t l2_far_latency_cycles = 0;
  uint64_t l2_interleave_bytes = 4096;
  // false: chunks of interleave_bytes take the partitions in turn; true: a chunk's partition is
  // the sum of its index's base-`partitions` digits (the XOR of its bits for two), so that runs
  // of one home are one or two chunks long, as on the H100 (docs/simulator.md).
  bool l2_interleave_hashed = false;
  bool l2_far_copies_near = false;            // a far hit leaves a copy in the near partition
  // Chance per L2 access that another client's line (page tables, code, other kernels) is
  // brought into the L2 first: on the H100 such traffic evicts lines of full sets.
  double l2_foreign_line_probability = 0.0;
  // Other clients' lines brought into the L2 per 1000 cycles of time, whatever the loads do:
  // then a slower load stream keeps fewer of its own lines, as the H100's L2 does
  // (docs/results/log/h100.md).
  double l2_foreign_lines_per_kcycle = 0.0;
  std::vector<uint32_t> l2_near_partition;   // per SM
  // [sim.l2] slice map (docs/simulator.md): an L2 hit costs l2_slice_cycles more where the SM's
  // class differs from the line's, the parity of the address's granule index masked by
  // l2_slice_line_mask. Empty l2_slice_class_of_sm: no such term.
  std::vector<uint32_t> l2_slice_class_of_sm;
  uint64_t l2_slice_granule_bytes = 256;
  uint64_t l2_slice_line_mask = 1;
  int64_t l2_slice_cycles = 0;

  bool tlb_present = false;
  TlbLevel tlb_l1, tlb_l2;
  bool tlb_l1_per_sm = true;
  bool tlb_on_l1_hit = false;
  // [sim.memory]: requests in flight per SM that the L2 and DRAM answer before latency grows (0: no
  // limit). More chains of one job queue: each load takes latency x chains / limit.
  uint32_t l2_loads_in_flight = 0, dram_loads_in_flight = 0;
  StreamPeaks stream_peaks;
  // [shared] banks: the lanes of one warp whose words differ but share a bank take turns,
  // conflict_cycles each after the first.
  uint32_t shared_banks = 32, shared_bank_bytes = 4;
  int64_t shared_conflict_cycles = 2;
  // Distributed shared memory, for probe kernels' clusters ([sim.cluster]): a load of another
  // block's shared memory and of the block's own through a cluster address (0: six times and
  // once the shared-memory latency), and the bytes per cycle an SM's port to the other SMs of
  // its cluster takes (0: no limit).
  int64_t cluster_remote_latency_cycles = 0, cluster_local_latency_cycles = 0;
  double cluster_bytes_per_cycle_per_sm = 0;

  bool has_dram_latency = false;
  int64_t dram_latency_cycles = 0;
  int64_t dram_far_extra_cycles = -1;  // [dram] far_latency_cycles - latency_cycles; -1: the L2's far extra
  int64_t shared_latency_cycles = 30;

  // [sim]
  uint64_t seed = 1;
  int64_t timing_overhead_cycles = 0;
  int64_t noise_cycles = 0;
  bool noise_geometric = false;
  double outlier_probability = 0.0;
  int64_t outlier_cycles = 0;
  // Chance per call that an SM's L1, texture or read-only cache holds another user's line
  // in one random set for the whole call: the H100's L1 paths miss now and then at
  // footprints just below their size, on one SM and not on the next.
  double stray_line_probability = 0.0;
  uint32_t sm_per_gpc = 1;
  // The SMs of each GPC, whose blocks one cluster never leaves: [sim] gpc_of_sm, else
  // consecutive runs of sm_per_gpc SMs.
  std::vector<std::vector<uint32_t>> gpcs;
  // The constant L1.5 of each SM when a measured topology says which SMs share one
  // ([sim.constant_l15] group_of_sm); empty: SM s uses instance s / sm_per_gpc.
  std::vector<uint32_t> l15_of_sm;
  uint32_t l15_instance(uint32_t sm) const { return l15_of_sm.empty() ? sm / sm_per_gpc : l15_of_sm[sm]; }
  uint32_t l15_instances() const {
    if (l15_of_sm.empty()) return (uint32_t(info.sm_count) + sm_per_gpc - 1) / sm_per_gpc;
    uint32_t most = 0;
    for (uint32_t g : l15_of_sm) most = g > most ? g : most;
    return most + 1;
  }
  uint32_t warp_schedulers = 4;
  uint64_t l1_shared_total_bytes = 0;  // 0: the carveout does not change the L1
  int32_t default_carveout_percent = 0;
  // The shared-memory sizes per SM a carveout can select, ascending: a carveout of p% takes
  // the smallest one holding p% of device.shared_per_sm_bytes. Empty: p% exactly.
  std::vector<uint64_t> shared_sizes_bytes;
  std::vector<int32_t> carveout_percents;      // the smallest percent of each level; empty: the next level up from p%
  // The shared memory per SM a job with carveout `percent` (-1: the default) leaves beside the L1.
  uint64_t carveout_shared_bytes(int32_t percent) const;
  // The L1 bytes of one SM beside that shared memory.
  uint64_t l1_bytes_at(int32_t percent) const;
};

// Reads and checks a description, its measured keys first moved to the description keys
// `replay` names (engine::ReplayMap). `origin_name` is the file name used in messages.
// Throws memtopo::Error("FILE:LINE: key.path: what is wrong; what to do").
Model load_model(const std::string& toml_text, const std::string& origin_name, const std::string& origin,
                 const std::map<std::string, std::string>& replay = {});

}  // namespace memtopo::sim
