// occupancy-roofline/divergence: FFMA throughput when each warp splits into 2 .. 32
// lane-dependent paths (paper 004, "Thread divergence"). Lane l takes path l % paths; every
// path runs the same FFMA chain, so a warp issues each path's instructions for only its lanes
// and the paths take turns. Measured with every warp the SM holds, where one path reaches the
// FFMA peak by occupancy alone. docs/occupancy-roofline.md.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "chains.hpp"
#include "launch_point.hpp"
#include "probes.hpp"
#include "roofline_analysis.hpp"

namespace occupancy_roofline {
namespace {

constexpr int kMaxPaths = 32;

namespace md = memtopo::device;

MEMTOPO_INLINE float ffma_chain(float x, float mul, float add, unsigned iterations) {
  for (unsigned i = 0; i < iterations; ++i) {
#pragma unroll
    for (unsigned u = 0; u < kBodyOps; ++u)
      ROOFLINE_STEP("fma.rn.f32 %0, %0, %1, %2;", x = x * mul + add, "+f"(x) : "f"(mul), "f"(add));
  }
  return x;
}

// One copy of the chain per path. Each copy's addend is a register of its own (f_path_step is 0
// at run time), so the compiler cannot merge the copies into one that every lane runs.
MEMTOPO_KERNEL void diverge_kernel(ChainArgs a) {
  MEMTOPO_SHARED_VAR(uint32_t, slot_word);
  const unsigned warp = md::thread_index() / kWarpSize, lane = md::thread_index() % kWarpSize, path = lane % a.paths;
  float x = a.f_add;
  md::sync_block();
  const unsigned long long t0 = md::clock_now();
#pragma unroll
  for (unsigned p = 0; p < unsigned(kMaxPaths); ++p)
    if (path == p) x = ffma_chain(x, a.f_mul, a.f_add + float(p) * a.f_path_step, a.iterations);
#if defined(__CUDA_ARCH__)
  __syncwarp();  // lane 0 reads the end clock only once every path of its warp is done
#endif
  const uint32_t folded = bits_of<uint32_t>(x);
  const unsigned long long t1 = md::clock_after(folded, md::shared_address(&slot_word));
  if (lane == 0) write_record(a, warp, t0, t1);
  md::keep_if(folded, a.sink, a.flag);
}

}  // namespace

void measure_divergence(memtopo::Context& ctx) {
  const mt_device_info& dev = ctx.device();
  const int warps = warp_counts(dev.max_threads_per_sm / kWarpSize, dev.max_threads_per_block / kWarpSize).back();
  const int ilp = 1;  // one chain per thread: the raw series' ilp column
  const unsigned iterations =
      unsigned(std::max<int64_t>(1, ctx.option<int64_t>("instructions_per_thread") / int64_t(kBodyOps)));
  const double ops_per_thread = double(iterations) * kBodyOps;

  md::Buffer<uint32_t> sink(ctx, 1);
  const Records records(ctx);
  ChainArgs args;
  args.iterations = iterations;
  args.sink = sink.get();
  const std::string name = "diverge_ffma";
  std::vector<DivergencePoint> points;
  for (int paths = 1; paths <= kMaxPaths && !ctx.cancelled(); paths *= 2) {
    args.paths = unsigned(paths);
    const auto r = run_point<diverge_kernel>(ctx, name, args, records, warps, ops_per_thread);
    if (!r) throw memtopo::Error("kernel " + name + ": " + std::to_string(warps) + " warps per SM do not fit");
    points.push_back({paths, r->ops_per_cycle});
    ctx.progress(double(points.size()) / 6.0, "paths " + std::to_string(paths));
  }
  const std::vector<double> slowdown = divergence_slowdowns(points);
  std::vector<int64_t> paths;
  std::vector<double> rates, rows;
  for (size_t i = 0; i < points.size(); ++i) {
    paths.push_back(points[i].paths);
    rates.push_back(points[i].ops_per_cycle);
    rows.insert(rows.end(), {double(points[i].paths), double(warps), double(ilp), points[i].ops_per_cycle,
                             i < slowdown.size() ? slowdown[i] : 0.0});
  }
  ctx.raw("divergence", {"paths", "warps", "ilp", "ops_per_cycle_per_sm", "slowdown"}, rows);
  if (points.size() < 2) return;  // cancelled
  const std::string where =
      "FFMA, lane l on path l % paths, " + std::to_string(warps) + " warps per SM (all the SM holds), one chain per thread";
  ctx.result("roofline.divergence_paths", paths, {1.0, memtopo::Bound::Exact, where});
  ctx.result("roofline.divergence_ops_per_cycle_per_sm", rates,
             {0.9, memtopo::Bound::Exact, where + ": thread instructions per cycle per SM, every lane's chains counted"});
  ctx.result("roofline.divergence_slowdown", slowdown,
             {0.9, memtopo::Bound::Exact, where + ": ops per cycle of one path over those of each path count"});
}

}  // namespace occupancy_roofline
