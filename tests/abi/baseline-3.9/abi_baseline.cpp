// abi-baseline: a plugin as a vendor built it against the SDK of ABI 3.9, compiled here against
// those headers (include/, copied unchanged) and nothing else of this tree, then loaded and run
// by the new host (baseline_test.cmake). It uses what a 3.8 plugin may: inputs, options with a
// range, key descriptions with 3.2, 3.4 and 3.5 flags, an invariant (3.3), a raw series, a timed
// chase on the backend, a key recorded absent with its reason (3.6), an opt-in probe (3.7), and
// the GPU's attachment, a timed link copy and a health key (3.8), and a key's role (3.9).
#include <memtopo/probe.hpp>

#include <string>
#include <vector>

static memtopo::Probe sm_count() {
  return memtopo::Probe("abi-baseline/sm-count")
      .summary("Twice the SM count, as a configuration key")
      .provides({"abi_baseline.twice_sm_count"})
      .requires_keys({"device.sm_count"})
      .option("factor", MT_VALUE_INT, "2", "what the SM count is multiplied by")
      .range("1", "4")
      .key("abi_baseline.twice_sm_count", MT_VALUE_INT, "", "the SM count times factor",
           MT_KEY_CONFIGURATION | MT_KEY_STRUCTURE | MT_KEY_ALWAYS)
      .role("abi_baseline.twice_sm_count", "gpu.twice_sm_count")
      .run([](memtopo::Context& ctx) {
        ctx.result("abi_baseline.twice_sm_count", ctx.input<int64_t>("device.sm_count") * ctx.option<int64_t>("factor"));
      });
}

static memtopo::Probe chase() {
  return memtopo::Probe("abi-baseline/chase")
      .summary("A timed chase of 4 KiB on SM 0")
      .provides({"abi_baseline.chase_cycles", "abi_baseline.far_chase_cycles"})
      .uses({"abi_baseline.twice_sm_count"})
      .key("abi_baseline.chase_cycles", MT_VALUE_FLOAT, "cycles", "average cycles of a load",
           MT_KEY_HEADLINE | MT_KEY_RATED)
      .invariant(MT_INVARIANT_LESS, "abi_baseline.chase_cycles", "dram.latency_cycles",
                 "a 4 KiB chase hits a cache, which is nearer than DRAM")
      .run([](memtopo::Context& ctx) {
        const memtopo::ChaseArray array = memtopo::ChaseArray::stride(4096, 128);
        memtopo::Job job;
        job.sm = 0;
        job.array = &array;
        job.warmup_steps = array.length();
        job.steps = 256;
        job.record = MT_RECORD_TOTAL;
        const memtopo::JobResult r = ctx.backend().run(job);
        ctx.raw("chase", {"steps", "average_cycles"}, {double(job.steps), r.average_cycles});
        ctx.result("abi_baseline.chase_cycles", r.average_cycles);
        ctx.absent("abi_baseline.far_chase_cycles", "no far chase in this plugin");
      });
}

// Left out unless named (3.7).
static memtopo::Probe costly() {
  return memtopo::Probe("abi-baseline/costly")
      .summary("The SM count again, only when asked for")
      .provides({"abi_baseline.costly_sm_count"})
      .requires_keys({"device.sm_count"})
      .key("abi_baseline.costly_sm_count", MT_VALUE_INT, "", "the SM count")
      .opt_in()
      .run([](memtopo::Context& ctx) { ctx.result("abi_baseline.costly_sm_count", ctx.input<int64_t>("device.sm_count")); });
}

// Where the GPU sits and one timed copy (3.8).
static memtopo::Probe link() {
  return memtopo::Probe("abi-baseline/link")
      .summary("The PCIe link's verdict and one timed copy")
      .provides({"abi_link.pcie", "abi_link.copy_ns"})
      .key("abi_link.pcie", MT_VALUE_STRING, "", "ok where the link trained at its maximum width", MT_KEY_HEALTH)
      .key("abi_link.copy_ns", MT_VALUE_FLOAT, "", "one copy of 1 MiB to the GPU")
      .run([](memtopo::Context& ctx) {
        mt_attachment a{};
        std::string why;
        if (!ctx.backend().attachment(a, why)) throw memtopo::Skip(why);
        ctx.result("abi_link.pcie", std::string(a.pcie_width_lanes == a.pcie_width_max_lanes ? "ok" : "narrow"));
        const memtopo::LinkCopies c = ctx.backend().time_link_copies(MT_LINK_HOST_TO_DEVICE, 1 << 20, 1);
        if (c.elapsed_ns.empty()) throw memtopo::Skip(c.why_not);
        ctx.result("abi_link.copy_ns", c.elapsed_ns[0]);
      });
}

MEMTOPO_PLUGIN("abi-baseline", "1.0.0", sm_count(), chase(), costly(), link())
