// A bandwidth stream on the simulated GPU (mt_job::stream_op, ABI 2.4): no load is simulated;
// the time follows from the description's peak rates and Little's law (docs/simulator.md,
// "Bandwidth streams").
#include <algorithm>
#include <cmath>

#include "engine/jobs.hpp"
#include "sim_runner.hpp"

namespace memtopo::sim {
namespace {

enum class Level { L1, L2, Dram };

// Blocks of one SM at once: by threads, by blocks per SM, and never more than the job has.
double blocks_per_sm(const mt_device_info& d, uint32_t blocks, uint32_t threads) {
  const double sms = std::max(1, d.sm_count);
  double fit = std::ceil(double(blocks) / sms);
  if (d.max_threads_per_sm > 0) fit = std::min(fit, std::floor(double(d.max_threads_per_sm) / threads));
  if (d.max_blocks_per_sm > 0) fit = std::min(fit, double(d.max_blocks_per_sm));
  return std::max(1.0, fit);
}

// Where the stream's bytes come from: what one SM re-reads within its L1 (reads through L1:
// its resident slices, or the whole footprint when every block reads it; a grid's blocks
// never come back to their lines on one SM), the footprint within the L2, else DRAM.
Level level_of(const Model& m, const mt_job& j, uint64_t footprint, double per_sm) {
  const bool reads = j.stream_op == MT_STREAM_READ;
  if (reads && j.space == MT_SPACE_GLOBAL_CA && j.stream_shape != MT_STREAM_GRID && m.l1d.geometry.present &&
      per_sm <= double(m.l1_bytes_at(j.shared_carveout_percent)))
    return Level::L1;
  return footprint <= m.l2.geometry.size_bytes * m.l2_partitions ? Level::L2 : Level::Dram;
}

struct Rates {
  double read = 0, write = 0;  // bytes per SM cycle of the whole GPU
};

// The peak rates of a level, in bytes per cycle of the whole GPU (0: none given).
Rates peaks(const Model& m, Level lv, double sms) {
  const double ghz = m.info.sm_clock_khz > 0 ? double(m.info.sm_clock_khz) / 1e6 : 1.0;
  const StreamPeaks& p = m.stream_peaks;
  switch (lv) {
    case Level::L1: return {p.l1_read_bytes_per_cycle_per_sm * sms, p.l1_read_bytes_per_cycle_per_sm * sms};
    case Level::L2: return {p.l2_read_bytes_per_cycle, p.l2_write_bytes_per_cycle};
    default: return {p.dram_read_bytes_per_second / 1e9 / ghz, p.dram_write_bytes_per_second / 1e9 / ghz};
  }
}

}  // namespace

void run_stream(Gpu& gpu, engine::JobCall& call) {
  const Model& m = gpu.model();
  mt_job& j = call.jobs[0];
  const uint32_t threads = j.stream_threads ? j.stream_threads : 256;
  const bool grid = j.stream_shape == MT_STREAM_GRID;
  // A grid has a block per round; the SMs hold as many at once as fit, pass after pass.
  const uint64_t blocks = grid ? engine::stream_rounds(j) : engine::stream_blocks_of(j, m.info);
  const double resident = blocks_per_sm(m.info, uint32_t(std::min<uint64_t>(blocks, UINT32_MAX)), threads);
  const double sms = std::min<double>(double(blocks), std::max(1, m.info.sm_count));
  const uint64_t footprint = j.stream_shape == MT_STREAM_ROUNDS ? engine::stream_slice_bytes(j, m.info) * blocks
                                                                 : engine::stream_rounds(j) * engine::stream_round_bytes(j);
  const double per_sm = j.stream_shape == MT_STREAM_SHARED ? double(footprint)
                                                           : double(engine::stream_slice_bytes(j, m.info)) * resident;
  const Level lv = level_of(m, j, footprint, per_sm);
  // Little's law per SM: a warp keeps ILP accesses of 32 lanes in flight; to the L2 and DRAM
  // at most [mlp]'s loads per SM, a load being one 128-byte line of coalesced lanes.
  const double width = j.load_bytes ? j.load_bytes : 4, ilp = j.stream_ilp ? j.stream_ilp : 1;
  double in_flight = resident * threads * ilp * width;
  const uint32_t limit = lv == Level::L2 ? m.l2_loads_in_flight : lv == Level::Dram ? m.dram_loads_in_flight : 0;
  if (limit) in_flight = std::min(in_flight, double(limit) * 128);
  const double latency = double(lv == Level::L1   ? m.l1d.latency_cycles
                                : lv == Level::L2 ? m.l2.latency_cycles
                                                  : m.dram_latency_cycles);
  const double little = sms * in_flight / std::max(1.0, latency);
  // An SM's schedulers issue one access instruction each per cycle: 32 lanes x width bytes.
  const double issue = sms * m.warp_schedulers * 32 * width;
  Rates r = peaks(m, lv, sms);
  const double read = std::min({little, issue, r.read > 0 ? r.read : little});
  const double write = std::min(issue, r.write > 0 ? r.write : issue);
  // Reads and writes of one pass share the level's port: their times add.
  const double once = double(engine::stream_pass_bytes(j, m.info));
  const double per_pass = (j.stream_op == MT_STREAM_WRITE ? 0 : once / read) + (j.stream_op == MT_STREAM_READ ? 0 : once / write);
  const double waves = grid ? 1.0 : std::ceil(double(blocks) / (resident * std::max(1, m.info.sm_count)));
  const double cycles = per_pass * double(j.steps) * waves;
  const double ghz = m.info.sm_clock_khz > 0 ? double(m.info.sm_clock_khz) / 1e6 : 1.0;
  j.out.cycles = grid ? 0 : uint64_t(std::llround(cycles));  // a grid's blocks keep no clocks
  j.out.average_cycles = grid ? 0 : cycles;
  j.out.sm = -1;
  j.out_stream_blocks_per_sm = uint32_t(blocks_per_sm(m.info, UINT32_MAX, threads));
  j.out_stream_bytes = engine::stream_bytes_moved(j, m.info);
  j.out_stream_elapsed_ns = uint64_t(std::llround(cycles / ghz));
}

}  // namespace memtopo::sim
