// cache-sharing/l2-slice-map: which SMs read which L2 lines faster, beyond an SM term plus a line
// term. As bench/l2_slice_latency.cu: one SM at a time (a sequence of jobs, one launch, so that
// no SM's loads meet another's and every SM reads the same buffer), a fine-grained .cg chase
// through lines that fit the near partition, an untimed pass (the first read, which leaves a
// copy near) and three timed ones, the least of the three per line. slice_map() finds the
// factor; docs/cache-probes.md, "The L2 slice map".
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/probe.hpp>

#include "slice_map.hpp"

namespace {

struct Matrix {
  std::vector<std::vector<double>> cycles;  // [sm][line]: least of the timed reads
  std::vector<int32_t> sm_of_row;
};

Matrix read_matrix(const memtopo::Context& ctx, uint64_t lines, uint64_t stride, uint64_t repeats) {
  const int32_t sms = ctx.device().sm_count;
  const auto a = memtopo::ChaseArray::stride(lines * stride, stride);
  std::vector<memtopo::Job> jobs;
  for (int32_t s = 0; s < sms; ++s) {
    memtopo::Job j;
    j.space = MT_SPACE_GLOBAL_CG;
    j.array = &a;
    j.sm = s;
    j.block = s;
    j.order = uint32_t(s + 1);
    j.warmup_steps = lines;
    j.steps = repeats * lines;
    j.want_index = false;
    jobs.push_back(j);
  }
  ctx.progress(0.1, "SMs in turn");
  const auto r = ctx.backend().run(jobs);
  Matrix m;
  for (size_t s = 0; s < r.size(); ++s) {
    if (r[s].latency.size() != repeats * lines)
      throw memtopo::Error("SM " + std::to_string(s) + "'s job returned " + std::to_string(r[s].latency.size()) +
                           " samples of " + std::to_string(repeats * lines));
    std::vector<double> least(lines, 1e300);
    for (size_t k = 0; k < r[s].latency.size(); ++k)
      least[k % lines] = std::min(least[k % lines], double(r[s].latency[k]));
    m.cycles.push_back(std::move(least));
    m.sm_of_row.push_back(r[s].sm >= 0 ? r[s].sm : int32_t(s));
  }
  return m;
}

// The report's heat maps: per SM by line class, and per SM by line with the lines ordered by
// class. Cycles above the least read, so that a colour scale from zero shows the classes.
void write_series(const memtopo::Context& ctx, const Matrix& m, const cache_sharing::SliceMap& map) {
  double least = 1e300;
  for (const auto& row : m.cycles) least = std::min(least, *std::min_element(row.begin(), row.end()));
  std::vector<double> by_class;
  for (size_t s = 0; s < m.cycles.size(); ++s)
    for (int64_t c = 0; c < 2; ++c) {
      const double v = c == map.class_of_sm[s] ? map.same_class_cycles[s] : map.other_class_cycles[s];
      by_class.insert(by_class.end(), {double(s), double(c), v, v - least});
    }
  ctx.raw("sm-by-line-class", {"sm", "line_class", "cycles", "cycles_above_least"}, by_class);
  std::vector<size_t> order(map.class_of_line.size());
  for (size_t l = 0; l < order.size(); ++l) order[l] = l;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return map.class_of_line[a] < map.class_of_line[b]; });
  std::vector<double> rows;
  for (size_t s = 0; s < m.cycles.size(); ++s)
    for (size_t rank = 0; rank < order.size(); ++rank) {
      const size_t l = order[rank];
      rows.insert(rows.end(), {double(s), double(l), double(rank), double(map.class_of_line[l]), m.cycles[s][l],
                               m.cycles[s][l] - least});
    }
  // scripts/l2-slice-model reads this file as it reads the bench's (sm, line, repeat_min).
  ctx.raw("sm-by-line", {"sm", "line", "line_by_class", "line_class", "repeat_min_cycles", "cycles_above_least"}, rows);
}

