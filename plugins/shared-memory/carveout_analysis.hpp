// shared-memory: the carveout levels from the L1 left at each carveout percent, free of
// measurement so that tests feed it modelled or recorded sweeps. docs/shared-memory.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmem {

// The L1 one carveout leaves: lines held under random loads x line bytes, with its standard error.
struct CarveoutPoint {
  int32_t percent = 0;
  double l1d_bytes = 0, se_bytes = 0;
};

struct CarveoutLevel {
  int32_t first_percent = 0, last_percent = 0;
  double l1d_bytes = 0, se_bytes = 0;  // mean over the level's points, and its standard error
};

// Runs of consecutive percents whose L1 agrees: a point starts a new level when it differs
// from the level's mean by more than `sigmas` standard errors and by more than `min_step_bytes`
// (the driver's sizes differ by whole KiB). The sweep must be in ascending percent order.
std::vector<CarveoutLevel> group_levels(const std::vector<CarveoutPoint>& sweep, double sigmas = 5,
                                        double min_step_bytes = 1024);

// The footprint and load count that measure an L1 of about `l1d_bytes` to `se_bytes`: a
// footprint twice it (every set over-full, also where a hash deals lines to sets unevenly: one
// load in two hits) and enough loads.
struct RefineRun {
  uint64_t footprint_bytes = 0, loads = 0;
};
RefineRun refine_run(double l1d_bytes, uint64_t line_bytes, double se_bytes, uint64_t max_loads);

// What the table says of each level: the L1 rounded to `granule_bytes` (kRoundUpFrom), the
// shared memory per SM (the device's maximum less what the level's L1 exceeds the last level's by: the L1 and
// shared memory split one array, and the largest carveout leaves the most shared memory), and
// per block (less the device's reservation per block, at most `block_max_bytes`). Adjacent
// levels equal after rounding merge.
struct CarveoutRow {
  int32_t first_percent = 0, last_percent = 0;
  int64_t l1d_bytes = 0, sm_shared_bytes = 0, block_shared_bytes = 0;
  double measured_bytes = 0, se_bytes = 0;
};
// A level's lines held round up to the next granule from 1 - kRoundUpFrom of a granule below
// it: they fall short of the capacity (0.1 to 0.5 KiB on an H100), and 0.3 KiB above it is
// 3.2 standard errors of a level's run (96 B).
constexpr double kRoundUpFrom = 0.7;
std::vector<CarveoutRow> carveout_table(const std::vector<CarveoutLevel>& levels, int64_t shared_per_sm_bytes,
                                        int64_t block_reserved_bytes, int64_t block_max_bytes,
                                        int64_t granule_bytes = 1024);

}  // namespace shmem
