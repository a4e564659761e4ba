// The cache-measurement procedure shared by every cache probe (docs/cache-probes.md):
// size, fetch granularity, line, sets and ways, replacement policy, latency and miss
// penalty of one cache reached through one memory path. A probe picks the path and the
// element name; the steps live here once, so the L1, texture, read-only and constant
// probes cannot drift apart.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memtopo/probe.hpp"
#include "memtopo/recipes.hpp"

namespace memtopo::cache {

// What is measured and how far to look.
struct Target {
  mt_space space = MT_SPACE_GLOBAL_CA;
  std::string element;               // result prefix, e.g. "l1d"
  int32_t shared_carveout_percent = 0;  // 0: the largest L1 the device allows
  uint64_t stride_bytes = 32;        // size search stride (the smallest plausible fetch unit)
  uint64_t reference_bytes = 1024;   // a footprint far below any plausible size
  uint64_t latency_bytes = 0;        // footprint of the hit-latency chase (0: reference_bytes)
  uint64_t search_start_bytes = 1024;
  uint64_t search_limit_bytes = 16ull << 20;
  // Why the search stops there, for the note of an "at least" size (empty: the limit is
  // only a search range).
  std::string search_limit_reason;
  // Caches shared between SMs (L2, constant L1.5) must be measured one point at a time:
  // points on other SMs would fill the same cache.
  bool shared_between_sms = false;
  uint64_t max_record_steps = 8192;  // per point: loads recorded after the warm-up
  uint64_t max_footprint_bytes = 0;  // largest array the path accepts (constant: about 95 KiB); 0 = none
  // Loads the sets/ways stride scan may chase in all (0: no limit). A shared cache of many
  // MiB is searched one point at a time, hundreds of thousands of loads each; past the budget
  // the scan stops and says so.
  uint64_t geometry_load_budget = 0;
  // Timed loads per footprint of the occupancy measurement (find_occupancy).
  uint64_t occupancy_loads = uint64_t(1) << 24;
};

// How fast random loads come (Session::run_random): streams and gaps (ABI 1.4), or one timed
// stream and a pump (ABI 1.5).
struct LoadRate {
  uint32_t streams = 1;
  uint32_t gap_cycles = 0;
  uint32_t pump_warps = 0, pump_lanes = 0, pump_cycles = 0, probe_loads = 32;
  uint32_t pump_total() const { return pump_warps * pump_lanes; }
};

// Runs chase points, as many at once as the target allows (one per SM), and classifies
// their loads into hits and misses of the target's level.
class Session {
 public:
  Session(const Context& ctx, Target target);

  struct Point {
    recipes::Chase chase;
    uint64_t warmup_passes = 1;  // whole cycles chased before recording
    uint64_t record_steps = 0;   // 0: one whole cycle (capped by max_record_steps unless counted)
    // Count only misses that come back at the same element in another recorded pass (capacity
    // misses under LRU-like policies do; stray slow loads do not). Needs two recorded passes.
    bool recurring_only = false;
    // The caller needs only the counts (misses, miss_fraction, significant), not each load:
    // the loads are classified on the device (count_chase), so record_steps is not capped.
    bool counts_only = false;
    // The caller needs which loads missed (index, miss) but not their latencies: counted on
    // the device too, with the steps of the slow loads kept. `miss` then covers the loads up
    // to the last kept slow load when there were more slow loads than the backend keeps.
    bool miss_pattern = false;
  };
  struct Outcome {
    std::vector<uint32_t> index;   // empty for counts_only points
    std::vector<uint32_t> latency; // empty for counts_only and miss_pattern points
    std::vector<uint8_t> miss;   // per recorded load: 1 = missed the target level
    size_t loads = 0;            // loads classified
    size_t misses = 0;
    double miss_fraction = 0;
    bool significant = false;    // misses beyond what the reference's noise explains
    double cycles_per_load = 0;  // run_random: time per load of all its streams (and pump) together
  };

  // Measures every point; misses are classified against the hit level of the reference.
  std::vector<Outcome> run(const std::vector<Point>& points);
  Outcome run(const Point& point) { return run(std::vector<Point>{point})[0]; }

