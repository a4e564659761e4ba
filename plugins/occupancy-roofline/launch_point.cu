// One point of a sweep: the launch, the clock records, the median rate over the SMs.
#include "launch_point.cuh"

#include <algorithm>

namespace occupancy_roofline {

std::vector<WarpRecord> Records::read(size_t warps) const {
  const std::vector<unsigned long long> words = buffer_.download();
  std::vector<WarpRecord> out;
  for (size_t w = 0; w < warps && 3 * w + 2 < words.size(); ++w)
    out.push_back({uint32_t(words[3 * w]), uint64_t(words[3 * w + 1]), uint64_t(words[3 * w + 2])});
  return out;
}

uint64_t DramWindows::rows_per_window(const mt_device_info& dev, unsigned loads_per_thread) {
  const uint64_t loads = uint64_t(dev.sm_count) * uint64_t(dev.max_threads_per_sm / kWarpSize) * loads_per_thread;
  uint64_t rows = 1;
  while (rows < loads) rows *= 2;  // the row mask needs a power of two
  return rows;
}

uint64_t DramWindows::bytes_needed(const mt_device_info& dev, unsigned loads_per_thread) {
  return 2 * rows_per_window(dev, loads_per_thread) * 256 + 2 * uint64_t(std::max<int64_t>(dev.l2_bytes, 0));
}

DramWindows::DramWindows(const memtopo::Context& ctx, unsigned loads_per_thread)
    : rows_per_window_(rows_per_window(ctx.device(), loads_per_thread)),
      rows_(ctx, size_t(2 * rows_per_window_ * 32)),
      l2_filler_(ctx, size_t(std::max<int64_t>(ctx.device().l2_bytes, 1 << 20)) / 2) {
  rows_.zero();
}

std::optional<PooledRate> run_point(const memtopo::Context& ctx, const std::string& name, ChainKernel kernel,
                                    ChainArgs args, const Records& records, int warps, double ops_per_thread,
                                    const DramWindows* dram) {
  const BlockShape shape = block_shape(warps, ctx.device().max_threads_per_block / kWarpSize);
  const int threads = shape.warps_per_block * kWarpSize;
  memtopo::cuda::use_device(ctx, name);
  int fits = 0;
  memtopo::cuda::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fits, kernel, threads, 0), name,
                       "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  if (fits < shape.blocks_per_sm) return std::nullopt;
  memtopo::cuda::LaunchConfig cfg;
  cfg.grid = dim3(unsigned(ctx.device().sm_count * shape.blocks_per_sm));
  cfg.block = dim3(unsigned(threads));
  args.records = records.get();
  if (dram) {
    args.dram_chains = uint64_t(cfg.grid.x) * uint64_t(shape.warps_per_block) * args.ilp;
    args.dram_row_mask = dram->row_mask();
    args.dram_rows = dram->window(0);
    memtopo::cuda::launch(ctx, name, kernel, cfg, args);  // its own warm-up reads window 0 too
    cfg.warmup_launches = 0;
    dram->fill_l2();
    args.dram_rows = dram->window(1);
  }
  memtopo::cuda::launch(ctx, name, kernel, cfg, args);
  const auto rates = rates_per_sm(records.read(size_t(cfg.grid.x) * shape.warps_per_block), ops_per_thread * kWarpSize);
  const int held = shape.blocks_per_sm * shape.warps_per_block;
  const auto pooled = pooled_rate(rates, held);
  if (!pooled)
    throw memtopo::Error("kernel " + name + ": no SM held " + std::to_string(held) + " warps of " +
                         std::to_string(cfg.grid.x) + " blocks of " + std::to_string(threads) + " threads");
  return pooled;
}

}  // namespace occupancy_roofline
