// data-cache's eviction-set probes (eviction_sets.cu): the L1's (l1d-eviction-sets) and the
// L2's (l2-eviction-sets) ways from minimal eviction sets, and their set index as XOR parities
// of address bits (docs/cache-probes.md, "Eviction sets and the set-index function").
#pragma once

#include <cstdint>
#include <string>

#include <memtopo/probe.hpp>

namespace data_cache {

// What differs between the caches the probe reduces sets of.
struct EvictionLevel {
  std::string element;              // "l1d", "l2": the keys' prefix
  std::string size_key;             // the cache's lines come from it: the pool and the sets
  uint64_t total_bytes = 0;         // 0 or the size of all partitions (sets counted over them)
  bool l2_path = false;             // S and x load .cg: the L2 is under test
  uint32_t block_threads = 32;      // threads loading S
  bool one_target_at_a_time = false;  // a shared cache: targets on other SMs would disturb it
  uint32_t threshold_permille = 500;  // see EvictionArgs::threshold_permille
};

void measure_eviction_sets(memtopo::Context& ctx, const EvictionLevel& level);

memtopo::Probe l1d_eviction_sets();
memtopo::Probe l2_eviction_sets();

}  // namespace data_cache
