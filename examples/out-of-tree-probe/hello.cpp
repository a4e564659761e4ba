// example-vendor/hello: the smallest useful probe. It reads a key another probe provides
// (device-info's SM count) and reports one result.
#include <memtopo/probe.hpp>

static memtopo::Probe hello() {
  return memtopo::Probe("example-vendor/hello")
      .summary("Says hello: twice the SM count")
      .provides({"example.answer"})
      .requires_keys({"device.sm_count"})
      .run([](memtopo::Context& ctx) {
        ctx.info("hello from an out-of-tree probe");
        ctx.result("example.answer", ctx.input<int64_t>("device.sm_count") * 2);
      });
}

MEMTOPO_PLUGIN("example-vendor", "1.0.0", hello())
