// data-cache/l1d-eviction-sets and l2-eviction-sets: a cache's ways from minimal eviction sets
// and its set-index function as XOR parities of address bits, where a hashed index hides the
// sets from strides (docs/cache-probes.md, "Eviction sets and the set-index function"). The
// kernel (eviction_kernel.cuh) reduces a random pool per target on an SM of its own; this file
// draws the pools, reads the sets, solves for the parities over GF(2) and tests what they predict.
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <memtopo/analysis/gf2.hpp>
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "eviction_analysis.hpp"
#include "eviction_count.hpp"
#include "eviction_kernel.cuh"
#include "eviction_policy.cuh"
#include "eviction_sets.hpp"

namespace data_cache {
namespace {

struct Settings {
  uint32_t targets, passes, trials, max_tests;
  double pool_factor;
  uint64_t buffer_bytes;
  int carveout;
  double max_pool_loads;
  // A flush before each trial (EvictionArgs::flush_lines; 0: none), where reductions without
  // one found no set.
  unsigned long long flush = 0;
  uint32_t flush_lines = 0;
};

Settings settings_of(const memtopo::Context& ctx, const EvictionLevel& level) {
  // The L2 probe has no carveout option: the L1's size does not matter to it.
  const int carveout = level.l2_path ? -1 : int(ctx.option<int64_t>("carveout_percent"));
  return Settings{uint32_t(ctx.option<int64_t>("targets")), uint32_t(ctx.option<int64_t>("passes")),
                  uint32_t(ctx.option<int64_t>("trials")),  uint32_t(ctx.option<int64_t>("max_tests")),
                  ctx.option<double>("pool_factor"),        uint64_t(ctx.option<int64_t>("buffer_bytes")),
                  carveout,                                 ctx.option<double>("max_pool_loads")};
}

// The SM claim table and the ticket counter of one launch of the eviction kernels, zeroed.
struct Tickets {
  explicit Tickets(const memtopo::Context& ctx)
      : slots(uint32_t(std::max(ctx.device().sm_count, 1)) * 2), next(ctx, 1), owner(ctx, slots) {
    next.zero();
    owner.zero();
  }
  uint32_t slots;  // smid may exceed the SM count
  memtopo::device::Buffer<uint32_t> next;
  memtopo::device::Buffer<int32_t> owner;
};

// Runs the kernel on `pools` (one per target, all of `pool` lines) and reads the sets back.
// A shared cache (one_target_at_a_time) gets one launch of one block per target.
std::vector<EvictionSet> reduce_launch(const memtopo::Context& ctx, const Settings& st, const EvictionLevel& level,
                                       const LineSpace& space, const std::vector<uint64_t>& targets,
                                       const std::vector<std::vector<uint64_t>>& pools) {
  namespace dev = memtopo::device;
  const uint32_t count = uint32_t(targets.size()), pool = uint32_t(pools.empty() ? 0 : pools[0].size());
  std::vector<uint32_t> t32(targets.begin(), targets.end()), l32;
  for (const auto& p : pools) l32.insert(l32.end(), p.begin(), p.end());
  dev::Buffer<uint32_t> tbuf(ctx, count), lists(ctx, l32.size());
  Tickets tickets(ctx);
  dev::Buffer<unsigned long long> out(ctx, size_t(count) * kOutStride);
  tbuf.upload(t32);
  lists.upload(l32);
  out.zero();
  EvictionArgs a{space.base,   space.line_bytes, tbuf.get(), lists.get(), pool,      count, st.passes,
                 st.trials,    st.max_tests,     (unsigned long long)(st.max_pool_loads * pool),
                 tickets.owner.get(), tickets.slots, tickets.next.get(), out.get(), 0,
                 level.l2_path ? 1u : 0u, level.threshold_permille, st.flush_lines, st.flush};
  dev::LaunchConfig cfg;
  cfg.grid = {level.one_target_at_a_time ? 1u : uint32_t(std::max(ctx.device().sm_count, 1))};
  cfg.block = {level.block_threads};
  cfg.shared_carveout_percent = st.carveout;
  cfg.warmup_launches = 0;  // the kernel rewrites the lists
  dev::launch<eviction_sets>(ctx, "eviction_sets", cfg, a);
  const auto o = out.download();
  std::vector<EvictionSet> sets(count);
  for (uint32_t t = 0; t < count; ++t) {
    const unsigned long long* r = o.data() + size_t(t) * kOutStride;
    EvictionSet& s = sets[t];
    s.target = targets[t];
    s.pool_evicts = r[kPoolEvicts] != 0;
    s.complete = r[kComplete] != 0 && r[kSetLines] <= kMaxSetLines;
    s.tests = r[kTests];
    s.sm = uint32_t(r[kSm]);
    s.lines_loaded = r[kLines];
    for (uint64_t i = 0; i < r[kSetLines] && i < kMaxSetLines; ++i) s.lines.push_back(r[kOutHeader + i]);
    for (int i = 0; i < 8; ++i) s.calibration.push_back(uint32_t(r[kCalibration + i]));
    const uint64_t hit = r[kHitRaw], miss = r[kMissRaw];
    s.threshold = uint32_t(miss > hit ? hit + (miss - hit) * level.threshold_permille / 1000 : hit);
    // No hit/miss separation: the verdicts mean nothing, the target counts as not reduced.
    if (r[kHitRaw] + 8 > r[kMissRaw]) s.pool_evicts = s.complete = false, s.separated = false;
  }
  return sets;
}

std::vector<EvictionSet> reduce(const memtopo::Context& ctx, const Settings& st, const EvictionLevel& level,
                                const LineSpace& space, const std::vector<uint64_t>& targets,
                                const std::vector<std::vector<uint64_t>>& pools) {
  if (!level.one_target_at_a_time) return reduce_launch(ctx, st, level, space, targets, pools);
  std::vector<EvictionSet> sets;
  for (size_t t = 0; t < targets.size(); ++t)
    for (auto& s : reduce_launch(ctx, st, level, space, {targets[t]}, {pools[t]})) sets.push_back(std::move(s));
  return sets;
}

void keep_raw(const memtopo::Context& ctx, const std::string& element, const std::vector<EvictionSet>& sets) {
  std::vector<double> cal;
  for (const auto& s : sets) {
    cal.insert(cal.end(), {double(s.target), double(s.sm), double(s.tests), double(s.lines_loaded)});
    for (uint32_t c : s.calibration) cal.push_back(double(c));
  }
  ctx.raw(element + "_eviction_calibration",
          {"target_line", "sm", "tests", "lines_loaded", "miss0", "miss1", "miss2", "miss3", "hit0", "hit1", "hit2", "hit3"}, cal);
  std::vector<double> rows;
  for (const auto& s : sets)
    for (uint64_t m : s.lines)
      rows.insert(rows.end(), {double(s.target), double(m), double(s.lines.size()), double(s.complete), double(s.sm)});
  ctx.raw(element + "_eviction_sets", {"target_line", "member_line", "set_lines", "complete", "sm"}, rows);
}

// Tests the parities' predictions on the device; returns how many came true, of how many.
std::pair<size_t, size_t> verify(const memtopo::Context& ctx, const Settings& st, const EvictionLevel& level,
                                 const LineSpace& space,
                                 const std::vector<uint64_t>& parities, uint32_t ways, const std::vector<EvictionSet>& sets,
                                 std::mt19937_64& rng) {
  std::vector<uint64_t> xs;
  for (const auto& s : sets)
    if (xs.size() < 8) xs.push_back(s.target);
  while (xs.size() < 4) xs.push_back(rng() % space.lines);  // at least 12 predictions
  const auto pred = predictions(xs, parities, ways, space, rng);
  if (pred.empty()) return {0, 1};
  std::vector<uint64_t> targets;
  std::vector<std::vector<uint64_t>> pools;
  for (const auto& p : pred) targets.push_back(p.target), pools.push_back(p.pool);
  Settings one = st;
  one.max_tests = 1;  // only the pool's verdict
  const auto r = reduce(ctx, one, level, space, targets, pools);
  size_t right = 0;
  std::vector<size_t> wrong;
  for (size_t i = 0; i < pred.size(); ++i) {
    if (r[i].pool_evicts == pred[i].evicts) ++right;
    else wrong.push_back(i);
  }
  // One interrupted load can turn one verdict (a noisy simulated device: 11 of 12): a few
  // predictions that did not come true are tested twice more, and count where both do.
  if (wrong.empty() || wrong.size() * 4 > pred.size()) return {right, pred.size()};
  std::vector<uint64_t> again_targets;
  std::vector<std::vector<uint64_t>> again_pools;
  for (size_t i : wrong) again_targets.push_back(targets[i]), again_pools.push_back(pools[i]);
  const auto r1 = reduce(ctx, one, level, space, again_targets, again_pools);
  const auto r2 = reduce(ctx, one, level, space, again_targets, again_pools);
  for (size_t k = 0; k < wrong.size(); ++k) {
    const bool evicts = pred[wrong[k]].evicts;
    if (r1[k].pool_evicts == evicts && r2[k].pool_evicts == evicts) ++right;
  }
  return {right, pred.size()};
}

std::vector<std::string> texts(const std::vector<uint64_t>& masks) {
  std::vector<std::string> out;
  for (uint64_t m : masks) out.push_back(memtopo::analysis::xor_text(m));
  return out;
}

// `count` targets, each with a pool of `pool` other lines, all distinct within a target.
void draw(uint32_t count, uint32_t pool, uint64_t lines, std::mt19937_64& rng, std::vector<uint64_t>& targets,
          std::vector<std::vector<uint64_t>>& pools) {
  std::vector<bool> used(lines, false);
  for (uint32_t t = 0; t < count; ++t) {
    std::vector<uint64_t> drawn;
    while (drawn.size() < size_t(pool) + 1) {
      const uint64_t l = rng() % lines;
      if (!used[l]) used[l] = true, drawn.push_back(l);
    }
    for (uint64_t l : drawn) used[l] = false;
    targets.push_back(drawn[0]);
    pools.emplace_back(drawn.begin() + 1, drawn.end());
  }
}

// The replacement within up to 8 complete sets of `ways` lines (eviction_policy.cuh), each on
// an SM of its own (one launch per set for a shared cache).
PolicyFinding test_policy(const memtopo::Context& ctx, const Settings& st, const EvictionLevel& level,
                          const LineSpace& space, const std::vector<EvictionSet>& sets, uint32_t ways, uint32_t trials) {
  namespace dev = memtopo::device;
  std::vector<const EvictionSet*> chosen;
  for (const auto& s : sets)
    if (s.complete && s.lines.size() == ways && chosen.size() < 8) chosen.push_back(&s);
  if (chosen.empty() || ways > kMaxPolicyWays) return {};
  std::vector<std::vector<uint64_t>> misses;
  std::vector<uint64_t> scan_misses;
  const size_t per_launch = level.one_target_at_a_time ? 1 : chosen.size();
  for (size_t first = 0; first < chosen.size(); first += per_launch) {
    const uint32_t count = uint32_t(std::min(per_launch, chosen.size() - first));
    std::vector<uint32_t> lines, thresholds;
    for (uint32_t t = 0; t < count; ++t) {
      const EvictionSet& s = *chosen[first + t];
      lines.push_back(uint32_t(s.target));
      for (uint64_t l : s.lines) lines.push_back(uint32_t(l));
      thresholds.push_back(s.threshold);
    }
    dev::Buffer<uint32_t> lbuf(ctx, lines.size()), tbuf(ctx, count);
    Tickets tickets(ctx);
    dev::Buffer<unsigned long long> out(ctx, size_t(count) * (ways + 1));
    lbuf.upload(lines);
    tbuf.upload(thresholds);
    out.zero();
    PolicyArgs a{space.base,   space.line_bytes, lbuf.get(),          tbuf.get(),    ways,      count, trials,
                 level.l2_path ? 1u : 0u,        tickets.owner.get(), tickets.slots, tickets.next.get(), out.get(), 0};
    dev::LaunchConfig cfg;
    cfg.grid = {level.one_target_at_a_time ? 1u : uint32_t(std::max(ctx.device().sm_count, 1))};
    cfg.block = {32};
    cfg.shared_carveout_percent = st.carveout;  // the L1 of the reductions: its sets are theirs
    cfg.warmup_launches = 0;
    dev::launch<eviction_policy>(ctx, "eviction_policy", cfg, a);
    const auto o = out.download();
    for (uint32_t t = 0; t < count; ++t) {
      const auto first_of_set = o.begin() + size_t(t) * (ways + 1);
      misses.emplace_back(first_of_set, first_of_set + ways);
      scan_misses.push_back(first_of_set[ways]);
    }
  }
  // Position W is the scan trial's x.
  std::vector<double> rows;
  for (size_t t = 0; t < misses.size(); ++t)
    for (size_t p = 0; p <= misses[t].size(); ++p)
      rows.insert(rows.end(), {double(chosen[t]->target), double(p),
                               double(p < misses[t].size() ? misses[t][p] : scan_misses[t]), double(trials),
                               double(chosen[t]->threshold)});
  ctx.raw(level.element + "_eviction_policy", {"target_line", "position", "misses", "trials", "threshold_cycles"}, rows);
  return policy_of(misses, scan_misses, trials);
}

void report_policy(memtopo::Context& ctx, const EvictionLevel& level, const PolicyFinding& p) {
  // The fractions are measured even where they name no policy (the note says why).
  const std::string why = p.note.empty() ? "not measured" : p.note;
  if (!p.victim_fractions.empty())
    ctx.result(level.element + ".eviction_set_victim_fractions", p.victim_fractions, {0.8, memtopo::Bound::Exact, p.note});
  else ctx.absent(level.element + ".eviction_set_victim_fractions", why);
  if (p.found) ctx.result(level.element + ".eviction_set_policy", p.policy, {0.8, memtopo::Bound::Exact, p.note});
  else ctx.absent(level.element + ".eviction_set_policy", why);
}

struct Findings {
  std::vector<EvictionSet> sets;
  WaysFinding ways;
  IndexFinding index;
};

// Whether the parities name every set: of the cache's lines, or of all partitions' lines (a
// shared cache whose sets count over its partitions).
bool names_every_set(const IndexFinding& f, const std::vector<uint64_t>& set_counts) {
  if (f.differences == 0 || f.parities.size() >= 63) return false;
  for (uint64_t n : set_counts)
    if (n > 1 && (uint64_t(1) << f.parities.size()) == n) return true;
  return false;
}

std::vector<uint64_t> set_counts_of(const EvictionLevel& level, uint64_t line, uint64_t cache_lines, uint32_t ways) {
  std::vector<uint64_t> counts{cache_lines / std::max<uint32_t>(ways, 1)};
  if (level.total_bytes) counts.push_back(level.total_bytes / line / std::max<uint32_t>(ways, 1));
  return counts;
}

// Rounds of targets, 2 then twice as many, until the parities name every set, a round of 8
// or more targets left the differences' rank as it was, or `targets` are done.
Findings find_sets(const memtopo::Context& ctx, const Settings& st, const EvictionLevel& level, const LineSpace& space,
                   uint64_t cache_lines, uint32_t pool, std::mt19937_64& rng) {
  Findings out;
  for (uint32_t round = 2, done = 0, last_rank = 0; done < st.targets; round *= 2) {
    std::vector<uint64_t> targets;
    std::vector<std::vector<uint64_t>> pools;
    draw(std::min(round, st.targets - done), pool, space.lines, rng, targets, pools);
    ctx.progress(0.1 + 0.6 * done / st.targets, "eviction sets of " + std::to_string(targets.size()) + " targets");
    for (auto& s : reduce(ctx, st, level, space, targets, pools)) out.sets.push_back(std::move(s));
    done += uint32_t(targets.size());
    out.ways = ways_of(out.sets);
    // No complete set in 6 targets (sets too large for the budget), or sets of many sizes in
    // 8 (not an LRU-like set: random replacement): more targets would not change that.
    if (!out.ways.found && (done >= 8 || (done >= 6 && out.ways.agreeing == 0))) break;
    if (!out.ways.found) continue;
    const auto set_counts = set_counts_of(level, space.line_bytes, cache_lines, out.ways.ways);
    out.index = index_of(out.sets, out.ways.ways, space, set_counts.front());
    out.index.complete = names_every_set(out.index, set_counts);
    if (out.index.complete || (targets.size() >= 8 && uint32_t(out.index.rank) == last_rank)) break;
    last_rank = uint32_t(out.index.rank);
  }
  return out;
}

// The sets counted over all partitions, from the ways and the size of all of them.
void report_total_sets(memtopo::Context& ctx, const EvictionLevel& level, uint64_t line, uint32_t ways) {
  if (level.total_bytes == 0 || ways == 0) return;
  const uint64_t lines = level.total_bytes / line;
  ctx.result(level.element + ".total_sets", int64_t((lines + ways / 2) / ways),
             {0.8, memtopo::Bound::Exact,
              std::to_string(lines) + " lines of the device's L2 (" + std::to_string(level.total_bytes) + " B) / " +
                  std::to_string(ways) + " ways of the minimal eviction sets"});
}


}  // namespace

void measure_eviction_sets(memtopo::Context& ctx, const EvictionLevel& level) {
  Settings st = settings_of(ctx, level);
  const std::string& e = level.element;
  const uint64_t line = uint64_t(ctx.input<int64_t>(e + ".line_bytes"));
  const uint64_t cache_lines = uint64_t(ctx.input<int64_t>(level.size_key)) / std::max<uint64_t>(line, 1);
  if (line < 8 || cache_lines < 2) throw memtopo::NotDeterminable("needs a cache of two lines or more");
  // A power-of-two buffer at an address aligned to its size: its lines vary in exactly the
  // address bits below its size (a buffer across a boundary would add carries to the bits above).
  uint64_t span = 1;
  const uint64_t wanted = st.buffer_bytes ? st.buffer_bytes : 32 * cache_lines * line;  // 0: 32 caches
  while (span < std::max<uint64_t>(wanted, 8 * cache_lines * line)) span *= 2;
  memtopo::device::Buffer<uint32_t> buf(ctx, 2 * span / 4);
  buf.zero();
  const uint64_t base = (reinterpret_cast<uint64_t>(buf.get()) + span - 1) & ~(span - 1);
  const LineSpace space{base, uint32_t(line), span / line};
  const uint32_t pool = uint32_t(std::min<double>(st.pool_factor * double(cache_lines), double(space.lines) / 2));
  std::mt19937_64 rng(0x65766963747365ull);
  Findings found = find_sets(ctx, st, level, space, cache_lines, pool, rng);
  // FIFO inserts on misses alone, and a pool's lines still cached from the trial before leave
  // x where it is: no set found (random devices 4, 38: sets of 68 to 110 lines at the test
  // limit for 16 ways). The L1 then runs them again, each trial after a flush of three times
  // its lines: x, then every line of S misses (docs/cache-probes.md, "FIFO sets").
  memtopo::device::Buffer<uint32_t> flush(ctx, level.l2_path || found.ways.found ? 1 : 3 * cache_lines * line / 4);
  if (!level.l2_path && !found.ways.found) {
    st.flush = reinterpret_cast<unsigned long long>(flush.get());
    st.flush_lines = uint32_t(3 * cache_lines);
    std::mt19937_64 again(0x65766963747365ull);
    Findings flushed = find_sets(ctx, st, level, space, cache_lines, pool, again);
    // A FIFO set's reductions end alike; under random replacement, where no number of a set's
    // lines evicts x every time, a few of many end at one size by chance (held-out random
    // device 57: 3 x 102 lines of 30 targets, 24 at the test limit, for 12 ways), so the flush's
    // ways stand only where most targets' sets agree.
    if (flushed.ways.found && 2 * flushed.ways.agreeing > flushed.sets.size()) found = std::move(flushed);
    else st.flush_lines = 0;
  }
  const WaysFinding& w = found.ways;
  keep_raw(ctx, e, found.sets);
  if (!w.found) throw memtopo::NotDeterminable(w.note);
  const std::vector<uint64_t> set_counts = set_counts_of(level, line, cache_lines, w.ways);
  const IndexFinding& f = found.index;
  // The ways, the sets over all partitions and the replacement within the sets.
  auto report_ways = [&] {
    ctx.progress(0.75, "replacement within the sets found");
    const PolicyFinding policy = test_policy(ctx, st, level, space, found.sets, w.ways, 16);
    memtopo::ResultInfo ways_info{0.9, memtopo::Bound::Exact, w.note};
    std::string refuted;
    if (level.l2_path && !verify_l2_ways(ctx, space, found.sets, w.ways, policy.policy, ways_info, refuted)) {
      ctx.warn(e + ".eviction_set_ways not reported: " + refuted);
      throw memtopo::NotDeterminable(refuted);
    }
    ctx.result(e + ".eviction_set_ways", int64_t(w.ways), ways_info);
    report_total_sets(ctx, level, line, w.ways);
    report_policy(ctx, level, policy);
  };
  if (w.counted()) report_ways();
  const std::string unconfirmed = "; two sets of one size, which random replacement gives by chance, and no set-index "
                                  "function on them whose predictions came true: the ways are not reported";
  const std::string span_text = std::to_string(f.differences) + " differences of congruent lines span " +
                                std::to_string(f.rank) + " of the " + std::to_string(__builtin_popcountll(f.domain)) +
                                " address bits the lines vary in";
  const memtopo::ResultInfo parities_info{
      0.8, memtopo::Bound::Exact, span_text + "; each parity (XOR of the address bits) is equal within every set found"};
  if (!f.complete) {
    if (!w.counted()) throw memtopo::NotDeterminable(w.note + unconfirmed);
    // The L2's sets can hold lines that other effects (its partitions, the TLB) put there:
    // parities that no verified function backs are not reported for it.
    if (!f.parities.empty() && !level.l2_path) ctx.result(e + ".set_index_parities", texts(f.parities), parities_info);
    std::string sets_text = std::to_string(set_counts.front());
    if (set_counts.size() > 1) sets_text += " (or " + std::to_string(set_counts.back()) + " over the partitions)";
    throw memtopo::NotDeterminable("set-index function: " + span_text + ", which leaves " +
                                   std::to_string(f.parities.size()) + " constant parities; " +
                                   std::to_string(cache_lines) + " lines / " + std::to_string(w.ways) + " ways = " +
                                   sets_text + " sets need log2 of that: no linear function of these address bits" +
                                   (level.l2_path ? " (the L2 indexes physical addresses; the buffer's pages are "
                                                    "mapped where the driver put them)"
                                                  : ""));
  }
  ctx.progress(0.8, "testing the set-index function's predictions");
  const auto [right, of] = verify(ctx, st, level, space, f.parities, w.ways, found.sets, rng);
  const std::string failed = "set-index function: the parities' predictions came true " + std::to_string(right) +
                             " times of " + std::to_string(of) + "; " + span_text;
  if (right != of && !w.counted()) throw memtopo::NotDeterminable(w.note + unconfirmed + "; " + failed);
  if (!w.counted()) report_ways();
  if (!f.parities.empty()) ctx.result(e + ".set_index_parities", texts(f.parities), parities_info);
  if (right != of) throw memtopo::NotDeterminable(failed);
  ctx.result(e + ".set_hash", texts(f.parities),
             {0.9, memtopo::Bound::Exact,
              span_text + "; " + std::to_string(of) + " predictions came true (sets of " + std::to_string(w.ways) +
                  " lines the function puts with a target evict it, others do not)"});
}

}  // namespace data_cache
