// A model of what the chain kernels measure: an SM of four sub-partitions, warp w on partition
// w % 4; each warp has `ilp` independent dependent chains. A warp issues an instruction when one
// of its chains' last result is ready (the completion latency) and at most one per `issue`
// cycles; a partition's pipe takes one warp instruction per `pipe` cycles; a unit the whole SM
// shares (shared-memory banks, L1 bandwidth) caps the SM at `sm_cap` thread ops per cycle.
#pragma once

#include <algorithm>
#include <limits>
#include <optional>
#include <random>

#include "occupancy-roofline/roofline_analysis.hpp"

namespace roofline_model {

struct Pipeline {
  double completion = 4;  // cycles from an instruction to a dependent one
  double issue = 1;       // cycles between two instructions of one warp
  double pipe = 1;        // cycles per warp instruction of the type per partition
  double sm_cap = std::numeric_limits<double>::infinity();
  int partitions = 4;
  int max_warps_at_ilp8 = 1 << 20;  // registers: wider chains fit fewer warps

  // Thread instructions per cycle per SM.
  double rate(int warps, int ilp) const {
    double warp_instructions = 0;
    for (int s = 0; s < partitions; ++s) {
      const int n = warps / partitions + (s < warps % partitions ? 1 : 0);
      const double per_warp = std::min(ilp / completion, 1 / issue);
      if (n > 0) warp_instructions += std::min(n * per_warp, 1 / pipe);
    }
    return std::min(warp_instructions * occupancy_roofline::kWarpSize, sm_cap);
  }
  bool fits(int warps, int ilp) const { return ilp < 8 || warps <= max_warps_at_ilp8; }
  // The most over every shape of the sweeps.
  double peak(const occupancy_roofline::SweepSettings& s) const {
    double most = 0;
    for (int w : occupancy_roofline::warp_counts(s.max_warps))
      for (int ilp : s.ilps)
        if (fits(w, ilp)) most = std::max(most, rate(w, ilp));
    return most;
  }
};

// The model as the sweep's measurement, with relative noise up to `noise` (uniform, seeded) and
// a count of the points measured (asked for and fitting).
struct ModelMeasure {
  Pipeline p;
  double noise = 0;
  unsigned seed = 1;
  int calls = 0;
  std::mt19937 rng{seed};
  std::optional<double> operator()(int warps, int ilp) {
    if (!p.fits(warps, ilp)) return std::nullopt;
    ++calls;
    std::uniform_real_distribution<double> u(-noise, noise);
    return p.rate(warps, ilp) * (1 + u(rng));
  }
};

// The ridge point by brute force over every shape the sweep could measure, noise-free.
struct Ridge {
  int warps = 0, ilp = 0;
};
inline Ridge true_ridge(const Pipeline& p, const occupancy_roofline::SweepSettings& s, int ilp_only = 0) {
  const double floor = s.ridge_fraction * p.peak(s);
  for (int w : occupancy_roofline::warp_counts(s.max_warps))
    for (int ilp : s.ilps) {
      if (ilp_only && ilp != ilp_only) continue;
      if (p.fits(w, ilp) && p.rate(w, ilp) >= floor) return {w, ilp};
    }
  return {};
}

}  // namespace roofline_model
