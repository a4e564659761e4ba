// The carveout levels and table (carveout_analysis.hpp). docs/shared-memory.md.
#include "carveout_analysis.hpp"

#include <algorithm>
#include <cmath>

namespace shmem {

std::vector<CarveoutLevel> group_levels(const std::vector<CarveoutPoint>& sweep, double sigmas,
                                        double min_step_bytes) {
  std::vector<CarveoutLevel> levels;
  double sum = 0, inverse_var = 0;  // the level's inverse-variance weighted mean
  size_t count = 0;
  for (const CarveoutPoint& p : sweep) {
    const double var = std::max(p.se_bytes * p.se_bytes, 1.0);
    if (count) {
      const double mean = sum / inverse_var, mean_se = std::sqrt(1.0 / inverse_var);
      const double d = std::fabs(p.l1d_bytes - mean);
      if (d > sigmas * std::hypot(p.se_bytes, mean_se) && d > min_step_bytes) count = 0;
    }
    if (!count) {
      levels.push_back(CarveoutLevel{p.percent, p.percent, 0, 0});
      sum = inverse_var = 0;
    }
    sum += p.l1d_bytes / var;
    inverse_var += 1.0 / var;
    ++count;
    CarveoutLevel& l = levels.back();
    l.last_percent = p.percent;
    l.l1d_bytes = sum / inverse_var;
    l.se_bytes = std::sqrt(1.0 / inverse_var);
  }
  return levels;
}

RefineRun refine_run(double l1d_bytes, uint64_t line_bytes, double se_bytes, uint64_t max_loads) {
  const uint64_t lines = uint64_t(std::ceil(std::max(l1d_bytes, double(line_bytes)) * 2 / double(line_bytes)));
  RefineRun r;
  r.footprint_bytes = std::max<uint64_t>(lines, 2) * line_bytes;
  // se = footprint x sqrt(h (1 - h) / n) at a hit fraction h of 0.5.
  const double n = std::pow(0.5 * double(r.footprint_bytes) / std::max(se_bytes, 1.0), 2);
  r.loads = std::clamp<uint64_t>(uint64_t(std::ceil(n)), 1u << 16, std::max<uint64_t>(max_loads, 1u << 16));
  return r;
}

std::vector<CarveoutRow> carveout_table(const std::vector<CarveoutLevel>& levels, int64_t shared_per_sm_bytes,
                                        int64_t block_reserved_bytes, int64_t block_max_bytes,
                                        int64_t granule_bytes) {
  std::vector<CarveoutRow> rows;
  for (const CarveoutLevel& l : levels) {
    // Not the nearest granule: lines held fall short of the capacity (kRoundUpFrom).
    const int64_t rounded =
        int64_t(std::floor(l.l1d_bytes / double(granule_bytes) + kRoundUpFrom)) * granule_bytes;
    if (!rows.empty() && rows.back().l1d_bytes == rounded) {
      rows.back().last_percent = l.last_percent;
      continue;
    }
    rows.push_back(CarveoutRow{l.first_percent, l.last_percent, rounded, 0, 0, l.l1d_bytes, l.se_bytes});
  }
  if (rows.empty()) return rows;
  const int64_t last_l1 = rows.back().l1d_bytes;
  for (CarveoutRow& r : rows) {
    r.sm_shared_bytes = std::max<int64_t>(0, shared_per_sm_bytes - (r.l1d_bytes - last_l1));
    r.block_shared_bytes = std::clamp<int64_t>(r.sm_shared_bytes - block_reserved_bytes, 0, block_max_bytes);
  }
  return rows;
}

}  // namespace shmem
