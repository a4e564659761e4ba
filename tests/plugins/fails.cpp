// t-fails: a probe that fails, and one that needs its key (skipped with a chained reason).
#include <memtopo/probe.hpp>

static memtopo::Probe broken() {
  return memtopo::Probe("t-fails/broken")
      .provides({"t.broken_bytes"})
      .run([](memtopo::Context&) { throw memtopo::Error("the test probe fails on purpose"); });
}
static memtopo::Probe dependent() {
  return memtopo::Probe("t-fails/dependent")
      .provides({"t.dependent_bytes"})
      .requires_keys({"t.broken_bytes"})
      .run([](memtopo::Context& ctx) { ctx.result("t.dependent_bytes", 1); });
}
MEMTOPO_PLUGIN("t-fails", "1.0.0", broken(), dependent())
