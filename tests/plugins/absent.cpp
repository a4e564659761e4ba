// t-absent: every declared key is stored or absent with its reason (ABI 3.6, put_absent).
#include <memtopo/probe.hpp>

static memtopo::Probe level() {
  return memtopo::Probe("t-absent/level")
      .provides({"t.near_cycles", "t.far_cycles", "t.unsaid_bytes"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.near_cycles", 200.0);
        ctx.absent("t.far_cycles", "one partition: no far line");
      });
}
static memtopo::Probe far_user() {
  return memtopo::Probe("t-absent/far-user")
      .provides({"t.far_twice_cycles"})
      .requires_keys({"t.far_cycles"})
      .run([](memtopo::Context& ctx) { ctx.result("t.far_twice_cycles", 2 * ctx.input<double>("t.far_cycles")); });
}
static memtopo::Probe stored_then_absent() {
  return memtopo::Probe("t-absent/stored-then-absent")
      .provides({"t.both_bytes"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.both_bytes", int64_t(64));
        ctx.absent("t.both_bytes", "changed its mind");
      });
}
static memtopo::Probe foreign() {
  return memtopo::Probe("t-absent/foreign")
      .provides({"t.own_bytes"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.own_bytes", int64_t(8));
        ctx.absent("t.near_cycles", "not mine");
      });
}
MEMTOPO_PLUGIN("t-absent", "1.0.0", level(), far_user(), stored_then_absent(), foreign())