  const Target& target() const { return target_; }
  const Context& ctx() const { return ctx_; }
  double hit_latency_raw() const { return hit_centre_; }
  // Whether `misses` slow loads out of `loads` are more than noise would give.
  bool significant(size_t misses, size_t loads) const;
  // Whether `recurring` slow loads, each at an element slow in at least two of `passes` passes
  // over a cycle of `cycle` loads, are more than stray slow loads would give.
  bool significant_recurring(size_t recurring, uint64_t cycle, uint64_t passes) const;
  // Loads to uniformly random multiples of `stride` within `footprint` bytes (random_count):
  // `loads` timed after `warmup` untimed; outliers are left out of Outcome::loads.
  // `rate` says how fast they come: streams and gaps (ABI 1.4), or a pump (ABI 1.5).
  Outcome run_random(uint64_t footprint, uint64_t stride, uint64_t warmup, uint64_t loads, uint64_t seed,
                     const LoadRate& rate = {});
  int32_t pinned_sm() const;  // the SM every point of a shared cache runs on, or -1
  int parallel_points() const;
  size_t launches() const { return launches_; }
  uint64_t loads_chased() const { return loads_chased_; }  // warm-up included

 private:
  void calibrate();
  std::vector<Outcome> run_fine(const std::vector<Point>& points);
  std::vector<Outcome> run_counted(const std::vector<Point>& points);
  // Batches of points that run in one launch: one per SM at most, within the launch's memory.
  std::vector<std::pair<size_t, size_t>> batches(const std::vector<Point>& points) const;
  const Context& ctx_;
  Target target_;
  std::vector<double> reference_;  // hit latencies of the reference footprint
  double hit_centre_ = 0;
  double slow_threshold_ = 0;
  double ceiling_ = 0;             // slower loads are interruptions, not misses
  double slow_rate_ = 0;           // stray slow loads per load
  bool counting_ = false;          // the backend has count_chase
  size_t launches_ = 0;
  uint64_t loads_chased_ = 0;
};

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
SizeResult find_size(Session& s);

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
OccupancyResult find_occupancy(Session& s, int64_t first_miss_bytes, int64_t full_miss_bytes, int64_t line_bytes,
                               const std::vector<SizeCandidate>& candidates = {});

struct LineResult {
  Measured<int64_t> fetch_granularity_bytes;
  Measured<int64_t> line_bytes;
  bool path_limited = false;  // not determinable: the path cannot hold the footprints needed
};
// full_miss_bytes: where every access misses (0 when unknown).
LineResult find_line(Session& s, int64_t size_bytes, int64_t full_miss_bytes = 0);

struct GeometryResult {
  Measured<int64_t> sets;
  Measured<int64_t> ways;
  Measured<std::string> set_mapping;     // "modulo" or "hashed"
  std::vector<uint64_t> strides;         // per power-of-two stride: most lines without misses
  std::vector<double> max_lines;
};
GeometryResult find_geometry(Session& s, int64_t size_bytes, int64_t line_bytes);

struct PolicyResult {
  Measured<std::string> policy;          // lru, fifo, random, non_uniform
  std::vector<double> victim_probabilities;  // per fill position (non-LRU policies)
  double periodicity_strength = 0;
};
PolicyResult find_policy(Session& s, int64_t line_bytes, int64_t sets, int64_t ways);

struct LatencyResult {
  Measured<double> latency_cycles;       // hit, plain P-chase
  Measured<double> miss_penalty_cycles;  // next level's latency minus the hit latency
};
// size_bytes and line_bytes may be unknown (0): then the miss footprint is search_limit.
LatencyResult find_latency(Session& s, int64_t size_bytes, int64_t line_bytes);

// ------------------------------------------------------------------ probe factory

// One cache element as a set of probes, ordered by the keys they exchange:
//   <plugin>/<element>-size      -> size_bytes, full_miss_bytes
//   <plugin>/<element>-line      -> fetch_granularity_bytes, line_bytes  (needs size)
//   <plugin>/<element>-geometry  -> sets, ways, set_mapping              (needs size, line)
//   <plugin>/<element>-policy    -> replacement_policy, victim_probabilities (needs line, sets, ways)
//   <plugin>/<element>-latency   -> latency_cycles, miss_penalty_cycles  (needs size; uses line)
// With size_by_occupancy the size probe provides first_miss_bytes (the line and geometry
// probes need it instead of size_bytes), and
//   <plugin>/<element>-occupancy -> size_bytes                           (needs first miss, line)
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
};
std::vector<Probe> element_probes(const ElementSpec& spec);

// Writes a Measured value under "<element>.<key>" (nothing when not found).
template <class T>
void report(const Context& ctx, const std::string& key, const Measured<T>& m) {
  if (!m.found) {
    if (!m.note.empty()) ctx.warn(key + " not determined: " + m.note);
    return;
  }
  ctx.result(key, m.value, ResultInfo{m.confidence, m.bound, m.note});
}

}  // namespace memtopo::cache
