// Lanes re-reading words of shared memory (docs/shared-memory.md): every element of a 16 KiB
// array holds the shared address of its own word's first element, so each timed load's value
// is the next load's address; a warp's lanes load together, and take as many turns as the most
// distinct words one bank holds among them.
#include <vector>

#include <memtopo/device/kernel.hpp>

#include "banks_run.hpp"

namespace shmem {
namespace {

namespace md = memtopo::device;

constexpr uint32_t kWords = 4096;  // 16 KiB: stride 128 x 31 lanes, and more
constexpr unsigned long long kWarm = 8, kTimed = 256;

// out: per thread the cycles of its timed loads and their count, the interrupted left out: a
// load over twice the fastest one the thread has seen (its warm-up included; a point's loads
// are one conflict pattern, so an interruption stands out of its own point), or over
// `ceiling`. Kept in registers: a store to memory beside each timed load would time the
// store's queue, not the bank's turns (docs/results/log/h100.md, "Validity": shared.banks).
template <int W>
MEMTOPO_KERNEL void bank_kernel(unsigned lanes, unsigned stride, unsigned ceiling, unsigned long long* out) {
  uint32_t* words = md::dynamic_shared<uint32_t>();
  MEMTOPO_SHARED(unsigned, scratch, 32);  // one timing word per warp: its lanes' stores may race, harmlessly
  const unsigned t = md::thread_index(), threads = md::block_threads();
  for (unsigned i = t; i < kWords; i += threads) words[i] = md::shared_address(&words[i - i % (W / 4)]);
  md::sync_block();
  const unsigned w = t / 32, lane = t % 32;
  if (lane >= lanes) return;
  const unsigned c = w * lanes + lane;
  const unsigned long long slot = md::shared_address(&scratch[w]);
  uint32_t p = md::shared_address(&words[(unsigned long long)(c) * stride % kWords]);
  unsigned long long total = 0, counted = 0;
  uint32_t fastest = ~0u;
  for (unsigned long long k = 0; k < kWarm + kTimed; ++k) {
    uint32_t cycles = 0;
    p = md::timed_load<md::Path::Shared, W>(p, 0, slot, cycles);
    fastest = cycles < fastest ? cycles : fastest;
    if (k >= kWarm && cycles <= ceiling && cycles <= 2 * fastest) {
      total += cycles;
      ++counted;
    }
  }
  md::store_cg(out + 2 * t, total);
  md::store_cg(out + 2 * t + 1, counted);
}

// One lane's pointer chase through a ring of `kRingWords` shared words, one word a bank
// apart from the last: `repeats` windows of `trips` x 32 dependent loads, each between two
// clock reads (the last one waits for the last load's value). out: the windows' cycles.
constexpr uint32_t kRingWords = 64;
MEMTOPO_KERNEL void chase_kernel(unsigned trips, unsigned repeats, unsigned long long* out) {
  uint32_t* words = md::dynamic_shared<uint32_t>();
  MEMTOPO_SHARED(unsigned, scratch, 1);
  if (md::thread_index() != 0) return;
  for (uint32_t i = 0; i < kRingWords; ++i) words[i] = md::shared_address(&words[(i + 1) % kRingWords]);
  uint32_t p[1] = {md::shared_address(&words[0])};
  md::follow_chains<md::Path::Shared, 1, 32>(p, 2);  // warm: the ring and the loop's instructions
  const unsigned long long slot = md::shared_address(&scratch[0]);
  for (unsigned r = 0; r < repeats; ++r) {
    const unsigned long long t0 = md::clock_now();
    md::follow_chains<md::Path::Shared, 1, 32>(p, trips);
    md::store_cg(out + r, md::clock_after(p[0], slot) - t0);
  }
}

// One lane re-reading one word that holds its own address: `loads` timed loads after kWarm
// untimed, each load's cycles (the timing's cost included) into out.
MEMTOPO_KERNEL void samples_kernel(unsigned loads, unsigned* out) {
  uint32_t* words = md::dynamic_shared<uint32_t>();
  MEMTOPO_SHARED(unsigned, scratch, 1);
  if (md::thread_index() != 0) return;
  words[0] = md::shared_address(&words[0]);
  uint32_t p = words[0];
  const unsigned long long slot = md::shared_address(&scratch[0]);
  for (unsigned k = 0; k < kWarm + loads; ++k) {
    uint32_t cycles = 0;
    p = md::timed_load<md::Path::Shared, 4>(p, 0, slot, cycles);
    if (k >= kWarm) md::store_cg(out + (k - kWarm), cycles);
  }
}

template <int W>
double run(const memtopo::Context& ctx, uint32_t stride, uint32_t lanes, uint32_t warps, uint32_t ceiling) {
  md::Buffer<unsigned long long> out(ctx, 64ull * warps);
  out.zero();
  md::LaunchConfig cfg;
  cfg.block = {32 * warps};
  cfg.dynamic_shared_bytes = kWords * 4;
  cfg.warmup_launches = 0;
  md::launch<bank_kernel<W>>(ctx, "banks", cfg, lanes, stride, ceiling, out.get());
  const std::vector<unsigned long long> o = out.download();
  unsigned long long sum = 0, counted = 0;
  for (size_t i = 0; i < o.size(); i += 2) sum += o[i], counted += o[i + 1];
  return counted ? double(sum) / double(counted) : 0.0;
}

}  // namespace

std::vector<double> chase_window_cycles(const memtopo::Context& ctx, uint32_t loads, uint32_t repeats) {
  md::Buffer<unsigned long long> out(ctx, repeats);
  out.zero();
  md::LaunchConfig cfg;
  cfg.block = {32};
  cfg.dynamic_shared_bytes = kRingWords * 4;
  cfg.warmup_launches = 1;
  md::launch<chase_kernel>(ctx, "shared_chase", cfg, (loads + 31) / 32, repeats, out.get());
  std::vector<double> cycles;
  for (unsigned long long c : out.download()) cycles.push_back(double(c));
  return cycles;
}

std::vector<double> one_lane_samples(const memtopo::Context& ctx, uint32_t loads) {
  md::Buffer<unsigned> out(ctx, loads);
  out.zero();
  md::LaunchConfig cfg;
  cfg.block = {32};
  cfg.dynamic_shared_bytes = 16;
  cfg.warmup_launches = 0;
  md::launch<samples_kernel>(ctx, "shared_samples", cfg, loads, out.get());
  std::vector<double> cycles;
  for (unsigned c : out.download()) cycles.push_back(double(c));
  return cycles;
}

double bank_load_cycles(const memtopo::Context& ctx, uint32_t stride, uint32_t lanes, uint32_t warps, uint32_t width,
                        uint32_t ceiling) {
  if (width == 16) return run<16>(ctx, stride, lanes, warps, ceiling);
  if (width == 8) return run<8>(ctx, stride, lanes, warps, ceiling);
  return run<4>(ctx, stride, lanes, warps, ceiling);
}

}  // namespace shmem
