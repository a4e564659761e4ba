// constant: the per-SM constant L1 and the per-GPC constant L1.5 behind it, both read with
// ld.const. CUDA caps constant memory at 64 KiB per module; the backends let a chase go on
// into the kernel-parameter bank, which the same caches hold (docs/cache-probes.md), so the
// L1.5 is searched up to that reach (95 KiB on Volta and later). An L1.5 without capacity
// misses there is reported as "at least" the reach, with the reason.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/cache_procedure.hpp>
#include <memtopo/probe.hpp>

namespace {
using memtopo::Context;
using memtopo::Probe;

uint64_t constant_limit(const Context& ctx) {
  return ctx.device().constant_memory_bytes > 0 ? uint64_t(ctx.device().constant_memory_bytes) : 65536;
}

uint64_t constant_reach(const Context& ctx) { return std::max(constant_limit(ctx), ctx.constant_reach_bytes()); }

std::string reach_reason(const Context& ctx) {
  const uint64_t mem = constant_limit(ctx), reach = constant_reach(ctx);
  std::string r = "the most one kernel reads through the constant caches: " + std::to_string(mem) +
                  " bytes of constant memory";
  if (reach > mem) r += " and " + std::to_string(reach - mem) + " bytes of kernel parameters";
  return r;
}

memtopo::cache::Target l1_target(const Context& ctx) {
  memtopo::cache::Target t;
  t.space = MT_SPACE_CONSTANT;
  t.element = "constant_l1";
  t.reference_bytes = 256;
  t.search_start_bytes = 256;
  t.search_limit_bytes = constant_limit(ctx);
  t.max_footprint_bytes = constant_limit(ctx);
  return t;
}

// The L1.5 is measured from footprints that overflow the constant L1: the reference is four
// times the L1, so its loads miss L1 and hit L1.5, which makes L1.5 the hit level.
memtopo::cache::Target l15_target(const Context& ctx) {
  memtopo::cache::Target t;
  t.space = MT_SPACE_CONSTANT;
  t.element = "constant_l15";
  t.shared_between_sms = true;  // one L1.5 per GPC: footprints on other SMs may share it
  const uint64_t l1 = uint64_t(ctx.input<int64_t>("constant_l1.size_bytes"));
  // One load per constant-L1 line: a second word of a line would hit the L1 in front, and
  // such hits mixed into the reference and the hit chase pull the L1.5's level towards the
  // L1's (on the H100 to 62 cycles, docs/results/log/h100.md).
  if (const auto l1_line = ctx.try_input<int64_t>("constant_l1.line_bytes"); l1_line && uint64_t(*l1_line) > t.stride_bytes)
    t.stride_bytes = uint64_t(*l1_line);
  // Twice an LRU or FIFO constant L1 misses it on every load of a cyclic sweep; four times
  // where its victims are random or its policy is not known. Four times an L1 of a quarter of
  // the L1.5 would be the whole L1.5 (random simulated devices: the size came out a bound, the
  // line 512 B for 256 from that reference).
  const auto l1_policy = ctx.try_input<std::string>("constant_l1.replacement_policy");
  const uint64_t times = l1_policy && (*l1_policy == "lru" || *l1_policy == "fifo") ? 2 : 4;
  t.reference_bytes = std::min<uint64_t>(times * l1, constant_limit(ctx) / 2);
  // The hit latency's chase steps by the L1.5's line, which may put all its lines into a few
  // L1 sets: four times the L1 overflows those (twice did not: seeds 27 and 37 read an L1 hit).
  t.latency_bytes = std::min<uint64_t>(4 * l1, constant_limit(ctx) / 2);
  // The search starts at the reference, which the L1.5 holds (its hit level): an L1.5 four
  // times a randomly replaced L1 is as large as the reference, and a start at twice it missed
  // at once (a random device's 32 KiB read "at most 64 KiB").
  t.search_start_bytes = std::min<uint64_t>(t.reference_bytes, constant_limit(ctx));
  t.search_limit_bytes = constant_reach(ctx);
  t.search_limit_reason = reach_reason(ctx);
  t.max_footprint_bytes = constant_reach(ctx);
  return t;
}

// The constant L1 in front of the L1.5, where its geometry is measured and its index modulo:
// lines one L1.5 set apart share one L1 set, which would keep them (its ways read as the
// L1.5's).
memtopo::cache::Target::Front l1_in_front(const Context& ctx) {
  memtopo::cache::Target::Front f;
  const auto sets = ctx.try_input<int64_t>("constant_l1.sets"), ways = ctx.try_input<int64_t>("constant_l1.ways"),
             line = ctx.try_input<int64_t>("constant_l1.line_bytes");
  const auto mapping = ctx.try_input<std::string>("constant_l1.set_mapping");
  const auto policy = ctx.try_input<std::string>("constant_l1.replacement_policy");
  if (!sets || !ways || !line || *sets <= 0 || *ways <= 0 || *line <= 0 || !mapping || *mapping != "modulo") return f;
  f.set_stride_bytes = uint64_t(*sets) * uint64_t(*line);
  f.ways = uint64_t(*ways);
  f.line_bytes = uint64_t(*line);
  f.random = !policy || (*policy != "lru" && *policy != "fifo");
  return f;
}

std::vector<Probe> all_probes() {
  std::vector<Probe> probes;
  memtopo::cache::ElementSpec l1{"constant", "constant_l1", "Constant L1 cache", l1_target, {}, {}};
  l1.subject = "constant_cache";
  memtopo::cache::ElementSpec l15{"constant",   "constant_l15", "Constant L1.5 cache", l15_target,
                                  {"constant_l1.size_bytes"}, {"constant_l1.line_bytes", "constant_l1.replacement_policy"}};
  l15.subject = "constant_cache_l15";
  l15.geometry_uses = {"constant_l1.sets", "constant_l1.ways", "constant_l1.set_mapping"};
  l15.front = l1_in_front;
  for (const auto* spec : {&l1, &l15})
    for (auto& p : memtopo::cache::element_probes(*spec)) probes.push_back(std::move(p));
  return probes;
}

}  // namespace

MEMTOPO_PLUGIN("constant", "1.0.0", all_probes())
