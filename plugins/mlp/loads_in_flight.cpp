// mlp/loads-in-flight: how many loads one SM and one warp keep in flight before latency grows,
// for loads the L2 answers and loads DRAM answers. Random .cg loads, one per line, in 1 .. 1024
// independent dependent chains (lane 0 of up to 32 warps, then more lanes of each); each point
// (with max_chains above 1024, then up to 8 chains per lane in lockstep) gives a load's latency
// with that many chains loading, so chains / latency loads per cycle,
// and Little's law gives the loads in flight where that levels off (paper 002's MSHR count).
// docs/mlp.md.
#include <algorithm>
#include <cmath>
#include <string>

#include <memtopo/probe.hpp>

#include "chains_run.hpp"
#include "mlp_analysis.hpp"

namespace mlp {
namespace {

constexpr uint64_t kLine = 128;
constexpr uint64_t kMinLoads = 8192;  // timed loads of a point at least (few chains: long chains)
constexpr double kIssueBound = 0.8;  // the span's rate below this share of chains / latency: chains idled

struct Level {
  const char* name;        // "l2", "dram"
  uint64_t footprint = 0;  // bytes the random loads spread over
  uint64_t warm_loads = 0; // loads before timing (the L2's lines brought in)
};

// `ceiling`: raw cycles above which a load is an interruption, left out (0: none).
Point measure(const memtopo::Context& ctx, const Level& lv, const Shape& s, uint64_t per_chain, double overhead,
              double ceiling) {
  const uint64_t chains = s.chains();
  ChainsLaunch l;
  l.warps = s.warps;
  l.lanes = s.lanes;
  l.lane_chains = s.lane_chains;
  l.footprint_bytes = lv.footprint;
  l.ceiling_cycles = uint32_t(std::min(ceiling, 4e9));
  // Whole steps of every chain: chains of one lane share the loads equally.
  const uint64_t warm = (std::max(lv.warm_loads, 8 * chains) + chains - 1) / chains * chains;
  // Chains per lane: four times the loads, so that the warm-up's spread is small in the span.
  const uint64_t timed = per_chain * (s.lane_chains > 1 ? 4 : 1);
  const uint64_t steps = (std::max<uint64_t>(timed * chains, kMinLoads) + chains - 1) / chains * chains;
  l.warmup_steps = warm / chains;
  l.steps = steps / chains;
  // Chains that end their timed steps early go on loading, untimed, so that the others' last
  // steps do not have the queues to fewer (docs/mlp.md, "Chains away, chains done").
  l.cool_steps = chains > 1 ? l.steps : 0;
  const ChainsRun r = run_chains(ctx, l);
  // Each load's own cycles, timed by its chain while the others load: the latency at this many
  // chains. When the chains always have a load out, they make chains / latency loads per cycle.
  // But between two groups a lane of several chains computes as many next addresses, and many
  // warps of it compete for the schedulers' issue slots: where the span (first timed load to
  // the last one's end) says such chains made less than 80 % of that, the span's rate is the
  // rate. The span alone would not do: the chains end their warm-up shares at different times.
  // One lane's chains are all out during its groups whatever it does between them.
  Point p;
  p.chains = double(chains);
  p.loads = double(steps - std::min(r.outliers, steps));
  p.latency = std::max(1.0, double(r.cycles) / std::max(p.loads, 1.0) - overhead);
  // The chains an interruption did not keep away, on average (present_chains()).
  p.per_cycle = (r.present_chains > 0 ? r.present_chains : p.chains) / p.latency;
  // The span's rate is kept in the raw series at every point, as a check on the windows' rate.
  if (r.span_cycles) p.span_per_cycle = double(steps) / double(r.span_cycles);
  if (p.span_per_cycle > 0 && s.lane_chains > 1 && s.warps * s.lanes > 1 &&
      p.span_per_cycle < kIssueBound * p.per_cycle)
    p.per_cycle = p.span_per_cycle;
  p.requests_per_load = requests_per_load(s.lanes, double(lv.footprint / kLine));
  return p;
}

std::vector<Point> sweep(memtopo::Context& ctx, const Level& lv, const std::vector<Shape>& shapes, const std::string& tag,
                         uint64_t per_chain) {
  const double overhead = ctx.backend().timing_overhead();
  std::vector<Point> curve;
  std::vector<double> rows;
  // Interruptions (a load 4 times slower than the last point's latency) would lengthen the
  // unqueued latency more, in proportion, than a queued one. The chains double from point to
  // point and the throughput does not fall, so a load's mean latency at most doubles: the
  // ceiling stays twice this point's mean or more. A pilot point without a ceiling gives the
  // first ceiling.
  const Point pilot = measure(ctx, lv, shapes.front(), per_chain, overhead, 0);
  for (const Shape& s : shapes) {
    const Point& last = curve.empty() ? pilot : curve.back();
    const double ceiling = 4 * (last.latency + overhead);
    curve.push_back(measure(ctx, lv, s, per_chain, overhead, ceiling));
    const Point& p = curve.back();
    rows.insert(rows.end(), {double(s.warps), double(s.lanes), double(s.lane_chains), p.chains, p.latency,
                             1000 * p.per_cycle, 1000 * p.span_per_cycle});
  }
  ctx.raw(tag, {"warps", "lanes", "lane_chains", "chains", "cycles_per_load", "loads_per_kcycle", "span_loads_per_kcycle"},
          rows);
  return curve;
}

void report(memtopo::Context& ctx, const std::string& key, const InFlight& f, const std::string& what) {
  const memtopo::ResultInfo info{0.8, f.saturated ? memtopo::Bound::Exact : memtopo::Bound::AtLeast,
                                 what + ": " + f.note};
  ctx.result(key, int64_t(f.saturated ? std::llround(f.loads) : std::floor(f.least_loads)), info);
}

void measure_in_flight(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_KERNELS)) throw memtopo::Skip("the backend runs no probe kernels (MT_CAP_KERNELS)");
  // The device's stated L2 first: the measured size (one partition on a GPU that keeps far
  // lines near) exists only where the L2 probes ran, and the footprints, with them the DRAM
  // latency (the TLB's reach), must not depend on which other probes ran.
  const int64_t stated = ctx.device().l2_bytes;
  const uint64_t l2 = uint64_t(stated > 0 ? stated : ctx.try_input<int64_t>("l2.size_bytes").value_or(0));
  if (l2 == 0) throw memtopo::Skip("no L2 size known");
  const uint64_t per_chain = uint64_t(ctx.option<int64_t>("loads_per_chain"));
  // A quarter of the L2 (random lines stay in it), brought in by eight loads per line first
  // (a line no draw touched stays out with e^-8). For DRAM 64 times the L2, after twice the
  // L2's lines: one load in 64 still hits, at every point alike, rather than fewer at the points
  // of few loads. Loads of the other level would queue at its limit and blur this one's.
  const Level l2_level{"l2", std::max<uint64_t>(l2 / 4 / kLine * kLine, 64 * kLine), 8 * (l2 / 4 / kLine)};
  const Level dram_level{"dram", 64 * l2, 2 * (l2 / kLine)};
  const int threads = ctx.device().max_threads_per_block > 0 ? ctx.device().max_threads_per_block : 1024;
  const unsigned warps = std::min(unsigned(threads) / 32, 32u);
  const unsigned lane_chains = 8;
  const auto shapes = sm_shapes(warps, unsigned(ctx.option<int64_t>("max_chains")), lane_chains);
  const std::vector<Point> sm_l2 = sweep(ctx, l2_level, shapes, "sm_l2", per_chain);
  ctx.progress(0.4, "DRAM");
  const std::vector<Point> sm_dram = sweep(ctx, dram_level, shapes, "sm_dram", per_chain);
  ctx.progress(0.8, "one warp");
  const std::vector<Point> warp_l2 = sweep(ctx, l2_level, warp_shapes(), "warp_l2", per_chain);
  const InFlight f2 = loads_in_flight(sm_l2), fd = loads_in_flight(sm_dram), fw = loads_in_flight(warp_l2);
  report(ctx, "mlp.sm_l2_loads_in_flight", f2, "L2 hits of one SM");
  report(ctx, "mlp.sm_dram_loads_in_flight", fd, "DRAM loads of one SM");
  report(ctx, "mlp.warp_l2_loads_in_flight", fw, "L2 hits of one warp's lanes");
  if (lane_chains > 1) {
    ctx.progress(0.9, "one thread");
    const InFlight ft = loads_in_flight(sweep(ctx, l2_level, thread_shapes(lane_chains), "thread_l2", per_chain));
    report(ctx, "mlp.thread_l2_loads_in_flight", ft, "L2 hits of one thread's chains, issued back to back");
  }
  const memtopo::ResultInfo lat{0.9, memtopo::Bound::Exact, "one chain of random .cg loads, one per line"};
  ctx.result("mlp.sm_l2_latency_cycles", f2.latency, lat);
  ctx.result("mlp.sm_dram_latency_cycles", fd.latency, lat);
  const memtopo::ResultInfo thr{0.8, memtopo::Bound::Exact, "the most loads per 1000 cycles of one SM's chains"};
  ctx.result("mlp.sm_l2_loads_per_kcycle", 1000 * f2.per_cycle, thr);
  ctx.result("mlp.sm_dram_loads_per_kcycle", 1000 * fd.per_cycle, thr);
}

}  // namespace

