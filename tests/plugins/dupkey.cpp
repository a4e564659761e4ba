// t-dupkey: provides t.value_bytes, which t-basic/source provides too.
#include <memtopo/probe.hpp>

static memtopo::Probe again() {
  return memtopo::Probe("t-dupkey/again").provides({"t.value_bytes"}).run([](memtopo::Context& ctx) {
    ctx.result("t.value_bytes", 1);
  });
}
MEMTOPO_PLUGIN("t-dupkey", "1.0.0", again())
