// Streams of many passes on the simulated GPU (sim/kernel/kernel_fast_forward.cpp): the passes
// of a steady state are priced at once, and what the launch leaves is what every pass would
// have left: memory, each lane's fold of its loads, the counters, and a time in proportion to
// the passes.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "kernel_context.hpp"
#include "memtopo/device/kernel.hpp"
#include "sim_helpers.hpp"

namespace md = memtopo::device;
using simtest::KernelContext;

namespace {

// Every thread sweeps its own slice (16 B, ILP 1) `passes` times; out[thread] = its fold.
template <uint32_t Op>
MEMTOPO_KERNEL void passes_stream(const char* src, char* dst, unsigned long long bytes, unsigned passes, unsigned* out) {
  const unsigned long long threads = uint64_t(md::grid_blocks()) * md::block_threads();
  const unsigned long long me = uint64_t(md::block_index()) * md::block_threads() + md::thread_index();
  out[me] = md::sweep<Op, md::Path::GlobalCg, 16, 1>(src, dst, me, bytes / 16, threads, threads, 7, passes);
}

struct Stream {
  KernelContext k{simtest::open_device("hopper-like.toml")};
  uint64_t bytes;
  md::LaunchConfig cfg;
  md::Buffer<uint32_t> data, folds;
  Stream(uint64_t b, uint32_t blocks, uint32_t threads)
      : bytes(b), data(k.ctx(), b / 4), folds(k.ctx(), size_t(blocks) * threads) {
    cfg.grid = {blocks};
    cfg.block = {threads};
    cfg.warmup_launches = 0;
  }
  uint64_t threads() const { return uint64_t(cfg.grid.x) * cfg.block.x; }
  template <uint32_t Op>
  md::LaunchReport run(unsigned passes) {
    auto* p = reinterpret_cast<char*>(data.get());
    return md::launch<passes_stream<Op>>(k.ctx(), "passes", cfg, p, p, bytes, passes, folds.get());
  }
};

// xor of the words thread t loads in one pass over `words` (16 B elements t, t + threads, ...).
uint32_t pass_fold(const std::vector<uint32_t>& words, uint64_t t, uint64_t threads) {
  uint32_t f = 0;
  for (uint64_t e = t; e < words.size() / 4; e += threads)
    for (int j = 0; j < 4; ++j) f ^= words[e * 4 + j];
  return f;
}

}  // namespace

TEST_CASE("sim steady streams: an update of 1000 passes leaves memory and folds as each pass would",
          "[sim][kernels][steady]") {
  Stream s(64 * 1024, 8, 128);
  std::vector<uint32_t> words(s.bytes / 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(i * 2654435761u);
  s.data.upload(words);
  const unsigned passes = 1000;
  s.run<MT_SWEEP_UPDATE>(passes);
  // Pass by pass on the host: each pass loads the words, then counts the first of each 16 B on.
  std::vector<uint32_t> want = words, folds(s.threads(), 0);
  for (unsigned p = 0; p < passes; ++p)
    for (uint64_t t = 0; t < s.threads(); ++t) {
      folds[t] ^= pass_fold(want, t, s.threads());
      for (uint64_t e = t; e < want.size() / 4; e += s.threads()) ++want[e * 4];
    }
  CHECK(s.data.download() == want);
  CHECK(s.folds.download() == folds);
}

TEST_CASE("sim steady streams: reads of 999 passes fold as one, of 1000 as none", "[sim][kernels][steady]") {
  Stream s(64 * 1024, 8, 128);
  std::vector<uint32_t> words(s.bytes / 4);
  for (size_t i = 0; i < words.size(); ++i) words[i] = uint32_t(i * 40503u + 17);
  s.data.upload(words);
  std::vector<uint32_t> one(s.threads());
  for (uint64_t t = 0; t < s.threads(); ++t) one[t] = pass_fold(words, t, s.threads());
  s.run<MT_SWEEP_READ>(999);
  CHECK(s.folds.download() == one);
  s.run<MT_SWEEP_READ>(1000);
  CHECK(s.folds.download() == std::vector<uint32_t>(s.threads(), 0));
  CHECK(s.data.download() == words);
}

TEST_CASE("sim steady streams: 400 passes over the L2 take twice 200 and count every pass",
          "[sim][kernels][steady]") {
  // A quarter of hopper-like's 2 MiB L2, every SM's warps streaming: the L2's rate of 300 B a
  // cycle bounds them.
  Stream s(512 * 1024, 8 * 4, 256);
  const auto r200 = s.run<MT_SWEEP_READ>(200);
  md::LaunchReport r400;
  const memtopo::Counted c = s.k.ctx().backend().count([&] { r400 = s.run<MT_SWEEP_READ>(400); }, MT_COUNT_L2_READ);
  REQUIRE(c.counted);
  CHECK(r400.elapsed_ms == Approx(2.0 * r200.elapsed_ms).epsilon(0.01));
  const double cycles = r400.elapsed_ms * 1e-3 * double(s.k.info().sm_clock_khz) * 1e3;
  CHECK(400.0 * double(s.bytes) / cycles == Approx(300.0).epsilon(0.02));
  CHECK(c.counts.l2_read_bytes == Approx(400.0 * double(s.bytes)).epsilon(0.001));
}
