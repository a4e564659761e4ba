// t-bad-unit: a key description whose unit its key name does not carry; the host refuses the
// plugin at load, naming the file and the key.
#include <memtopo/probe.hpp>

static memtopo::Probe latency() {
  return memtopo::Probe("t-bad-unit/latency")
      .provides({"tma.latency"})
      .key("tma.latency", MT_VALUE_FLOAT, "cycles", "latency of one copy")
      .run([](memtopo::Context& ctx) { ctx.result("tma.latency", 1.0); });
}
MEMTOPO_PLUGIN("t-bad-unit", "1.0.0", latency())
