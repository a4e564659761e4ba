// t-undetermined: a probe that measures one key and cannot determine the other, a probe
// needing the undetermined key (skipped, cause chained) and one needing the kept key (runs).
#include <memtopo/probe.hpp>

static memtopo::Probe geometry() {
  return memtopo::Probe("t-undetermined/geometry")
      .provides({"t.fetch_bytes", "t.sets"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.fetch_bytes", 32);
        throw memtopo::NotDeterminable("a hashed set index hides the sets");
      });
}
static memtopo::Probe policy() {
  return memtopo::Probe("t-undetermined/policy")
      .provides({"t.policy"})
      .requires_keys({"t.sets"})
      .run([](memtopo::Context& ctx) { ctx.result("t.policy", std::string("lru")); });
}
static memtopo::Probe sector_user() {
  return memtopo::Probe("t-undetermined/sector-user")
      .provides({"t.twice_fetch_bytes"})
      .requires_keys({"t.fetch_bytes"})
      .run([](memtopo::Context& ctx) { ctx.result("t.twice_fetch_bytes", 2 * ctx.input<int64_t>("t.fetch_bytes")); });
}
MEMTOPO_PLUGIN("t-undetermined", "1.0.0", geometry(), policy(), sector_user())
