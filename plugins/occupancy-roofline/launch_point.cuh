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

// `warps` warps on every SM (block_shape), each thread doing `ops_per_thread` instructions;
// nullopt when that many blocks of the kernel do not fit on an SM. Throws memtopo::Error when
// no SM held exactly `warps` warps.
std::optional<PooledRate> run_point(const memtopo::Context& ctx, const std::string& name, ChainKernel kernel,
                                    ChainArgs args, const Records& records, int warps, double ops_per_thread);

}  // namespace occupancy_roofline
