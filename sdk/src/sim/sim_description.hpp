// The parts of the description reader (sim_description*.cpp), by concern: the cache
// tables (sim_description_cache.cpp), [tlb] and [sim] (sim_description_sim.cpp), and
// load_model itself (sim_description.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/sim_model.hpp"
#include "sim/sim_reader.hpp"

namespace memtopo::sim {

struct ElementDefaults {
  uint32_t line_bytes;
  int64_t latency_cycles;
  bool l2 = false;  // [l2] also reads the keys of the L2 level sweep
};

// Per-set ways from (size, line, sets, ways), which must agree exactly (cache elements and
// TLB levels); `instances` splits the sets (L2 partitions).
std::vector<uint32_t> read_sets(Reader& r, uint64_t size, uint32_t line, const char* sets_key, const char* ways_key,
                                uint32_t instances, const char* size_key);

// A cache element table ([l1d], [texture], ...); `instances` > 1 for the partitioned L2
// (`sets` counts the sets of every partition together).
CacheElement read_cache(Reader& r, ElementDefaults d, std::optional<uint64_t> default_size, uint32_t instances = 1);
// [sim.<element>]: set-index hash, non-uniform probabilities, partitions per SM.
void read_cache_sim(Reader& s, Reader& element, CacheElement& e, bool partitions_allowed);

// [tlb]; [sim.tlb] is read by read_sim_tlb.
void read_tlb(Reader& tlb, Model& m);
// [sim] itself (seed, noise, GPCs, carveout).
void read_sim_globals(Reader& sim, Model& m);
// [sim.texture] and [sim.readonly] storage: which cache each path looks up first.
void read_storages(Reader& s_tex, Reader& s_ro, Model& m);
// [sim.l2]: interleave, other clients' traffic, the partition each SM is near.
void read_l2_placement(Reader& s_l2, Model& m);
void read_sim_tlb(Reader& s_tlb, Model& m);

}  // namespace memtopo::sim
