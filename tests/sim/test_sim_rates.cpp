// The simulated GPU is a model: no stream it runs moves bytes faster than its description allows
// (docs/simulator.md, "Probe kernels"). One launch at a time, over lines no launch before it
// touched, in nine shapes of blocks and threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "kernel_context.hpp"
#include "sim_helpers.hpp"
#include "sweep_kernel.hpp"

namespace md = memtopo::device;
using simtest::KernelContext;
using simtest::sweep_stream;

namespace {

// The highest rate, bytes a second, at which DRAM read (Op READ) or wrote in a launch streaming
// `window` bytes of fresh lines, each launch its own lines of one buffer. Writes after twice the
// L2 written: the L2 then holds dirty lines, as in a long stream. DRAM's bytes, not the
// stream's: a window of writes may end with more or fewer lines of the L2 dirty than it began
// with (3 % of a window on a replayed H100).
template <uint32_t Op>
double highest_rate(KernelContext& k, uint64_t window) {
  const uint64_t warm = Op == MT_SWEEP_WRITE ? 2 * uint64_t(k.info().l2_bytes) : 0;
  md::Buffer<char> buf(k.ctx(), warm + 10 * window);
  md::Buffer<unsigned> sink(k.ctx(), 1);
  double most = 0;
  uint64_t at = 0;
  if (Op == MT_SWEEP_WRITE) {
    md::LaunchConfig cfg;
    cfg.grid = {uint32_t(k.info().sm_count) * 4};
    cfg.block = {256};
    cfg.warmup_launches = 0;
    md::launch<sweep_stream<Op>>(k.ctx(), "sweep", cfg, buf.get(), buf.get(), warm, sink.get());
    at = warm;
  }
  for (uint32_t blocks : {1u, 2u, 4u})
    for (uint32_t threads : {128u, 256u, 512u}) {
      md::LaunchConfig cfg;
      cfg.grid = {uint32_t(k.info().sm_count) * blocks};
      cfg.block = {threads};
      cfg.warmup_launches = 0;
      char* lines = buf.get() + at;
      at += window;
      md::LaunchReport r;
      const memtopo::Counted c = k.ctx().backend().count(
          [&] { r = md::launch<sweep_stream<Op>>(k.ctx(), "sweep", cfg, lines, lines, window, sink.get()); },
          MT_COUNT_DRAM);
      REQUIRE(c.counted);
      const double dram = Op == MT_SWEEP_READ ? c.counts.dram_read_bytes : c.counts.dram_write_bytes;
      if (Op == MT_SWEEP_READ) CHECK(dram == Approx(double(window)).epsilon(0.03));
      most = std::max(most, dram / (r.elapsed_ms / 1e3));
    }
  return most;
}

}  // namespace

TEST_CASE("sim rates: no stream reads or writes DRAM faster than the description", "[sim][rates]") {
  const std::string which = GENERATE(std::string("hopper-like.toml"), std::string("h100-sxm.toml"));
  INFO(which);
  KernelContext k(which == "hopper-like.toml"
                      ? simtest::open_device(which)
                      : memtopo::engine::open_sim(simtest::measured_path(which), simtest::plugins_replay_map()));
  const toml::table t = which == "hopper-like.toml" ? simtest::read_device_file(which)
                                                    : toml::parse_file(simtest::measured_path(which));
  const double read = which == "hopper-like.toml" ? t["sim"]["memory"]["dram_read_bytes_per_second"].value_or(0.0)
                                                  : t["throughput"]["dram_read_bytes_per_second"].value_or(0.0);
  const double write = which == "hopper-like.toml" ? t["sim"]["memory"]["dram_write_bytes_per_second"].value_or(0.0)
                                                   : t["throughput"]["dram_write_bytes_per_second"].value_or(0.0);
  REQUIRE(read > 0);
  REQUIRE(write > 0);
  // Lines no launch touched: every read misses the L2; each write evicts a line it held dirty.
  // Twice the L2, at most 24 MiB (about half a replayed H100's L2: its 132 SMs stream 1 GB in
  // 3 s).
  const uint64_t window = std::min<uint64_t>(2 * uint64_t(k.info().l2_bytes), uint64_t(24) << 20);
  CHECK(highest_rate<MT_SWEEP_READ>(k, window) <= read * 1.01);
  CHECK(highest_rate<MT_SWEEP_WRITE>(k, window) <= write * 1.01);
}