void store(memtopo::Context& ctx, const cache_sharing::SliceMap& map, uint64_t lines, uint64_t stride) {
  char how[320];
  std::snprintf(how, sizeof how,
                "each SM in turn re-reads %llu lines %llu B apart (.cg, least of the timed reads); an SM term plus a "
                "line term leave %.1f cycles s.d., the first factor %.0f %% of it (%.1f with it)",
                (unsigned long long)lines, (unsigned long long)stride, map.additive_residual_sd,
                100 * map.variance_fraction, map.factor_residual_sd);
  const memtopo::ResultInfo info{0.8, memtopo::Bound::Exact, how};
  ctx.result("l2.slice_class_of_sm", map.class_of_sm, memtopo::ResultInfo{0.8, memtopo::Bound::Exact,
                                                                           std::string(how) + "; class 0 is SM 0's"});
  ctx.result("l2.slice_class_sm_counts", map.sm_counts, info);
  const double n = double(map.class_of_line.size());
  ctx.result("l2.slice_line_class_fractions", std::vector<double>{map.line_counts[0] / n, map.line_counts[1] / n}, info);
  ctx.result("l2.slice_same_class_hit_latency_cycles", map.same_class_cycles, info);
  ctx.result("l2.slice_other_class_hit_latency_cycles", map.other_class_cycles, info);
  ctx.result("l2.slice_class_gap_cycles", map.gap_cycles, info);
  ctx.result("l2.slice_factor_variance_fraction", map.variance_fraction, info);
  ctx.result("l2.slice_map_fingerprint", map.fingerprint, info);
  const bool exact = map.granule_exact;
  ctx.result("l2.slice_line_granule_bytes", int64_t(map.granule_bytes),
             memtopo::ResultInfo{0.7, exact ? memtopo::Bound::Exact : memtopo::Bound::AtMost,
                                 exact ? "the largest aligned run of lines whose class nine runs in ten keep"
                                       : "no two neighbouring lines share a class nine times in ten: at most the "
                                         "stride read"});
}

// Whether the classes split the SMs as the near L2 partitions do: on an L2 whose far lines stay
// far (no copy near the reader), the first factor is the partition map, which its own probe
// reports. The H100's slice classes agree with its partitions on half the SMs.
bool is_partition_map(const memtopo::Context& ctx, const std::vector<int64_t>& classes) {
  const auto near = ctx.try_input<std::vector<int64_t>>("l2.near_partition_of_sm");
  if (!near || near->size() != classes.size()) return false;
  size_t same = 0;
  for (size_t s = 0; s < classes.size(); ++s) same += (*near)[s] == classes[s];
  return same == classes.size() || same == 0;
}

void measure_slice_map(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  if (ctx.device().sm_count < 2) throw memtopo::Skip("one SM: no SM reads a line faster than another");
  const uint64_t lines = uint64_t(ctx.option<int64_t>("lines"));
  const uint64_t stride = uint64_t(ctx.option<int64_t>("stride_bytes"));
  const uint64_t repeats = uint64_t(ctx.option<int64_t>("repeats"));
  if (stride % 32) throw memtopo::Error("stride_bytes " + std::to_string(stride) + " is no multiple of 32 B (a sector)");
  const Matrix m = read_matrix(ctx, lines, stride, repeats);
  for (size_t s = 0; s < m.sm_of_row.size(); ++s)
    if (m.sm_of_row[s] != int32_t(s)) throw memtopo::NotDeterminable("the job of SM " + std::to_string(s) + " ran on SM " + std::to_string(m.sm_of_row[s]));
  const cache_sharing::SliceMap map = cache_sharing::slice_map(m.cycles, stride);
  if (!map.class_of_line.empty()) write_series(ctx, m, map);
  if (!map.why_not.empty()) throw memtopo::NotDeterminable(map.why_not);
  if (is_partition_map(ctx, map.class_of_sm))
    throw memtopo::NotDeterminable("the SM side of the factor is the near L2 partition (l2.near_partition_of_sm): "
                                   "repeat reads of far lines stay far here, so the partitions, not slices, divide the reads");
  store(ctx, map, lines, stride);
}

}  // namespace