memtopo::Probe loads_in_flight_probe() {
  return memtopo::Probe("mlp/loads-in-flight")
      .roles({{"mlp.sm_l2_loads_in_flight", "cache.sm_loads_in_flight@l2_cache"},
              {"mlp.sm_dram_loads_in_flight", "memory.sm_loads_in_flight@main"},
              {"mlp.warp_l2_loads_in_flight", "cache.warp_loads_in_flight@l2_cache"},
              {"mlp.thread_l2_loads_in_flight", "cache.thread_loads_in_flight@l2_cache"},
              {"mlp.sm_l2_latency_cycles", "cache.loaded_latency_cycles@l2_cache"},
              {"mlp.sm_dram_latency_cycles", "memory.loaded_latency_cycles@main"}})
      .summary("Loads one SM and one warp keep in flight before latency grows, to the L2 and to DRAM")
      .provides({"mlp.sm_l2_loads_in_flight", "mlp.sm_dram_loads_in_flight", "mlp.warp_l2_loads_in_flight",
                 "mlp.thread_l2_loads_in_flight",
                 "mlp.sm_l2_latency_cycles", "mlp.sm_dram_latency_cycles", "mlp.sm_l2_loads_per_kcycle",
                 "mlp.sm_dram_loads_per_kcycle"})
      .uses({"l2.size_bytes"})
      .replays("mlp.sm_l2_loads_in_flight", "sim.memory.sm_l2_requests_in_flight")
      .replays("mlp.sm_dram_loads_in_flight", "sim.memory.sm_dram_requests_in_flight")
      // Little's law on measured rates: integers that estimate, compared within a tolerance.
      .key("mlp.sm_l2_loads_in_flight", MT_VALUE_INT, "", "L2 hits one SM keeps in flight (throughput x latency at the limit)",
           MT_KEY_ESTIMATE | MT_KEY_HEADLINE)
      .key("mlp.sm_dram_loads_in_flight", MT_VALUE_INT, "", "loads to DRAM one SM keeps in flight",
           MT_KEY_ESTIMATE | MT_KEY_HEADLINE)
      .key("mlp.warp_l2_loads_in_flight", MT_VALUE_INT, "", "L2 hits the lanes of one warp keep in flight", MT_KEY_ESTIMATE)
      .key("mlp.thread_l2_loads_in_flight", MT_VALUE_INT, "", "L2 hits one thread keeps in flight (up to 8 chains)",
           MT_KEY_ESTIMATE)
      .key("mlp.sm_l2_latency_cycles", MT_VALUE_FLOAT, "cycles", "one chain's cycles per random L2 hit (.cg)")
      .key("mlp.sm_dram_latency_cycles", MT_VALUE_FLOAT, "cycles", "one chain's cycles per random DRAM load (.cg)")
      .key("mlp.sm_l2_loads_per_kcycle", MT_VALUE_FLOAT, "", "most L2 hits per 1000 cycles of one SM, one per line")
      .key("mlp.sm_dram_loads_per_kcycle", MT_VALUE_FLOAT, "", "most DRAM loads per 1000 cycles of one SM, one per line")
      .option("max_chains", MT_VALUE_INT, "1024",
              "most independent chains on the SM: 32 warps x 32 lanes, and up to 8192 with chains per lane (docs/mlp.md)")
      .range("1", "8192")
      .option("loads_per_chain", MT_VALUE_INT, "64", "timed loads of each chain")
      .range("1", "65536")
      .budget_seconds(60)
      .run(measure_in_flight);
}

}  // namespace mlp

MEMTOPO_PLUGIN("mlp", "1.1.0", mlp::loads_in_flight_probe())
