// t-missing: needs a key no probe provides, and a probe needing the orphan's key.
#include <memtopo/probe.hpp>

static memtopo::Probe orphan() {
  return memtopo::Probe("t-missing/orphan")
      .provides({"t.orphan_bytes"})
      .requires_keys({"nowhere.value_bytes"})
      .run([](memtopo::Context&) {});
}
static memtopo::Probe grandchild() {
  return memtopo::Probe("t-missing/grandchild")
      .provides({"t.grandchild_bytes"})
      .requires_keys({"t.orphan_bytes"})
      .run([](memtopo::Context&) {});
}
MEMTOPO_PLUGIN("t-missing", "1.0.0", orphan(), grandchild())
