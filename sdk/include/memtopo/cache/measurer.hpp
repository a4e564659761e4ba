// The cache procedure's measuring instrument (docs/cache-probes.md): runs footprints on one
// memory path, as many at once as the cache allows (one per SM for per-SM caches), and
// classifies their loads into hits and misses of the level under test.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "memtopo/context.hpp"
#include "memtopo/recipes.hpp"

namespace memtopo::cache {

// Where a chase's lines go in the array: the k-th chunk of `chunk_bytes` of the footprints the
// steps plan goes to chunk chunks[k] of an array of `region_bytes` (every footprint in one
// array of that length, so that a backend hands it the same buffer each time). Empty: lines go
// where the steps plan them. The L2 of partitions with hashed homes: the chunks homed in the
// measuring SM's own partition, in order (find_own_partition_lines).
struct LineMap {
  uint64_t chunk_bytes = 0, region_bytes = 0;
  std::vector<uint64_t> chunks;
  bool empty() const { return chunks.empty(); }
  uint64_t reach_bytes() const { return chunks.size() * chunk_bytes; }  // of the planned footprints
  uint64_t place(uint64_t planned) const { return chunks[planned / chunk_bytes] * chunk_bytes + planned % chunk_bytes; }
};

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
  // Caches shared between SMs (L2, constant L1.5) are measured one footprint at a time:
  // footprints on other SMs would fill the same cache.
  bool shared_between_sms = false;
  uint64_t max_record_steps = 8192;  // per footprint: loads recorded after the warm-up
  uint64_t max_footprint_bytes = 0;  // largest array the path accepts (constant: about 95 KiB); 0 = none
  // Loads the sets/ways stride scan may chase in all (0: no limit). A shared cache of many
  // MiB is searched one footprint at a time, hundreds of thousands of loads each; past the
  // budget the scan stops and says so.
  uint64_t geometry_load_budget = 0;
  // Timed loads per footprint of the occupancy measurement (find_occupancy).
  uint64_t occupancy_loads = uint64_t(1) << 24;
  // Where the geometry steps' lines go (empty: where they plan them).
  LineMap line_map;
  // A cache in front of this one on the path that keeps the lines it serves (the constant L1
  // before the L1.5), with a modulo index: lines `set_stride_bytes` apart share one of its sets
  // of `ways` (0: none, or not known). The stride scans add lines of that set which fall into
  // other sets of this cache, so that the front keeps none of the scanned lines.
  struct Front {
    uint64_t set_stride_bytes = 0;
    uint64_t ways = 0;
    uint64_t line_bytes = 0;  // its line: a line of its set is visited again through another word
    bool random = false;  // its victims are random: more lines in that set
    uint64_t most_fillers = 0;  // the most lines a chase adds (0: as many as the front needs)
  } front;
};

// One footprint to measure: a chase and how its loads are judged.
struct Footprint {
  recipes::Chase chase;
  uint64_t warmup_passes = 1;  // whole cycles chased before recording
  uint64_t record_steps = 0;   // 0: one whole cycle (capped by max_record_steps unless counted)
  // Count only misses that come back at the same element in another recorded pass (capacity
  // misses under LRU-like policies do; stray slow loads do not). Needs two recorded passes.
  bool recurring_only = false;
  // The caller needs only the counts (misses, miss_fraction, significant), not each load:
  // the loads are classified on the device (MT_RECORD_COUNTS), so record_steps is not capped.
  bool counts_only = false;
  // The caller needs which loads missed (index, miss) but not their latencies: counted on
  // the device too, with the steps of the slow loads kept. `miss` then covers the loads up
  // to the last kept slow load when there were more slow loads than the backend keeps.
  bool miss_pattern = false;
};

struct FootprintResult {
  std::vector<uint32_t> index;   // empty for counts_only footprints
  std::vector<uint32_t> latency; // empty for counts_only and miss_pattern footprints
  std::vector<uint8_t> miss;     // per recorded load: 1 = missed the target level
  size_t loads = 0;              // loads classified
  size_t misses = 0;
  double miss_fraction = 0;
  bool significant = false;      // misses beyond what the reference's stray slow loads explain
  double cycles_per_load = 0;    // run_random: time per load of all its streams (and pump) together
};

// A footprint judged by the slow-load counts of whole passes (Footprint::counts_only).
Footprint counted_footprint(recipes::Chase chase, uint64_t warmup_passes, uint64_t counted_passes,
                            bool recurring_only = true);

class Measurer {
 public:
  // Calibrates: the hit level of the reference footprint, the slow-load threshold, the
  // ceiling above which a load is an interruption, and the rate of stray slow loads.
  Measurer(const Context& ctx, Target target);

