// t-keys: a drop-in plugin's element ([tma]) whose keys are described, a probe that reports a
// value of the wrong type for its declaration, and a probe that reports an integer for a
// declared float (stored as a float).
#include <memtopo/probe.hpp>

static memtopo::Probe tma() {
  return memtopo::Probe("t-keys/tma")
      .summary("tensor memory accelerator, as a drop-in plugin would measure it")
      .provides({"tma.latency_cycles", "tma.mode", "tma.tile_bytes", "tma.undescribed"})
      .key("tma.latency_cycles", MT_VALUE_FLOAT, "cycles", "latency of one bulk copy")
      .key("tma.mode", MT_VALUE_STRING, "", "the copy mode measured")
      .key("tma.tile_bytes", MT_VALUE_INT, "bytes", "bytes of one tile")
      .run([](memtopo::Context& ctx) {
        ctx.result("tma.latency_cycles", int64_t(480));  // an integer for a float: converted
        ctx.result("tma.mode", std::string("bulk"));
        ctx.result("tma.tile_bytes", int64_t(65536));
        ctx.result("tma.undescribed", int64_t(1));
      });
}
static memtopo::Probe wrong_type() {
  return memtopo::Probe("t-keys/wrong-type")
      .provides({"tma.copies"})
      .key("tma.copies", MT_VALUE_INT, "", "copies in flight")
      .run([](memtopo::Context& ctx) { ctx.result("tma.copies", std::string("many")); });
}
MEMTOPO_PLUGIN("t-keys", "1.0.0", tma(), wrong_type())
