// t-cycle: two probes needing each other's keys.
#include <memtopo/probe.hpp>

static memtopo::Probe a() {
  return memtopo::Probe("t-cycle/a").provides({"t.a_bytes"}).requires_keys({"t.b_bytes"}).run([](memtopo::Context&) {});
}
static memtopo::Probe b() {
  return memtopo::Probe("t-cycle/b").provides({"t.b_bytes"}).requires_keys({"t.a_bytes"}).run([](memtopo::Context&) {});
}
MEMTOPO_PLUGIN("t-cycle", "1.0.0", a(), b())