  // Measures every footprint; misses are classified against the reference's hit level.
  std::vector<FootprintResult> run(const std::vector<Footprint>& footprints);
  FootprintResult run(const Footprint& footprint) { return run(std::vector<Footprint>{footprint})[0]; }
  // Loads to uniformly random multiples of `stride` within `footprint` bytes
  // (MT_PATTERN_RANDOM): `loads` timed after `warmup` untimed, at `rate`; outliers are left
  // out of FootprintResult::loads. `sms` > 1 (a per-SM cache only): the timed loads split over
  // that many SMs of one launch, each with its own warm-up and draws, their counts summed.
  FootprintResult run_random(uint64_t footprint, uint64_t stride, uint64_t warmup, uint64_t loads, uint64_t seed,
                             const Rate& rate = {}, int sms = 1);

  const Target& target() const { return target_; }
  // Later jobs run at this carveout; the calibration stands (a hit's latency does not depend
  // on how much of the array the L1 keeps).
  void set_carveout(int32_t percent) { target_.shared_carveout_percent = percent; }
  void set_line_map(LineMap map) { target_.line_map = std::move(map); }
  void set_front(Target::Front front) { target_.front = front; }
  const Context& ctx() const { return ctx_; }
  // Median raw cycles of a hit in the reference footprint (timing overhead included).
  double hit_latency_raw() const { return hit_centre_; }
  // The reference footprint's per-load raw cycles, and the cycles above which a load is an
  // interruption.
  const std::vector<double>& reference_samples() const { return reference_; }
  double ceiling() const { return ceiling_; }
  // Hits the counting calls slow (interruptions below the ceiling, noise past the threshold),
  // per load of the reference.
  double stray_slow_rate() const { return slow_rate_; }
  // Whether `misses` slow loads out of `loads` are more than stray slow loads would give.
  bool significant(size_t misses, size_t loads) const;
  // Whether `recurring` slow loads, each at an element slow in at least two of `passes`
  // passes over a cycle of `cycle` loads, are more than stray slow loads would give.
  bool significant_recurring(size_t recurring, uint64_t cycle, uint64_t passes) const;
  int32_t pinned_sm() const;  // the SM every footprint of a shared cache runs on, or -1
  // Per-SM caches: footprint i of a run() goes to SM sms[i % size] instead of any free one, so
  // that which SMs measure is the same in every run (empty: any free SM). A value that depends
  // on the SM's place (its distance from the L2 slices or the GPC's caches) then repeats.
  void pin_footprints(std::vector<int32_t> sms) { footprint_sms_ = std::move(sms); }
  // `n` SMs spread evenly over the SM numbers: 0, count/n, 2 count/n, ...
  std::vector<int32_t> spread_sms(size_t n) const;
  int parallel_footprints() const;  // footprints one launch runs at once (an SM each)
  // Streams a counted footprint (or `steps` loads over `array`) is split over, staggered
  // along its cycle (1: one chase; see measurer.cpp).
  uint32_t staggered_streams(const Footprint& f) const;
  uint32_t staggered_streams(const ChaseArray& array, uint64_t steps) const;
  size_t launches() const { return launches_; }
  uint64_t loads_chased() const { return loads_chased_; }  // warm-up included
  // The job that chases `chase` on the target's path (space, carveout, pinned SM, warm-up).
  Job job_for(const recipes::Chase& chase, uint64_t warmup_passes, uint64_t steps) const;

 private:
  void calibrate();
  std::vector<FootprintResult> run_recorded(const std::vector<Footprint>& footprints);
  // Runs the footprints' jobs a launch's worth at a time; `take` gets each footprint's index,
  // job and result.
  void run_batched(const std::vector<Footprint>& footprints, const std::function<Job(const Footprint&)>& make,
                   const std::function<void(size_t, const Job&, JobResult&)>& take);
  std::vector<FootprintResult> run_counted(const std::vector<Footprint>& footprints);
  void judge_counted(const Footprint& f, const JobResult& r, FootprintResult& o) const;
  void judge_recorded(const Footprint& f, FootprintResult& o) const;
  // Batches of footprints that run in one launch: one per SM at most, within the launch's memory.
  std::vector<std::pair<size_t, size_t>> batches(const std::vector<Footprint>& footprints) const;
  const Context& ctx_;
  Target target_;
  std::vector<double> reference_;  // hit latencies of the reference footprint
  double hit_centre_ = 0;
  double slow_threshold_ = 0;
  double ceiling_ = 0;             // slower loads are interruptions, not misses
  double slow_rate_ = 0;           // stray slow loads per load
  bool counting_ = false;          // the backend counts on the device (MT_CAP_COUNTS)
  std::vector<int32_t> footprint_sms_;  // pin_footprints
  size_t launches_ = 0;
  uint64_t loads_chased_ = 0;
};

}  // namespace memtopo::cache
