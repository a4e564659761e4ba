// tlb/l1d-virtual: whether an L1 data cache hit needs a translation. Chases through the L1
// (.ca) over lines of more pages than the L1 TLB holds, all of them L1 hits: a virtually
// tagged L1 answers them as fast as lines of a few pages (Mei and Chu saw this on Maxwell);
// a physically tagged one pays the L1 TLB's misses.
#include "probes.hpp"

#include <string>

#include "tlb_chase.hpp"

namespace tlb {
namespace {

void measure_virtual_tag(memtopo::Context& ctx) {
  const uint64_t e = uint64_t(ctx.input<int64_t>("tlb.l1_entries"));
  const uint64_t pg = uint64_t(ctx.input<int64_t>("tlb.l1_page_bytes"));
  const double penalty = ctx.input<double>("tlb.l1_miss_penalty_cycles");
  uint64_t many = 2 * e + 2;
  if (const auto e2 = ctx.try_input<int64_t>("tlb.l2_entries")) many = std::min<uint64_t>(many, uint64_t(*e2));
  const uint64_t few = std::max<uint64_t>(e / 2, 1);
  if (many <= e) throw memtopo::NotDeterminable("the L2 TLB holds no more pages than the L1 TLB");
  // Every line must stay in the L1: at most a quarter of its lines.
  if (const auto l1 = ctx.try_input<int64_t>("l1d.size_bytes"); l1 && many * 128 * 4 > uint64_t(*l1))
    throw memtopo::Skip(std::to_string(many) + " lines do not fit a quarter of the L1 data cache");
  if (many * (pg + 128) > footprint_limit(ctx)) throw memtopo::Skip("the chase does not fit the footprint limit");
  // A page and a line apart: consecutive lines, which fall into different L1 sets under the
  // usual index functions (a 4 KiB step as well would meet XOR hashes of bit 7 and bit 12).
  const uint64_t stride = pg + 128;
  if (many * 128 >= pg) throw memtopo::Skip(std::to_string(many) + " lines do not fit one per page");
  const Chaser ca(ctx, MT_SPACE_GLOBAL_CA), cg(ctx, MT_SPACE_GLOBAL_CG);
  const double ca_few = ca.cycles(few, stride), ca_many = ca.cycles(many, stride);
  const double cg_few = cg.cycles(few, stride), cg_many = cg.cycles(many, stride);
  ctx.raw("chases", {"pages_few", "pages_many", "ca_few", "ca_many", "cg_few", "cg_many"},
          {double(few), double(many), ca_few, ca_many, cg_few, cg_many});
  if (!(ca_few < 0.8 * cg_few) || !(ca_many < 0.8 * cg_many))
    throw memtopo::NotDeterminable(".ca loads over " + std::to_string(few) + " and " + std::to_string(many) +
                                   " pages cost " + std::to_string(int(ca_few + 0.5)) + " and " +
                                   std::to_string(int(ca_many + 0.5)) + " cycles, .cg " +
                                   std::to_string(int(cg_few + 0.5)) + " and " + std::to_string(int(cg_many + 0.5)) +
                                   ": they do not all hit an L1");
  const bool translated = ca_many - ca_few > 0.5 * penalty;
  const std::string note = "L1 hits over " + std::to_string(few) + " pages cost " + std::to_string(int(ca_few + 0.5)) +
                           " cycles, over " + std::to_string(many) + " pages (beyond the L1 TLB's " +
                           std::to_string(e) + ") " + std::to_string(int(ca_many + 0.5)) + "; an L1 TLB miss costs " +
                           std::to_string(int(penalty + 0.5));
  ctx.result("tlb.l1d_hit_translated", translated, memtopo::ResultInfo{0.9, memtopo::Bound::Exact, note});
}

}  // namespace

memtopo::Probe virtual_tag_probe() {
  return memtopo::Probe("tlb/l1d-virtual")
      .summary("Whether an L1 data cache hit waits for a translation (false: the L1 is virtually tagged)")
      .provides({"tlb.l1d_hit_translated"})
      .requires_keys({"tlb.l1_entries", "tlb.l1_page_bytes", "tlb.l1_miss_penalty_cycles"})
      .uses({"tlb.l2_entries", "l1d.size_bytes"})
      .replays("tlb.l1d_hit_translated", "sim.tlb.translate_on_l1_hit")
      .key("tlb.l1d_hit_translated", MT_VALUE_BOOL, "", "an L1 data hit pays L1 TLB misses (false: virtually tagged L1)")
      .option("max_footprint_bytes", MT_VALUE_INT, "0", "largest chase footprint (0: three quarters of the device memory)")
      .range("0", "1125899906842624")
      .budget_seconds(30)
      .run(measure_virtual_tag);
}

}  // namespace tlb
