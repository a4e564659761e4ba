// One point of a sweep: the clock records, the DRAM chains' windows, the median rate over the SMs.
#include "launch_point.hpp"

#include <algorithm>

#include <memtopo/device/kernel.hpp>

namespace occupancy_roofline {

namespace {

// Row of number n, lane l: the address of lane l's word of the row of number n + chains.
// dram_row(n) moves on by the same amount for each stride of n: two divisions a thread, not
// four a row (the simulated GPU runs this kernel's threads as plain host code).
MEMTOPO_KERNEL void link_rows(unsigned long long* rows, unsigned long long count, unsigned long long chains) {
  namespace md = memtopo::device;
  const unsigned long long stride = (unsigned long long)(md::grid_blocks()) * md::block_threads();
  const unsigned long long first = (unsigned long long)(md::block_index()) * md::block_threads() + md::thread_index();
  if (first >= count) return;
  const unsigned long long step = dram_row(stride, count);
  unsigned long long at = dram_row(first, count), to = dram_row(first + chains, count);
  for (unsigned long long n = first; n < count; n += stride) {
    unsigned long long* row = rows + at * 32;
    const unsigned long long next = reinterpret_cast<unsigned long long>(rows + to * 32);
    for (unsigned l = 0; l < 32; ++l) row[l] = next + 8ull * l;
    at += step;
    to += step;
    if (at >= count) at -= count;
    if (to >= count) to -= count;
  }
}

}  // namespace

std::vector<WarpRecord> Records::read(size_t warps) const {
  const std::vector<unsigned long long> words = buffer_.download();
  std::vector<WarpRecord> out;
  for (size_t w = 0; w < warps && 3 * w + 2 < words.size(); ++w)
    if (words[3 * w + 2] != 0)  // a cleared record: its block wrote none (ChainArgs::sms)
      out.push_back({uint32_t(words[3 * w]), uint64_t(words[3 * w + 1]), uint64_t(words[3 * w + 2])});
  return out;
}

uint64_t DramWindows::rows_per_window(const mt_device_info& dev, unsigned loads_per_thread) {
  const uint64_t loads = uint64_t(dev.sm_count) * uint64_t(dev.max_threads_per_sm / kWarpSize) * loads_per_thread;
  const uint64_t l2_rows = 4 * uint64_t(std::max<int64_t>(dev.l2_bytes, 0)) / 256;
  return std::max<uint64_t>({loads, l2_rows, 1});
}

uint64_t DramWindows::bytes_needed(const mt_device_info& dev, unsigned loads_per_thread) {
  return 2 * rows_per_window(dev, loads_per_thread) * 256;
}

DramWindows::DramWindows(const memtopo::Context& ctx, unsigned loads_per_thread)
    : rows_per_window_(rows_per_window(ctx.device(), loads_per_thread)), rows_(ctx, size_t(2 * rows_per_window_ * 32)) {}

unsigned long long DramWindows::take(uint64_t rows) {
  if (next_ + rows > rows_per_window_) next_ = 0;
  const uint64_t first = next_;
  next_ += rows;
  return first;
}

void DramWindows::link(const memtopo::Context& ctx, unsigned long long chains) const {
  namespace md = memtopo::device;
  md::LaunchConfig cfg;
  cfg.grid = {unsigned(std::max(ctx.device().sm_count, 1))};
  cfg.block = {256};
  cfg.warmup_launches = 0;
  for (int w = 0; w < 2; ++w)
    md::launch<link_rows>(ctx, "link_dram_rows", cfg, const_cast<unsigned long long*>(window(w)), window_rows(), chains);
}

PooledRate pool_point(const Records& records, const std::string& name, unsigned blocks, const BlockShape& shape,
                      double ops_per_thread) {
  const auto rates = rates_per_sm(records.read(size_t(blocks) * shape.warps_per_block), ops_per_thread * kWarpSize);
  const int held = shape.blocks_per_sm * shape.warps_per_block;
  const auto pooled = pooled_rate(rates, held);
  if (!pooled)
    throw memtopo::Error("kernel " + name + ": no SM held " + std::to_string(held) + " warps of " +
                         std::to_string(blocks) + " blocks of " + std::to_string(shape.warps_per_block * kWarpSize) +
                         " threads");
  return *pooled;
}

}  // namespace occupancy_roofline
