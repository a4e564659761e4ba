// occupancy-roofline: the analysis of Lemeire's occupancy roofline and pipeline model (paper
// 004), free of CUDA so that tests feed it modelled or recorded curves: the instruction types,
// the block shapes, per-SM rates from per-warp clock records, the adaptive sweep, and the peak,
// ridge point, completion and issue latencies it yields; thread-divergence slowdowns.
// docs/occupancy-roofline.md.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace occupancy_roofline {

constexpr int kWarpSize = 32;

// The instruction types; the numbers are the `op` column of the raw series.
enum class Op : int {
  Ffma = 0,
  Dfma = 1,
  Imad = 2,
  Sfu = 3,
  Hfma2 = 4,
  Hfma2Bf16 = 5,
  Cvt = 6,
  SharedLoad = 7,
  GlobalLoadL1 = 8,
  GlobalLoadL2 = 9,
  GlobalLoadDram = 10,
};

struct OpInfo {
  Op op;
  const char* name;  // key prefix: roofline.<name>_peak_ops_per_cycle_per_sm
  const char* ptx;   // the instruction of the chain
  const char* sass;  // what it compiles to
  int min_cc_major;  // the PTX needs this compute capability (0: any memtopo builds for)
};
const std::vector<OpInfo>& ops();
const OpInfo* find_op(const std::string& name);
// A load type (a pointer chain through shared memory or a level of the global memory), which
// occupancy-roofline/loads measures and the simulated GPU models; otherwise a compute type,
// which occupancy-roofline/instructions measures on a GPU only.
bool is_load(Op op);
// The keys of one type: "roofline.<name>_" + each suffix.
const std::vector<std::string>& key_suffixes();

// One point of a roofline: `warps` per SM, each thread `ilp` independent dependent chains,
// thread instructions per cycle per SM.
struct Point {
  int warps = 0;
  int ilp = 0;
  double ops_per_cycle = 0;
  int launches = 1;  // measurements the rate is the mean or median of (settled near the mark)
};

// Cycles between two instructions of one warp at that point: warps x 32 / ops per cycle. At one
// warp and ILP 1 this is the completion latency, at one warp and high ILP the issue latency.
double cycles_per_op(const Point& p);

// How `warps_per_sm` warps are launched: blocks of at most `max_block_warps` warps, as few as
// possible, all the same size.
struct BlockShape {
  int blocks_per_sm = 1;
  int warps_per_block = 1;
};
BlockShape block_shape(int warps_per_sm, int max_block_warps = kWarpSize);

// Warps per SM of the sweeps: 1, 2, 4, ... and the largest count whose blocks split it evenly.
std::vector<int> warp_counts(int max_warps_per_sm, int max_block_warps = kWarpSize);

// One warp's clock readings of a launch: its SM and %clock64 at its start and end.
struct WarpRecord {
  uint32_t sm = 0;
  uint64_t start = 0, end = 0;
};
struct SmRate {
  uint32_t sm = 0;
  int warps = 0;
  double ops_per_cycle = 0;
};
// Per SM: its warps' operations over the span from its first warp's start to its last warp's
// end (one SM clock, so the readings of its warps compare).
std::vector<SmRate> rates_per_sm(const std::vector<WarpRecord>& warps, double ops_per_warp);
// The median over the SMs that held exactly `warps` warps, with their count; the block
// scheduler may have put two blocks on one SM and none on another.
struct PooledRate {
  double ops_per_cycle = 0;
  int sms = 0;
};
std::optional<PooledRate> pooled_rate(const std::vector<SmRate>& rates, int warps);

struct SweepSettings {
  int max_warps = 64;                  // warps per SM the device holds
  std::vector<int> ilps = {1, 2, 4, 8};  // ascending
  double plateau_gain = 0.03;          // a doubling of warps that gains less ends a sweep
  double ridge_fraction = 0.95;        // Lemeire's ridge: the peak within 5 %
  double peak_pool = 0.03;             // the peak: the mean of the points this close to the most
  // A point this close to the ridge mark is measured again: the mean of two launches that agree
  // within settle_agreement, else the median of three. One launch decides the ridge within its
  // noise (DRAM loads on an H200: 2 % a launch).
  double settle_margin = 0.03;
  double settle_agreement = 0.005;
};

// Ops per cycle per SM at (warps, ilp); nullopt where that shape cannot run (it does not fit).
using Measure = std::function<std::optional<double>(int warps, int ilp)>;

// The adaptive sweep: one warp at every ILP (the latencies), warps doubling at the lowest ILP
// and at the widest ILP that fits until a doubling gains less than plateau_gain (the roofline),
// then the ILPs at the ridge warps upward until one reaches the ridge. Each point is measured
// once, but those within settle_margin of the mark, which are settled and the sweep walked again
// over the settled rates (measuring what it newly asks for) until no point near the mark is left
// unsettled.
std::vector<Point> sweep(const Measure& measure, const SweepSettings& s);

struct Summary {
  double peak_ops_per_cycle = 0;
  int ridge_warps = 0;  // fewest warps per SM at which some ILP reaches ridge_fraction of the peak
  int ridge_ilp = 0;    // the smallest ILP that does at ridge_warps
  // Where the rate at ridge_warps crosses the mark, interpolated in log2 of the ILP between the
  // ILP below ridge_ilp and ridge_ilp (ridge_ilp itself when it is the first measured): a point
  // at the mark moves it a little where the smallest ILP reaching it would jump.
  double ridge_ilp_crossing = 0;
  int ridge_ilp_below = 0;  // the measured ILP under the mark it was interpolated from (0: none)
  double ridge_below_fraction = 0, ridge_at_fraction = 0;  // their rates over the peak
  std::optional<int> ilp1_ridge_warps;  // the same at ILP 1 (the paper's occupancy ridge)
  double completion_latency_cycles = 0;  // one warp, ILP 1
  double issue_latency_cycles = 0;       // one warp, the highest ILP measured
  int issue_ilp = 0;
  // The highest ILP still hid no more than the completion latency (doubling it halved the
  // cycles): the issue latency is at most the value.
  bool issue_latency_at_most = false;
  bool issue_wider_ilp_slower = false;  // a wider ILP of one warp took more cycles per instruction
};
// Empty when the points lack one warp at ILP 1 or any rate.
std::optional<Summary> summarize(const std::vector<Point>& points, const SweepSettings& s);

// Throughput with the warp split into `paths` lane-dependent paths.
struct DivergencePoint {
  int paths = 1;
  double ops_per_cycle = 0;
};
// ops per cycle with one path over ops per cycle with each point's paths (1 without divergence);
// empty without a point of one path.
std::vector<double> divergence_slowdowns(const std::vector<DivergencePoint>& points);

}  // namespace occupancy_roofline
