// One cache element as a set of probes (the probe factory of the cache procedure):
//   <plugin>/<element>-size      -> size_bytes, full_miss_bytes
//   <plugin>/<element>-line      -> fetch_granularity_bytes, line_bytes  (needs size)
//   <plugin>/<element>-geometry  -> sets, ways, set_mapping              (needs size, line)
//   <plugin>/<element>-policy    -> replacement_policy, victim_probabilities (needs line, sets, ways)
//   <plugin>/<element>-latency   -> latency_cycles, miss_penalty_cycles  (needs size; uses line)
// With size_by_occupancy the size probe provides first_miss_bytes (the line and geometry
// probes need it instead of size_bytes), and
//   <plugin>/<element>-occupancy -> size_bytes                           (needs first miss, line)
// Every probe declares the options of its search (memtopo list -v shows them).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "memtopo/cache/steps.hpp"
#include "memtopo/plugin.hpp"

namespace memtopo::cache {

struct ElementSpec {
  std::string plugin;                 // "data-cache"
  std::string element;                // "l1d"
  std::string title;                  // "L1 data cache"
  // Builds the target from the device and the inputs (e.g. the constant L1 size for L1.5).
  std::function<Target(const Context&)> target;
  std::vector<std::string> size_requires;  // extra keys the size probe needs (e.g. "l1d.present")
  std::vector<std::string> size_uses;
  bool latency_probe = true;          // false: the plugin measures latency its own way (L2)
  // The size is the occupancy (find_occupancy, a probe after the line size): the size probe
  // then provides <element>.first_miss_bytes, which the line and geometry probes use.
  bool size_by_occupancy = false;
  // Sizes the occupancy may confirm (e.g. the API's L2 size, or its share per partition),
  // from keys in candidate_uses; empty when those are not known.
  std::function<std::vector<SizeCandidate>(const Context&)> size_candidates;
  std::vector<std::string> candidate_uses;
  // The L1-path elements share their storage with shared memory: their probes take the
  // carveout as an option.
  bool carveout_option = false;
  // Steps ("size", "geometry", ...) that run in a worker process of their own
  // (Probe::own_process): what they leave in the process must not reach later probes.
  std::vector<std::string> own_process_steps;
  // A path that may share another element's storage: the key (another probe's measurement)
  // whose value names the element whose storage it uses, and the elements it may name. Where
  // strides cannot see the sets and the element has no eviction sets of its own, the geometry
  // probe reports the named element's sets, ways and mapping, when they hold this path's size
  // at its own line (within 1 %), with both in the note.
  std::string storage_key;
  std::vector<std::string> storage_elements;
  // A key of the element's plugin that holds the ways of its minimal eviction sets (data-cache:
  // "l1d.eviction_set_ways"); empty: none. Where strides cannot see the sets, the geometry
  // probe takes the sets and ways from it and the size. Named by the plugin, not the SDK.
  std::string eviction_ways_key;
  // Why a stride scan cannot single out one of this element's sets on this device (empty: it
  // may), from keys named in geometry_uses (the L2: partition homes by a hash, where lines a
  // stride apart spread over every partition). The geometry probe then skips the scan and takes
  // the eviction sets or the shared storage where they exist, else is not determinable with it.
  std::function<std::string(const Context&)> strides_blind;
  std::vector<std::string> geometry_uses;
  // What the element is in roles (docs/roles.md): each key of the procedure declares
  // "cache.<part>@<subject>" ("cache.size_bytes@l1_cache"); empty: no roles.
  std::string subject;  // a new member goes at the end, where brace lists do not reach
  // A key of the element's plugin that holds the replacement policy its minimal eviction sets
  // showed ("l1d.eviction_set_policy"); empty: none. Where no stride puts lines into one set
  // (a hashed index), the policy probe reports it when it is lru, fifo or random.
  std::string eviction_policy_key;
  // Where strides_blind names hashed partition homes: the keys of the partitions' count and of
  // their home granule (the L2: "l2.partitions", "l2.partition_granule_bytes"), both in
  // geometry_uses. The geometry probe then scans the lines homed in the measuring SM's own
  // partition (found by their hit latency) where four times the size fits in 64 MiB, and
  // reports that partition's sets times the partitions. Empty: no such scan.
  std::string partitions_key, home_granule_key;
  // A cache in front of the element that keeps the lines it serves (Target::front), from keys
  // named in geometry_uses: the geometry and policy probes add lines of its set to their stride
  // scans. Empty: none.
  std::function<Target::Front(const Context&)> front;
};
std::vector<Probe> element_probes(const ElementSpec& spec);

}  // namespace memtopo::cache
