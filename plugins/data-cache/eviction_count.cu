// The counted check of the L2's eviction sets (docs/cache-probes.md, "L2 eviction sets"): the
// lines of a minimal set with its target overflow the set, one line fewer fits, as the L2's
// read-hit counters see it, not only its timing.
#include "eviction_count.hpp"

#include <algorithm>
#include <optional>

#include <memtopo/device/kernel.hpp>

#include "eviction_count.cuh"

namespace data_cache {
namespace {

constexpr uint32_t kCountedPasses = 16;

// One launch per list, `passes` times over it, under the counters, after one pass outside them;
// less the counts of the same launches with no pass (the lists' own reads).
std::optional<memtopo::Counts> count_cycles(const memtopo::Context& ctx, const LineSpace& space,
                                            const std::vector<std::vector<uint32_t>>& lists, std::string& why_not) {
  namespace dev = memtopo::device;
  std::vector<uint32_t> all;
  for (const auto& l : lists) all.insert(all.end(), l.begin(), l.end());
  dev::Buffer<uint32_t> lines(ctx, all.size()), sink(ctx, 1);
  lines.upload(all);
  auto run = [&](uint32_t passes) {
    size_t first = 0;
    for (const auto& l : lists) {
      CycleArgs a{space.base, space.line_bytes, lines.get() + first, uint32_t(l.size()), passes, sink.get(), 0};
      dev::LaunchConfig cfg;
      cfg.grid = {1};
      cfg.block = {32};
      cfg.warmup_launches = 0;
      dev::launch<eviction_cycle>(ctx, "eviction_cycle", cfg, a);
      first += l.size();
    }
  };
  run(1);
  const uint32_t wanted = MT_COUNT_L2_READ | MT_COUNT_L2_HIT;
  const memtopo::Counted full = ctx.backend().count([&] { run(kCountedPasses); }, wanted);
  if (!full.counted) return why_not = full.why_not, std::nullopt;
  const memtopo::Counted none = ctx.backend().count([&] { run(0); }, wanted);
  if (!none.counted) return why_not = none.why_not, std::nullopt;
  return full.counts - none.counts;
}

std::string share_text(const memtopo::Counts& c) {
  return std::to_string(int64_t(c.l2_read_hit_bytes)) + " of " + std::to_string(int64_t(c.l2_read_bytes)) +
         " B read hit (" + std::to_string(int(100 * c.l2_read_hit_bytes / std::max(c.l2_read_bytes, 1.0) + 0.5)) + " %)";
}

}  // namespace

bool verify_l2_ways(const memtopo::Context& ctx, const LineSpace& space, const std::vector<EvictionSet>& sets,
                    uint32_t ways, const std::string& policy, memtopo::ResultInfo& info, std::string& why) {
  std::vector<std::vector<uint32_t>> over, fit;
  for (const auto& s : sets)
    if (s.complete && s.lines.size() == ways && ways + 1 <= kMaxCycleLines && over.size() < 4) {
      over.push_back({uint32_t(s.target)});
      for (uint64_t l : s.lines) over.back().push_back(uint32_t(l));
      fit.emplace_back(over.back().begin(), over.back().end() - 1);
    }
  if (over.empty()) return memtopo::mark_unverified(info, "no complete set to count"), true;
  std::string why_not;
  const auto o = count_cycles(ctx, space, over, why_not);
  const auto f = o ? count_cycles(ctx, space, fit, why_not) : std::nullopt;
  if (!o || !f) return memtopo::mark_unverified(info, why_not), true;
  if (o->l2_read_bytes <= 0 || f->l2_read_bytes <= 0 || o->l2_read_hit_bytes < 0 || f->l2_read_hit_bytes < 0)
    return memtopo::mark_unverified(info, "the counters gave no number for the L2's reads or hits"), true;
  // W + 1 lines of a W-way set miss at least once a pass, on every load under LRU and FIFO.
  const bool every_load_misses = policy == "lru" || policy == "fifo";
  const double over_most = every_load_misses ? 0.05 : double(ways) / double(ways + 1);
  const double over_share = o->l2_read_hit_bytes / o->l2_read_bytes, fit_share = f->l2_read_hit_bytes / f->l2_read_bytes;
  memtopo::Verdict v;
  v.agrees = over_share <= over_most && fit_share >= 0.95;
  v.counted_bytes = f->l2_read_hit_bytes;
  v.note = "x and its " + std::to_string(ways) + " lines " + std::to_string(kCountedPasses) + " times over: " +
           share_text(*o) + ", believed at most " + std::to_string(int(100 * over_most + 0.5)) + " %; x and " +
           std::to_string(ways - 1) + " of them: " + share_text(*f) + ", believed at least 95 % (" +
           std::to_string(over.size()) + " sets)";
  if (!v.agrees) return why = "the L2's counters disagree with the eviction sets' ways: " + v.note, false;
  memtopo::mark_verified(info, v, "the sets' lines cycled under the counters");
  return true;
}

}  // namespace data_cache
