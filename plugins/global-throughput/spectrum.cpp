// global-throughput/latency-spectrum: one .ca pointer chase whose non-uniform strides make its
// loads meet every level in one series (L1 hits, L2 hits near and far, TLB misses, DRAM), the
// latency histogram of its per-load samples, and each level's latency, share and name. Mei and
// Chu's spectrum (paper 001) with the levels told apart and named by design.
// docs/global-throughput.md, "Latency spectrum".
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>
#include <memtopo/recipes.hpp>

#include "probes.hpp"
#include "spectrum_analysis.hpp"
#include "spectrum_design.hpp"

namespace global_throughput {
namespace {

namespace an = memtopo::analysis;

using memtopo::analysis::KiB;
using memtopo::analysis::MiB;
// Without a measured L1 size: the L1 shares one array with shared memory on every GPU since
// Volta, so shared memory plus 64 KiB bounds it (Kepler's 48 KiB L1 beside 48 KiB too).
constexpr uint64_t kL1SlackBytes = 64 * KiB, kL1FloorBytes = 128 * KiB;
// Without a measured L1 TLB: pages past the largest L1 TLB of the shipped devices (32 entries),
// below the smallest L2 TLB (65), so that the TLB set misses the first level only.
constexpr uint64_t kDefaultTlbPages = 40;

template <class T>
T positive_or(const std::optional<T>& v, T fallback) {
  return v && *v > 0 ? *v : fallback;
}

// The TLB set: more pages than the L1 TLB has entries (a quarter more, at least 4), fewer than
// the L2 TLB holds. None where the tlb probe found no level within its whole sweep.
uint64_t tlb_pages(const memtopo::Context& ctx) {
  if (const int64_t set = ctx.option<int64_t>("tlb_pages"); set > 0) return uint64_t(set);
  if (const auto levels = ctx.try_input<int64_t>("tlb.level_count"); levels && *levels == 0) return 0;
  const auto entries = ctx.try_input<int64_t>("tlb.l1_entries");
  if (!entries || *entries <= 0) return kDefaultTlbPages;
  uint64_t pages = uint64_t(*entries) + std::max<uint64_t>(uint64_t(*entries) / 4, 4);
  if (const auto l2 = ctx.try_input<int64_t>("tlb.l2_entries"); l2 && *l2 > *entries + 8)
    pages = std::min(pages, uint64_t(*l2) - 8);  // room for the other segments' pages
  return pages;
}

SpectrumInputs inputs(const memtopo::Context& ctx) {
  SpectrumInputs in;
  const mt_device_info& dev = ctx.device();
  in.line_bytes = uint64_t(positive_or<int64_t>(ctx.try_input<int64_t>("l1d.line_bytes"), 128));
  const uint64_t l1_bound = std::max(uint64_t(std::max<int64_t>(dev.shared_per_sm_bytes, 0)) + kL1SlackBytes, kL1FloorBytes);
  in.l1_bytes = uint64_t(positive_or<int64_t>(ctx.try_input<int64_t>("l1d.size_bytes"), int64_t(l1_bound)));
  // The whole L2: the API's size where a probe measured less (the H100's near half).
  in.l2_bytes = uint64_t(std::max<int64_t>(ctx.try_input<int64_t>("l2.size_bytes").value_or(0), dev.l2_bytes));
  in.page_bytes = uint64_t(positive_or<int64_t>(ctx.try_input<int64_t>("tlb.l1_page_bytes"), int64_t(2 * MiB)));
  in.tlb_pages = tlb_pages(ctx);
  in.rounds = uint64_t(std::max<int64_t>(ctx.option<int64_t>("rounds"), 1));
  in.max_footprint_bytes = uint64_t(std::max<int64_t>(ctx.option<int64_t>("max_footprint_bytes"), 1));
  return in;
}

// Load-to-use latency of the hot set's lines: pointer chases of 128 and 384 loads, 16 of each
// on up to 8 SMs at once; the difference leaves out what every chase pays once.
double hot_chase_latency(const memtopo::Context& ctx, const SpectrumDesign& d, uint64_t line, std::vector<double>& rows) {
  const auto chase = memtopo::recipes::constant_stride(d.hot_lines * line, line);
  memtopo::Job p;
  p.space = MT_SPACE_GLOBAL_CA;
  p.shared_carveout_percent = 0;
  p.pattern = MT_PATTERN_POINTERS;
  p.record = MT_RECORD_TOTAL;
  p.array = &chase.array;
  p.start = chase.start;
  p.warmup_steps = 2 * chase.cycle_length();
  auto median_time = [&](uint64_t loads) {
    p.steps = loads;
    const std::vector<memtopo::Job> jobs(size_t(std::clamp(ctx.device().sm_count, 1, 8)), p);
    std::vector<double> times;
    for (int k = 0; k < 16; ++k)
      for (const memtopo::JobResult& x : ctx.backend().run(jobs)) times.push_back(double(x.cycles));
    const double m = an::median(times);
    rows.insert(rows.end(), {double(loads), m});
    return m;
  };
  const double shorter = median_time(128), longer = median_time(384);
  return (longer - shorter) / 256.0;
}

// Each timed load's segment, from the element it loaded (out_index): the chase must have gone
// where the design says.
std::vector<Segment> segments_of(const SpectrumDesign& d, const memtopo::recipes::Chase& chase,
                                 const memtopo::JobResult& r) {
  std::vector<Segment> seg(r.index.size());
  for (size_t k = 0; k < r.index.size(); ++k) {
    const uint32_t want = chase.order.at(d.warmup_steps + k);
    if (r.index[k] != want || !d.segment_of(r.index[k], seg[k]))
      throw memtopo::Error("timed load " + std::to_string(k) + " loaded element " + std::to_string(r.index[k]) +
                           "; the chase visits element " + std::to_string(want) + " there");
  }
  return seg;
}

void store_raw(const memtopo::Context& ctx, const Spectrum& s, const std::vector<double>& cycles,
               const std::vector<Segment>& seg, const memtopo::JobResult& r, const std::vector<double>& chase_rows) {
  std::vector<double> rows;
  for (const HistogramBin& b : histogram(cycles)) rows.insert(rows.end(), {b.cycles, double(b.loads)});
  ctx.raw("histogram", {"cycles", "loads"}, rows);
  rows.clear();
  for (size_t k = 0; k < cycles.size(); ++k)
    rows.insert(rows.end(), {double(k), double(r.index[k]), cycles[k], double(seg[k]), double(s.level_of[k])});
  ctx.raw("samples", {"step", "element", "cycles", "segment", "level"}, rows);
  rows.clear();
  for (size_t i = 0; i < s.levels.size(); ++i) {
    const SpectrumLevel& l = s.levels[i];
    rows.insert(rows.end(), {double(i), l.sample_cycles, l.latency_cycles, l.share});
    for (size_t k = 0; k < kSegments; ++k) rows.push_back(double(l.loads_of[k]));
  }
  ctx.raw("levels", {"level", "sample_cycles", "latency_cycles", "share", "l1_loads", "l2_loads", "tlb_loads", "dram_loads"},
          rows);
  ctx.raw("hot-chase", {"loads", "median_cycles"}, chase_rows);
}

void store_results(const memtopo::Context& ctx, const Spectrum& s, const memtopo::ResultInfo& info) {
  std::vector<double> latency, sample, share;
  std::vector<std::string> names;
  for (const SpectrumLevel& l : s.levels) {
    latency.push_back(l.latency_cycles);
    sample.push_back(l.sample_cycles);
    share.push_back(l.share);
    names.push_back(l.name);
  }
  ctx.result("spectrum.level_latencies_cycles", latency, info);
  ctx.result("spectrum.level_sample_cycles", sample, info);
  ctx.result("spectrum.level_shares", share, info);
  ctx.result("spectrum.level_names", names, info);
  ctx.result("spectrum.timing_cost_cycles", s.timing_cost_cycles, info);
  ctx.result("spectrum.loads", int64_t(s.loads), info);
  ctx.result("spectrum.outlier_share", s.loads ? double(s.outliers) / double(s.loads) : 0.0, info);
  std::string found;
  for (const std::string& n : names) found += (found.empty() ? "" : ", ") + n;
  const std::string none = "the spectrum has no such level (its levels: " + (found.empty() ? "none" : found) + ")";
  auto put = [&](const std::string& key, const SpectrumLevel* l) {
    if (l) ctx.result("spectrum." + key, l->latency_cycles, info);
    else ctx.absent("spectrum." + key, none);
  };
  put("l1_latency_cycles", s.first(Segment::L1));
  put("l2_latency_cycles", s.first(Segment::L2));
  put("l2_far_latency_cycles", s.named("l2_far"));
  put("tlb_miss_latency_cycles", s.first(Segment::Tlb));
  put("dram_latency_cycles", s.first(Segment::Dram));
  put("dram_far_latency_cycles", s.named("dram_far"));
  const SpectrumLevel *tlb = s.first(Segment::Tlb), *l2 = s.first(Segment::L2);
  if (tlb && l2 && tlb->latency_cycles > l2->latency_cycles)
    ctx.result("spectrum.tlb_miss_penalty_cycles", tlb->latency_cycles - l2->latency_cycles, info);
  else
    ctx.absent("spectrum.tlb_miss_penalty_cycles",
               !tlb || !l2 ? none + ": it needs a TLB-miss and an L2 level" : "the TLB-miss level is not slower than the L2's");
}

void measure_spectrum(memtopo::Context& ctx) {
  for (const auto& [cap, what] : {std::pair{MT_CAP_SAMPLES, "per-load samples"}, std::pair{MT_CAP_POINTERS, "pointer chases"},
                                  std::pair{MT_CAP_TOTAL, "whole-chase timing"}})
    if (!ctx.backend().has(cap)) throw memtopo::Skip(std::string("the backend runs no ") + what);
  const SpectrumInputs in = inputs(ctx);
  const SpectrumDesign d = design_spectrum(in);
  for (const std::string& n : d.notes) ctx.info(n);  // a limit of the design, kept in the result's note
  ctx.progress(0.1, "the chase");
  const auto chase = memtopo::recipes::from_byte_offsets(d.offsets, d.footprint_bytes);
  memtopo::Job job;
  job.space = MT_SPACE_GLOBAL_CA;
  job.shared_carveout_percent = 0;  // the largest L1
  job.sm = 0;  // one SM every run: the L2's modes depend on the distance from the SM to the lines' slices
  job.array = &chase.array;
  job.start = chase.start;
  job.warmup_steps = d.warmup_steps;
  job.steps = d.steps;
  const memtopo::JobResult r = ctx.backend().run(job);
  const std::vector<Segment> seg = segments_of(d, chase, r);
  ctx.progress(0.7, "the hot set's load-to-use latency");
  std::vector<double> chase_rows;
  const double hot = hot_chase_latency(ctx, d, in.line_bytes, chase_rows);
  const std::vector<double> cycles = an::to_doubles(r.latency);
  const Spectrum s = analyse_spectrum(cycles, seg, hot);
  ctx.debug("timing cost " + std::to_string(s.timing_cost_cycles) + " cycles; timing_overhead() (a register move) " +
            std::to_string(ctx.backend().timing_overhead()));
  store_raw(ctx, s, cycles, seg, r, chase_rows);
  if (!s.found) throw memtopo::NotDeterminable("no latency level in " + std::to_string(cycles.size()) + " loads: " + s.reason);
  std::string note = "one .ca chase of " + std::to_string(d.steps) + " timed loads (" + std::to_string(in.rounds) +
                     " rounds: 2 of " + std::to_string(d.hot_lines) + " hot lines, 1 of " + std::to_string(d.l2_lines) +
                     " L2 lines, ";
  if (d.tlb_pages) note += "1 of " + std::to_string(d.tlb_pages) + " pages, ";
  note += "1 fresh line); levels split at gaps of 4 %, less the timing cost against a pointer chase of the hot lines";
  for (const std::string& n : d.notes) note += "; " + n;
  store_results(ctx, s, memtopo::ResultInfo{0.8, memtopo::Bound::Exact, note});
}

}  // namespace

memtopo::Probe latency_spectrum_probe() {
  const char* attributed = "; named from the segment of the chase its loads belong to (docs/global-throughput.md)";
  return memtopo::Probe("global-throughput/latency-spectrum")
      .roles({{"spectrum.l1_latency_cycles", "cache.chase_latency_cycles@l1_cache"},
              {"spectrum.l2_latency_cycles", "cache.chase_latency_cycles@l2_cache"},
              {"spectrum.l2_far_latency_cycles", "cache.chase_far_latency_cycles@l2_cache"},
              {"spectrum.tlb_miss_latency_cycles", "translation.chase_miss_latency_cycles"},
              {"spectrum.dram_latency_cycles", "memory.chase_latency_cycles@main"},
              {"spectrum.dram_far_latency_cycles", "memory.chase_far_latency_cycles@main"}})
      .summary("The latency levels one .ca chase meets (L1, L2 near and far, TLB misses, DRAM), with their shares")
      .plot(memtopo::Probe::Plot::bars("histogram", "cycles", "loads")
                .marks("x:spectrum.level_sample_cycles@spectrum.level_names"))
      .plot(memtopo::Probe::Plot::bars("levels", "", "latency_cycles").annotated("share").named("@spectrum.level_names"))
      .provides({"spectrum.level_latencies_cycles", "spectrum.level_sample_cycles", "spectrum.level_shares",
                 "spectrum.level_names", "spectrum.timing_cost_cycles", "spectrum.loads", "spectrum.outlier_share",
                 "spectrum.l1_latency_cycles", "spectrum.l2_latency_cycles", "spectrum.l2_far_latency_cycles",
                 "spectrum.tlb_miss_latency_cycles", "spectrum.tlb_miss_penalty_cycles", "spectrum.dram_latency_cycles",
                 "spectrum.dram_far_latency_cycles"})
      .uses({"l1d.size_bytes", "l1d.line_bytes", "l2.size_bytes", "tlb.level_count", "tlb.l1_entries",
             "tlb.l1_page_bytes", "tlb.l2_entries"})
      // Levels are one per distance (spectrum_analysis.cpp), the same in every run; what the
      // run's pages pick still moves the shares of near and far DRAM homes, and the timing cost
      // is a difference of half-cycle medians (docs/format.md, "Values that vary").
      .key("spectrum.level_latencies_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "load-to-use latency of each level of the chase's per-load latencies, ascending", MT_KEY_HEADLINE)
      .key("spectrum.level_sample_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "interquartile mean raw sample of each level, the timing's own cost "
           "included")
      .key("spectrum.level_shares", MT_VALUE_FLOAT_ARRAY, "", "each level's share of the timed loads",
           MT_KEY_VARIES)
      .key("spectrum.level_names", MT_VALUE_STRING_ARRAY, "",
           "each level's name: l1, l2, tlb_miss, dram, with _near/_far or _1, _2 where a kind has several; other",
           MT_KEY_HEADLINE | MT_KEY_STRUCTURE)
      .key("spectrum.timing_cost_cycles", MT_VALUE_FLOAT, "cycles",
           "what a timed sample adds to a load-to-use latency: the L1 level against a pointer chase",
           MT_KEY_VARIES)
      .key("spectrum.loads", MT_VALUE_INT, "", "timed loads of the chase")
      .key("spectrum.outlier_share", MT_VALUE_FLOAT, "", "share of the timed loads in no level (interrupted loads)",
           MT_KEY_VARIES)
      .key("spectrum.l1_latency_cycles", MT_VALUE_FLOAT, "cycles", std::string("the fastest L1 level") + attributed)
      .key("spectrum.l2_latency_cycles", MT_VALUE_FLOAT, "cycles", std::string("the fastest (near) L2 level") + attributed)
      .key("spectrum.l2_far_latency_cycles", MT_VALUE_FLOAT, "cycles", std::string("the far L2 level") + attributed)
      .key("spectrum.tlb_miss_latency_cycles", MT_VALUE_FLOAT, "cycles",
           std::string("the fastest level of L2 hits that miss the first TLB level") + attributed)
      .key("spectrum.tlb_miss_penalty_cycles", MT_VALUE_FLOAT, "cycles",
           "the fastest TLB-miss level less the fastest L2 level: what missing the first TLB level adds")
      .key("spectrum.dram_latency_cycles", MT_VALUE_FLOAT, "cycles", std::string("the fastest DRAM level") + attributed)
      .key("spectrum.dram_far_latency_cycles", MT_VALUE_FLOAT, "cycles",
           std::string("DRAM through the far L2 partition") + attributed)
      .option("rounds", MT_VALUE_INT, "512", "timed rounds; each loads 2 hot lines, an L2 line, a TLB page and a fresh line")
      .range("1", "65536")
      .option("tlb_pages", MT_VALUE_INT, "0",
              "pages of the TLB set; 0: the L1 TLB's entries and a quarter where measured, else 40")
      .range("0", "1048576")
      .option("max_footprint_bytes", MT_VALUE_INT, "268435456", "the largest chase array (host memory, 4 B per element)")
      .range("4096", "17179869184")
      .budget_seconds(60)
      .run(measure_spectrum);
}

}  // namespace global_throughput
