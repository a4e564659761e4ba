// dup: built twice (dup-a/dup.so version 1.0.0, dup-b/dup.so version 2.0.0).
#include <memtopo/probe.hpp>

static memtopo::Probe probe() {
  return memtopo::Probe("dup/probe").provides({"dup.value_bytes"}).run([](memtopo::Context& ctx) {
    ctx.result("dup.value_bytes", 1);
  });
}
MEMTOPO_PLUGIN("dup", DUP_VERSION, probe())
