// The parts of the description reader (sim_description*.cpp), by concern: the cache
// tables and how measured values replay (sim_description_cache.cpp), [tlb] and [sim]
// (sim_description_sim.cpp), and load_model itself (sim_description.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "sim/sim_model.hpp"
#include "sim/sim_reader.hpp"

namespace memtopo::sim {

// What [provenance.<element>] says: a table there means the element's values were measured
// by probes, and they are read with the replay rules of docs/simulator.md.
struct Provenance {
  bool measured = false;
  enum class Bound { Exact, AtLeast, AtMost } size_bound = Bound::Exact;  // of size_bytes
  // The measured size is what one instance holds: an L2 that copies what an SM reads into
  // its near partition fills only that partition from one SM, so the whole is instances x size.
  bool size_of_one_instance = false;
};
Provenance read_provenance(const toml::table& root, const char* element, const std::string& file);

// How the set index is formed when [sim.<element>] gives no set_hash.
enum class SetIndex {
  Modulo,
  Pairs,   // set_mapping = "hashed": index bit i = line bit i XOR line bit i + log2(sets)
  Folded,  // sets not measured: index bit i = XOR of line bits i, i + log2(sets), i + 2 log2(sets), ...
  Mixed,   // set_mapping = "mixed", or a measured "hashed" of sets no power of two: not linear (sim_cache.hpp)
};

struct ElementDefaults {
  uint32_t line_bytes;
  int64_t latency_cycles;
  bool l2 = false;  // [l2] reads the sweep's keys and its penalty is to DRAM, not to the L2
};

struct CacheRead {
  CacheElement element;
  SetIndex index = SetIndex::Modulo;
};

// Per-set ways from (size, line, sets, ways) of a hand-written element or a TLB level, where
// everything must agree exactly; `instances` splits the sets (L2 partitions).
std::vector<uint32_t> read_sets(Reader& r, uint64_t size, uint32_t line, const char* sets_key, const char* ways_key,
                                uint32_t instances, const char* size_key);

// A cache element table ([l1d], [texture], ...); `instances` > 1 for the partitioned L2
// (`sets` counts the sets of every partition together).
CacheRead read_cache(Reader& r, ElementDefaults d, std::optional<uint64_t> default_size, const Provenance& prov,
                     uint32_t instances = 1);
// [sim.<element>]: set-index hash, non-uniform probabilities, partitions per SM.
void read_cache_sim(Reader& s, Reader& element, CacheRead& read, bool partitions_allowed);

// [tlb]; [sim.tlb] is read by read_sim_tlb.
void read_tlb(Reader& tlb, Model& m);
// [shared] banks, bank width and the cost of a conflict.
void read_shared_banks(Reader& shared, Model& m);
// [sim] itself (seed, noise, GPCs, carveout). The L1.5's sharing is a [sim] key, but a
// measured L1.5 changes its default (docs/simulator.md, "Replaying a measured topology").
void read_sim_globals(Reader& sim, Model& m, bool constant_l15_measured);
// [sim] shared_sizes_bytes, the shared-memory sizes a carveout selects, and
// carveout_l1d_size_bytes, the L1 left beside each (which give the L1 and shared array).
void read_carveout(Reader& sim, Model& m);
// [sim.texture] and [sim.readonly] storage: which cache each path looks up first.
void read_storages(Reader& s_tex, Reader& s_ro, Model& m);
// [sim.l2]: interleave, far copies, other clients' traffic, the partition each SM is near.
void read_l2_placement(Reader& s_l2, Model& m);
// Whether [sim.l2] says that a far read leaves a copy in the near partition.
bool far_copies_near(Reader& s_l2);
void read_sim_tlb(Reader& s_tlb, Model& m);
void read_sim_cluster(Reader& s_cluster, Model& m);
// [sim.memory]: requests in flight per SM and the peak rates of bandwidth streams.
void read_sim_memory(Reader& s_memory, Model& m);

// The tables whose keys size the caches and TLBs: the key of the largest is named when a
// description needs too much memory.
struct SizeReaders {
  const Reader *device, *l1d, *texture, *readonly, *constant_l1, *constant_l15, *l2, *tlb;
};
// The memory the simulated GPU's caches and TLBs would take (every instance: per SM, per GPC,
// per L2 partition) against simulator_memory_limit(), once the description is read and
// before anything of that size is built (sim_description_limits.cpp).
void check_simulator_memory(const Model& m, const SizeReaders& r);

}  // namespace memtopo::sim
