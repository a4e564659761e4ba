// t-invariants: a probe whose keys keep three declared relations (one of each kind), or break
// all three with the option `contradict` (tests/host/test_invariants.cpp).
#include <memtopo/probe.hpp>

static memtopo::Probe counts() {
  return memtopo::Probe("t-invariants/counts")
      .summary("groups, their members and two latencies, consistent unless told otherwise")
      .provides({"inv.group_count", "inv.group_sizes", "inv.near_cycles", "inv.far_cycles"})
      .requires_keys({"device.sm_count"})
      .key("inv.group_count", MT_VALUE_INT, "", "groups")
      .key("inv.group_sizes", MT_VALUE_INT_ARRAY, "", "members of each group")
      .key("inv.near_cycles", MT_VALUE_FLOAT, "cycles", "the nearer level")
      .key("inv.far_cycles", MT_VALUE_FLOAT, "cycles", "the farther level")
      .invariant(MT_INVARIANT_EQUALS_COUNT, "inv.group_count", "inv.group_sizes", "one size per group")
      .invariant(MT_INVARIANT_SUM_EQUALS, "inv.group_sizes", "device.sm_count", "every SM is in one group")
      .invariant(MT_INVARIANT_LESS, "inv.near_cycles", "inv.far_cycles", "the nearer level answers sooner")
      .option("contradict", MT_VALUE_BOOL, "false", "break every relation")
      .run([](memtopo::Context& ctx) {
        const bool bad = ctx.option<bool>("contradict");
        const int64_t sms = ctx.input<int64_t>("device.sm_count");
        ctx.result("inv.group_count", int64_t(bad ? 3 : 2));
        ctx.result("inv.group_sizes", std::vector<int64_t>{sms / 2, sms - sms / 2 + (bad ? 1 : 0)});
        ctx.result("inv.near_cycles", bad ? 500.0 : 30.0);
        ctx.result("inv.far_cycles", 400.0);
      });
}

MEMTOPO_PLUGIN("t-invariants", "1.0.0", counts())
