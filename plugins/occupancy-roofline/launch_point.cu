// One point of a sweep: the launch, the clock records, the median rate over the SMs.
#include "launch_point.cuh"

namespace occupancy_roofline {

std::vector<WarpRecord> Records::read(size_t warps) const {
  const std::vector<unsigned long long> words = buffer_.download();
  std::vector<WarpRecord> out;
  for (size_t w = 0; w < warps && 3 * w + 2 < words.size(); ++w)
    out.push_back({uint32_t(words[3 * w]), uint64_t(words[3 * w + 1]), uint64_t(words[3 * w + 2])});
  return out;
}

std::optional<PooledRate> run_point(const memtopo::Context& ctx, const std::string& name, ChainKernel kernel,
                                    ChainArgs args, const Records& records, int warps, double ops_per_thread) {
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
