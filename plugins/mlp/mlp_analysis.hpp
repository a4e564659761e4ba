// mlp: loads in flight from latency and throughput against independent chains (Little's law),
// free of measurement so that tests feed it modelled or recorded curves. docs/mlp.md.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace mlp {

// One point: `chains` independent dependent chains of loads on one SM, each load's latency
// (cycles per load of one chain) and the loads per cycle of all of them.
struct Point {
  double chains = 0, latency = 0, per_cycle = 0;
  double loads = 0;  // timed loads behind the latency
  double span_per_cycle = 0;  // timed loads over the job's span (0: not measured)
  // Requests of the queues per load: a warp instruction's loads to one line are one request.
  double requests_per_load = 1;
};

struct InFlight {
  double latency = 0;      // a load's cycles while chains do not queue
  double per_cycle = 0;    // loads per cycle at the plateau (the points within 3 % of the most)
  double loads = 0;        // requests per cycle x latency: loads in flight at the most throughput
  // Requests per cycle x the fastest point's latency: what a lower bound may claim where the
  // limit was not reached (the pooled latency of near and far lines may stand above the time
  // the most throughput's loads took).
  double least_loads = 0;
  bool saturated = false;  // throughput levelled off and latency grew: `loads` is the limit
  std::string note;
};

// Little's law over a curve of growing chain counts. The unloaded latency pools the points
// within 10 % of the fastest, weighted by their loads. The limit is seen when the last point's
// throughput is at most 5 % above the one before (level, or fallen past the most) and the last
// latency is at least 1.5 x the unloaded one; else `loads` is a lower bound.
InFlight loads_in_flight(const std::vector<Point>& curve);

// The requests a warp instruction of `lanes` loads makes, per load, where each load draws one
// of `lines` lines at random: loads to one line coalesce into one request, and the queues Little's
// law counts hold requests. Expected distinct lines of `lanes` draws, over `lanes`.
double requests_per_load(double lanes, double lines);

// One lane's timed steps: the cycles of those under the ceiling, how many were above it
// (interruptions), and the lane's window (first timed step to its end, with what it does
// between steps).
struct LaneTally {
  double clean_cycles = 0, interrupted_steps = 0, window_cycles = 0;
};

// The lanes that had a load out, on average over their windows: a lane that an interruption
// kept away leaves its share of the queues to the others, whose loads then look faster, so
// that chains / latency counts it as loading when it was not. Each interrupted step's cycles
// beyond an ordinary step are time away; what a lane does between steps (the same code in
// every lane) is no time away: it is where the lanes' windows less their ordinary steps meet
// no interruption, by a line over their shares of interrupted steps. `steps`: timed steps of
// each lane. Lanes without a window count as present, and all of them where every lane saw
// the same share of interruptions (chains / latency, as without the correction).
double present_chains(const std::vector<LaneTally>& lanes, double steps);

// The chain counts of the sweeps: 1, 2, 4, ... up to `most`, and the warps, lanes and chains
// per lane of each (one lane per warp up to 32 warps, then 32 warps of more lanes, then up to
// `most_lane_chains` chains in each lane).
struct Shape {
  unsigned warps = 1, lanes = 1, lane_chains = 1;
  unsigned chains() const { return warps * lanes * lane_chains; }
};
std::vector<Shape> sm_shapes(unsigned most_warps, unsigned most_chains, unsigned most_lane_chains = 1);
std::vector<Shape> warp_shapes();
// One lane of 1, 2, 4 .. most_lane_chains chains: the loads one thread keeps in flight.
std::vector<Shape> thread_shapes(unsigned most_lane_chains);

}  // namespace mlp
