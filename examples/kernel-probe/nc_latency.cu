// example-kernel/nc-latency: a probe with its own kernel. The load-to-use latency of
// ld.global.nc (the read-only path) at one footprint, by a pointer chase written with the
// SDK's device toolkit and launched with its launch helper. The same kernel runs on a CUDA GPU
// and on the simulated GPU.
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

namespace {

using memtopo::device::Path;

// Chases `warm` loads untimed, then times `loads` dependent loads between two clock reads.
MEMTOPO_KERNEL void nc_chase(unsigned long long start, unsigned warm, unsigned loads, unsigned long long* cycles) {
  MEMTOPO_SHARED_VAR(unsigned, sink);
  const unsigned long long slot = memtopo::device::shared_address(&sink);
  unsigned long long p = start;
  for (unsigned i = 0; i < warm; ++i) p = memtopo::device::follow<Path::Readonly>(p);
  const unsigned long long t0 = memtopo::device::clock_after(unsigned(p), slot);
  for (unsigned i = 0; i < loads; ++i) p = memtopo::device::follow<Path::Readonly>(p);
  *cycles = memtopo::device::clock_after(unsigned(p), slot) - t0;
}

void measure(memtopo::Context& ctx) {
  const uint64_t footprint = uint64_t(ctx.option<int64_t>("footprint_bytes")), stride = 128;
  const uint64_t lines = footprint / stride, words = stride / 8;
  memtopo::device::Buffer<unsigned long long> buf(ctx, footprint / 8 + 1);
  std::vector<unsigned long long> chain(footprint / 8 + 1, 0);
  for (uint64_t i = 0; i < lines; ++i)  // line i points at line 5 i + 1 (one cycle when lines is a power of two)
    chain[i * words] = reinterpret_cast<unsigned long long>(buf.get() + (5 * i + 1) % lines * words);
  buf.upload(chain);
  memtopo::device::Buffer<unsigned long long> cycles(ctx, 1);
  const unsigned loads = 4096;
  const auto run = memtopo::device::launch<nc_chase>(ctx, "nc_chase", memtopo::device::LaunchConfig{},
                                                      reinterpret_cast<unsigned long long>(buf.get()),
                                                      unsigned(2 * lines), loads, cycles.get());
  const double per_load = double(cycles.download()[0]) / loads;
  ctx.result("example_kernel.nc_latency_cycles", per_load,
             {0.9, memtopo::Bound::Exact,
              "pointer chase over " + std::to_string(footprint) + " B, 128 B apart, " + std::to_string(loads) +
                  " loads; SM clock " + std::to_string(run.sm_clock_mhz_before) + " MHz"});
}

}  // namespace

MEMTOPO_PLUGIN("example-kernel", "1.0.0",
               memtopo::Probe("example-kernel/nc-latency")
                   .summary("Load-to-use latency of ld.global.nc at one footprint (the probe's own kernel)")
                   .provides({"example_kernel.nc_latency_cycles"})
                   .key("example_kernel.nc_latency_cycles", MT_VALUE_FLOAT, "cycles",
                        "cycles per dependent ld.global.nc load over a warm footprint", MT_KEY_HEADLINE)
                   .option("footprint_bytes", MT_VALUE_INT, "16384", "bytes chased (a power of two of 128 B lines)")
                   .range("128", "1073741824")
                   .run(measure))
