// t-bad-range: an option whose default lies outside its declared range; the host refuses the
// plugin at load, naming the option.
#include <memtopo/probe.hpp>

static memtopo::Probe probe() {
  return memtopo::Probe("t-bad-range/probe")
      .provides({"t.range_bytes"})
      .option("rounds", MT_VALUE_INT, "0", "timed rounds")
      .range("1", "100")
      .run([](memtopo::Context& ctx) { ctx.result("t.range_bytes", int64_t{1}); });
}
MEMTOPO_PLUGIN("t-bad-range", "1.0.0", probe())
