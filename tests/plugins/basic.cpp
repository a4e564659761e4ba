// t-basic: a provider and a consumer, an option, a raw series, a used (optional) key.
#include <memtopo/probe.hpp>

static memtopo::Probe source() {
  return memtopo::Probe("t-basic/source")
      .summary("provides t.value_bytes")
      .provides({"t.value_bytes", "t.latency_cycles", "t.label", "t.sizes_bytes"})
      .role("t.latency_cycles", "memory.latency_cycles@test")  // shown first by the summary
      .option("value", MT_VALUE_INT, "42", "the value to report")
      .run([](memtopo::Context& ctx) {
        ctx.progress(0.5, "halfway");
        ctx.result("t.value_bytes", ctx.option<int64_t>("value"));
        ctx.result("t.latency_cycles", 12.5, {0.9, memtopo::Bound::AtLeast, "test note"});
        ctx.result("t.label", std::string("hello \"world\""));
        ctx.result("t.sizes_bytes", std::vector<int64_t>{1, 2, 4});
        ctx.raw("curve", {"x", "y"}, {1, 10, 2, 20});
      });
}

static memtopo::Probe consumer() {
  return memtopo::Probe("t-basic/consumer")
      .summary("doubles t.value_bytes")
      .provides({"t.double_bytes", "t.saw_optional"})
      .requires_keys({"t.value_bytes"})
      .uses({"t.optional_bytes"})
      .option("factor", MT_VALUE_FLOAT, "2", "multiplier")
      .run([](memtopo::Context& ctx) {
        ctx.result("t.double_bytes",
                   static_cast<int64_t>(ctx.input<int64_t>("t.value_bytes") * ctx.option<double>("factor")));
        ctx.result("t.saw_optional", ctx.try_input<int64_t>("t.optional_bytes").has_value());
      });
}

// Misbehaves at the boundary: a key it did not declare, then a wrong type for a unit key.
static memtopo::Probe rogue() {
  return memtopo::Probe("t-basic/rogue")
      .summary("puts an undeclared key")
      .provides({"t.rogue_bytes"})
      .run([](memtopo::Context& ctx) {
        ctx.result("t.undeclared", 1);  // refused: the host turns it into an Error -> FAILED
      });
}

MEMTOPO_PLUGIN("t-basic", "1.2.3", source(), consumer(), rogue())
