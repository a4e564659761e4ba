// The steps of the cache procedure (docs/cache-probes.md), each in its own source file under
// sdk/src/procedures/: size, occupancy, line and sector, sets and ways, replacement policy,
// latency. Each takes a Measurer and the keys earlier steps found.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "memtopo/cache/measurer.hpp"

namespace memtopo::cache {

template <class T>
struct Measured {
  bool found = false;
  T value{};
  double confidence = 0;
  Bound bound = Bound::Exact;
  std::string note;    // how it was measured, or why it was not
};

struct SizeResult {
  Measured<int64_t> size_bytes;
  Measured<int64_t> full_miss_bytes;   // found only when the transition is gradual
  std::vector<uint64_t> footprints;    // the final sweep: footprint and miss fraction
  std::vector<double> miss_fractions;
};
SizeResult find_size(Measurer& m);

// The capacity as occupancy: loads to random lines of footprints past the first miss (every
// set full) hit with probability (lines held) / (lines in the footprint), whatever the policy,
// so lines held = hit fraction x lines. Where a hashed set index fills sets unevenly, the
// first miss of a cyclic sweep (find_size) comes before the capacity: conflict misses, not
// capacity misses. Where other clients displace lines over time, the lines held grow with the
// load rate: they are measured at several rates and extrapolated to an infinite one. Reports
// the first miss itself when both agree (to three standard errors), else the one `candidate`
// that agrees, else the lines held, to the line, with their standard error in the note.
struct SizeCandidate {
  int64_t bytes = 0;
  std::string source;  // "the API's L2 size over 2 partitions"
};
struct OccupancyResult {
  Measured<int64_t> size_bytes;
  std::vector<uint64_t> footprints;
  std::vector<uint32_t> streams, gap_cycles, pump_lanes;
  std::vector<double> cycles_per_load, lines_held, standard_errors;
};
OccupancyResult find_occupancy(Measurer& m, int64_t first_miss_bytes, int64_t full_miss_bytes, int64_t line_bytes,
                               const std::vector<SizeCandidate>& candidates = {});

// A size checked against the hardware counters of the path's level (.ca: the L1, .cg: the L2;
// other paths are not checked): `info` says how (memtopo/verify.hpp). False where the counters
// refute the size (*refuted says how), which is then no size of that cache.
bool check_size_by_counters(Measurer& m, const Measured<int64_t>& size, bool by_occupancy, int64_t line_bytes,
                            ResultInfo& info, std::string* refuted);

struct LineResult {
  Measured<int64_t> fetch_granularity_bytes;
  Measured<int64_t> line_bytes;
  bool path_limited = false;  // not determinable: the path cannot hold the footprints needed
};
// full_miss_bytes: where every access misses (0 when unknown).
LineResult find_line(Measurer& m, int64_t size_bytes, int64_t full_miss_bytes = 0);

struct GeometryResult {
  Measured<int64_t> sets;
  Measured<int64_t> ways;
  Measured<std::string> set_mapping;     // "modulo" or "hashed"
  std::vector<uint64_t> strides;         // per power-of-two stride: most lines without misses
  std::vector<double> max_lines;
};
GeometryResult find_geometry(Measurer& m, int64_t size_bytes, int64_t line_bytes);
// Most lines spaced `stride` bytes apart that a chase holds without misses; `capped` says the
// path's footprint limit stopped the search first. `hint`: the count at the previous (half)
// stride, where the search starts.
uint64_t most_lines_without_misses(Measurer& m, uint64_t stride, uint64_t size_bytes, uint64_t line_bytes,
                                   bool* capped = nullptr, uint64_t hint = 0);

// The lines homed in the measuring SM's own partition of a cache whose partitions' homes a
// hash spreads: the chunks of `chunk_bytes` whose second load hits at the near latency, in
// order, as a line map whose planned footprints reach `reach_bytes` (or less where fewer chunks
// are near). `cache_bytes` sizes the batches of lines (a quarter of it). Empty map: why_not.
struct OwnLines {
  LineMap map;
  double near_cycles = 0, far_cycles = 0;  // raw hit cycles of the two levels
  std::string why_not;
};
OwnLines find_own_partition_lines(Measurer& m, uint32_t partitions, uint64_t chunk_bytes, uint64_t reach_bytes,
                                  uint64_t cache_bytes, uint64_t line_bytes);

// The line as find_line measures it, its capacities over the lines homed in the measuring SM's
// own partition (`own`, of `partitions` that share the size alike): the fetch unit from the
// whole size, the line from one partition's (the lines a stride apart of a hashed home spread
// unevenly over the partitions).
LineResult find_line_in_partition(Measurer& m, int64_t size_bytes, int64_t full_miss_bytes, const OwnLines& own,
                                  int64_t partitions);

struct PolicyResult {
  Measured<std::string> policy;          // lru, fifo, random, non_uniform
  std::vector<double> victim_probabilities;  // per fill position (non-LRU policies)
  double periodicity_strength = 0;
};
PolicyResult find_policy(Measurer& m, int64_t line_bytes, int64_t sets, int64_t ways);

struct LatencyResult {
  Measured<double> latency_cycles;       // load-to-use latency of a hit (docs/format.md)
  Measured<double> miss_penalty_cycles;  // next level's latency minus the hit latency
};
// size_bytes and line_bytes may be unknown (0): then the miss footprint is search_limit.
LatencyResult find_latency(Measurer& m, int64_t size_bytes, int64_t line_bytes);

// The load-to-use latency of a warm footprint: cycles per load of pointer chases
// (MT_PATTERN_POINTERS, MT_RECORD_TOTAL) over `chase` on the target's path, repeated on each
// of `sms` SMs at once (-1 entries: any free SM); the median over them.
double load_to_use_cycles(const Measurer& m, const recipes::Chase& chase, const std::vector<int32_t>& sms);

// Writes a Measured value under `key`; one not found is recorded absent with its note.
template <class T>
void report(const Context& ctx, const std::string& key, const Measured<T>& m) {
  if (!m.found) {
    ctx.absent(key, m.note.empty() ? "not determined" : m.note);
    return;
  }
  ctx.result(key, m.value, ResultInfo{m.confidence, m.bound, m.note});
}

}  // namespace memtopo::cache