namespace cache_sharing {

memtopo::Probe l2_slice_map_probe() {
  using P = memtopo::Probe::Plot;
  return memtopo::Probe("cache-sharing/l2-slice-map")
      .roles({{"l2.slice_class_of_sm", "cache.slice_class_of_sm@l2_cache"},
              {"l2.slice_class_sm_counts", "cache.slice_class_sm_counts@l2_cache"},
              {"l2.slice_class_gap_cycles", "cache.slice_class_gap_cycles@l2_cache"},
              {"l2.slice_line_granule_bytes", "cache.slice_line_granule_bytes@l2_cache"}})
      .summary("The L2 slice map: which SMs read which lines faster, beyond an SM term plus a line term")
      .provides({"l2.slice_class_of_sm", "l2.slice_class_sm_counts", "l2.slice_line_class_fractions",
                 "l2.slice_same_class_hit_latency_cycles", "l2.slice_other_class_hit_latency_cycles",
                 "l2.slice_class_gap_cycles", "l2.slice_factor_variance_fraction", "l2.slice_line_granule_bytes",
                 "l2.slice_map_fingerprint"})
      .uses({"l2.near_partition_of_sm"})
      .key("l2.slice_class_of_sm", MT_VALUE_INT_ARRAY, "",
           "per SM, its L2 slice class: the side of the SMs x lines latency factor (0: SM 0's)", MT_KEY_CONFIGURATION)
      .key("l2.slice_class_sm_counts", MT_VALUE_INT_ARRAY, "", "SMs of slice class 0 and 1", MT_KEY_CONFIGURATION)
      // Which lines are class 0 follows the buffer's physical addresses (the slice hash), which
      // another allocation changes (docs/format.md, "Values that vary").
      .key("l2.slice_line_class_fractions", MT_VALUE_FLOAT_ARRAY, "",
           "the fractions of the lines read that class-0 SMs read faster (class 0) and slower (class 1)",
           MT_KEY_VARIES)
      .key("l2.slice_same_class_hit_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "per SM, the median near L2 hit (least of repeat .cg reads) of the lines of its own class")
      .key("l2.slice_other_class_hit_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "per SM, the median near L2 hit of the lines of the other class")
      .key("l2.slice_class_gap_cycles", MT_VALUE_FLOAT, "cycles",
           "the median over SMs of what the other class's lines cost more than their own class's", MT_KEY_HEADLINE)
      .key("l2.slice_factor_variance_fraction", MT_VALUE_FLOAT, "",
           "the share of the latency left by an SM term plus a line term that the slice classes explain")
      .key("l2.slice_line_granule_bytes", MT_VALUE_INT, "bytes", "the aligned address unit over which a line's class is constant")
      .key("l2.slice_map_fingerprint", MT_VALUE_STRING, "",
           "l2.slice_class_of_sm as hex, 4 SMs a digit: equal maps, equal text (like the GPCs, it differs "
           "between healthy GPUs of one model)",
           MT_KEY_CONFIGURATION)
      .not_replayed({"l2.slice_class_of_sm", "l2.slice_class_sm_counts", "l2.slice_line_class_fractions",
                     "l2.slice_same_class_hit_latency_cycles", "l2.slice_other_class_hit_latency_cycles",
                     "l2.slice_class_gap_cycles", "l2.slice_factor_variance_fraction", "l2.slice_line_granule_bytes",
                     "l2.slice_map_fingerprint"})
      .invariant(MT_INVARIANT_SUM_EQUALS, "l2.slice_class_sm_counts", "device.sm_count",
                 "every SM is in one of the two slice classes")
      .plot(P::heatmap("sm-by-line-class", "sm", "line_class", "cycles_above_least"))
      .plot(P::heatmap("sm-by-line", "line_by_class", "sm", "cycles_above_least"))
      .option("lines", MT_VALUE_INT, "2048", "lines each SM reads (2048 x 128 B: 256 KiB, within the near partition)")
      .range("16", "65536")
      .option("stride_bytes", MT_VALUE_INT, "128", "bytes between the lines read (the L2 line)")
      .range("32", "65536")
      .option("repeats", MT_VALUE_INT, "3", "timed reads of each line after the first; the least counts")
      .range("1", "16")
      .budget_seconds(20)
      .run(measure_slice_map);
}

}  // namespace cache_sharing
