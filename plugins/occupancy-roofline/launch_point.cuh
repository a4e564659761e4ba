// occupancy-roofline: one point of a sweep on the GPU: a chain kernel launched with the same
// number of warps on every SM, its per-warp clock records turned into a rate per SM.
#pragma once

#include <optional>
#include <string>

#include <memtopo/context.hpp>
#include <memtopo/cuda/launch.cuh>

#include "chains.cuh"
#include "roofline_analysis.hpp"

namespace occupancy_roofline {

using ChainKernel = void (*)(ChainArgs);

// Where a point's clock records go: three words per warp for every warp the device holds.
class Records {
 public:
  explicit Records(const memtopo::Context& ctx)
      : buffer_(ctx, size_t(ctx.device().sm_count) * size_t(ctx.device().max_threads_per_sm / kWarpSize) * 3) {}
  unsigned long long* get() const { return buffer_.get(); }
  std::vector<WarpRecord> read(size_t warps) const;

 private:
  memtopo::cuda::DeviceBuffer<unsigned long long> buffer_;
};

// The rows of the DRAM chains (GlobalLoadDram): two zeroed windows, each with a row for every
// load of the largest point, and a buffer of twice the L2 written between a point's launches.
// The untimed launch reads one window; the timed launch reads the other after the written
// buffer has taken the L2, so none of its rows is there (a point run twice on one window found
// the untimed launch's rows in the L2 whenever they fitted).
class DramWindows {
 public:
  // Rows of 256 B for `loads_per_thread` loads of every warp the device holds.
  DramWindows(const memtopo::Context& ctx, unsigned loads_per_thread);
  // Bytes the windows and the buffer take on the device.
  static uint64_t bytes_needed(const mt_device_info& dev, unsigned loads_per_thread);
  const unsigned long long* window(int n) const { return rows_.get() + size_t(n) * rows_per_window_ * 32; }
  unsigned long long row_mask() const { return rows_per_window_ - 1; }
  void fill_l2() const { l2_filler_.zero(); }

 private:
  static uint64_t rows_per_window(const mt_device_info& dev, unsigned loads_per_thread);
  uint64_t rows_per_window_;
  memtopo::cuda::DeviceBuffer<unsigned long long> rows_;
  memtopo::cuda::DeviceBuffer<uint32_t> l2_filler_;
};

// `warps` warps on every SM (block_shape), each thread doing `ops_per_thread` instructions;
// nullopt when that many blocks of the kernel do not fit on an SM. Throws memtopo::Error when
// no SM held exactly `warps` warps. With `dram`, the launches read its windows as above.
std::optional<PooledRate> run_point(const memtopo::Context& ctx, const std::string& name, ChainKernel kernel,
                                    ChainArgs args, const Records& records, int warps, double ops_per_thread,
                                    const DramWindows* dram = nullptr);

}  // namespace occupancy_roofline
