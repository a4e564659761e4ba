// occupancy-roofline: one point of a sweep: a chain kernel launched with the same number of
// warps on every SM, its per-warp clock records turned into a rate per SM. On the GPU and on the
// simulated GPU alike (memtopo::device::launch).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <memtopo/context.hpp>
#include <memtopo/device/launch.hpp>

#include "chains.hpp"
#include "roofline_analysis.hpp"

namespace occupancy_roofline {

// Where a point's clock records go: three words per warp for every warp the device holds.
class Records {
 public:
  explicit Records(const memtopo::Context& ctx)
      : buffer_(ctx, size_t(ctx.device().sm_count) * size_t(ctx.device().max_threads_per_sm / kWarpSize) * 3) {}
  unsigned long long* get() const { return buffer_.get(); }
  void clear() const { buffer_.zero(); }
  std::vector<WarpRecord> read(size_t warps) const;

 private:
  memtopo::device::Buffer<unsigned long long> buffer_;
};

// The rows of the DRAM chains (GlobalLoadDram): two windows, each with a row for every load of
// the largest point and at least four L2s of rows. The untimed launch reads one window, the timed
// launch the other; each point takes numbers (rows) past the last point's, so no row a launch
// reads was read since the numbers last came round, four L2s of rows before at least. A point
// that read the rows of the point before found those in the L2 whenever they fitted (a memset
// of twice the L2 between the launches evicted them on a GPU but not on the simulated GPU,
// whose buffer fills touch no cache: DRAM loads of ILP 2 to 8 read the L2's latency).
class DramWindows {
 public:
  // Rows of 256 B for `loads_per_thread` loads of every warp the device holds.
  DramWindows(const memtopo::Context& ctx, unsigned loads_per_thread);
  // Bytes the windows take on the device.
  static uint64_t bytes_needed(const mt_device_info& dev, unsigned loads_per_thread);
  const unsigned long long* window(int n) const { return rows_.get() + size_t(n) * rows_per_window_ * 32; }
  unsigned long long window_rows() const { return rows_per_window_; }
  // Links both windows' rows for a launch of `chains` chains (GlobalLoadDram). Every row, not
  // only the launch's: on a GPU the writes pass through the L2, and the launch's rows written
  // last would be L2 hits; writing both whole windows leaves the L2 other rows.
  void link(const memtopo::Context& ctx, unsigned long long chains) const;
  // The first number of a launch that reads `rows` rows: past the last launch's, or 0 where
  // they would pass the window's end.
  unsigned long long take(uint64_t rows);

 private:
  static uint64_t rows_per_window(const mt_device_info& dev, unsigned loads_per_thread);
  uint64_t rows_per_window_;
  uint64_t next_ = 0;
  memtopo::device::Buffer<unsigned long long> rows_;
};

// The median rate over the SMs that held exactly the point's warps; throws memtopo::Error when
// none did.
PooledRate pool_point(const Records& records, const std::string& name, unsigned blocks, const BlockShape& shape,
                      double ops_per_thread);

// `warps` warps on every SM (block_shape) of kernel K, each thread doing `ops_per_thread`
// instructions; nullopt when that many blocks of the kernel do not fit on an SM. Throws
// memtopo::Error when no SM held exactly `warps` warps. With `dram`, the launches read its
// windows as above.
template <auto K>
std::optional<PooledRate> run_point(const memtopo::Context& ctx, const std::string& name, ChainArgs args,
                                    const Records& records, int warps, double ops_per_thread,
                                    DramWindows* dram = nullptr) {
  namespace md = memtopo::device;
  const BlockShape shape = block_shape(warps, ctx.device().max_threads_per_block / kWarpSize);
  md::LaunchConfig cfg;
  cfg.block = {unsigned(shape.warps_per_block * kWarpSize)};
  if (md::max_active_blocks_per_sm<K>(ctx, name, cfg) < shape.blocks_per_sm) return std::nullopt;
  cfg.grid = {unsigned(ctx.device().sm_count * shape.blocks_per_sm)};
  args.records = records.get();
  if (dram) {
    dram->link(ctx, uint64_t(cfg.grid.x) * uint64_t(shape.warps_per_block) * args.ilp);
    args.dram_window_rows = dram->window_rows();
    args.dram_first_chain = dram->take(uint64_t(cfg.grid.x) * uint64_t(shape.warps_per_block) * uint64_t(ops_per_thread));
    args.dram_rows = dram->window(0);
    cfg.warmup_launches = 0;
    md::launch<K>(ctx, name, cfg, args);  // the warm-up: window 0
    args.dram_rows = dram->window(1);
  }
  if (args.sms) records.clear();  // the blocks that return write no record
  md::launch<K>(ctx, name, cfg, args);
  return pool_point(records, name, cfg.grid.x, shape, ops_per_thread);
}

}  // namespace occupancy_roofline
