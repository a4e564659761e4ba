// t-skips: a probe that skips deliberately.
#include <memtopo/probe.hpp>

static memtopo::Probe unsupported() {
  return memtopo::Probe("t-skips/unsupported")
      .provides({"t.unsupported_bytes"})
      .run([](memtopo::Context&) { throw memtopo::Skip("not supported on this device"); });
}
MEMTOPO_PLUGIN("t-skips", "1.0.0", unsupported())
