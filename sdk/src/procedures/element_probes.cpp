// The probe factory of the cache procedure: one cache element as probes ordered by the keys
// they exchange (memtopo/cache/element.hpp), each with the options of its search.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <utility>

#include "memtopo/cache/element.hpp"

namespace memtopo::cache {
namespace {

// An element the size probe found absent ("present = false") skips the rest.
void require_present(const Context& ctx, const std::string& element) {
  if (auto p = ctx.try_input<bool>(element + ".present"); p && !*p)
    throw Skip(element + " is not present on this device");
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

constexpr const char* kTiB = "1099511627776";

// The options every probe of an element takes, and how they change its target.
void declare_options(Probe& p, const ElementSpec& spec, bool search) {
  if (spec.carveout_option)
    p.option("shared_carveout_percent", MT_VALUE_INT, "0",
             "shared-memory carveout of the measuring kernels in percent (0: the largest L1 the device allows; "
             "-1: the driver's default)")
        .range("-1", "100");
  if (!search) return;
  p.option("search_start_bytes", MT_VALUE_INT, "0", "smallest footprint of the size search (0: the probe's default)")
      .range("0", kTiB);
  p.option("search_limit_bytes", MT_VALUE_INT, "0",
           "largest footprint of the size search (0: the probe's default, from the device)")
      .range("0", kTiB);
}

Target configured(const Context& ctx, const ElementSpec& spec, bool search) {
  Target t = spec.target(ctx);
  if (spec.carveout_option) {
    const auto c = ctx.option<int64_t>("shared_carveout_percent");
    if (c < -1 || c > 100) throw Error("option shared_carveout_percent: " + std::to_string(c) + " is not -1 or 0..100");
    t.shared_carveout_percent = int32_t(c);
  }
  if (!search) return t;
  if (const auto v = ctx.option<int64_t>("search_start_bytes"); v > 0) t.search_start_bytes = uint64_t(v);
  if (const auto v = ctx.option<int64_t>("search_limit_bytes"); v > 0) {
    t.search_limit_bytes = uint64_t(v);
    t.search_limit_reason = "the search_limit_bytes option";
  }
  if (t.search_start_bytes >= t.search_limit_bytes)
    throw Error("the size search starts at " + std::to_string(t.search_start_bytes) + " B, not below its limit (" +
                std::to_string(t.search_limit_bytes) + " B); check the search_start_bytes and search_limit_bytes options");
  return t;
}

// A probe of the element: declared keys and options, then `step` on a calibrated Measurer.
Probe element_probe(const ElementSpec& spec, const std::string& suffix, const std::string& summary, bool search,
                    std::function<void(Context&, Measurer&)> step) {
  Probe p(spec.plugin + "/" + spec.element + "-" + suffix);
  p.summary(spec.title + ": " + summary);
  declare_options(p, spec, search);
  if (std::find(spec.own_process_steps.begin(), spec.own_process_steps.end(), suffix) != spec.own_process_steps.end())
    p.own_process();
  p.run([spec, search, step](Context& ctx) {
    require_present(ctx, spec.element);
    Measurer m(ctx, configured(ctx, spec, search));
    step(ctx, m);
  });
  return p;
}

// Which carveout the size was measured at: on a unified L1 the size depends on it
// (shared.carveout_* give the L1 at each).
void report_carveout(Context& ctx, const std::string& element, int32_t percent) {
  ctx.result(element + ".size_carveout_percent", int64_t(percent),
             ResultInfo{1.0, Bound::Exact,
                        percent < 0 ? "the driver's default carveout"
                                    : "carveout the size was measured at (0: the least shared memory the kernel allows)"});
}

// The size whose lines the sets hold: the element's size where a later step measured it (the
// occupancy's, not the first miss, which moves with the buffer's pages), or a candidate size
// within 3 % of it (a whole partition, of which one SM may keep a few percent fewer lines).
std::pair<int64_t, std::string> size_for_sets(const Context& ctx, const ElementSpec& spec, int64_t first_size) {
  const std::string& e = spec.element;
  const int64_t measured = ctx.try_input<int64_t>(e + ".size_bytes").value_or(first_size);
  if (spec.size_candidates)
    for (const SizeCandidate& c : spec.size_candidates(ctx))
      if (c.bytes > 0 && std::abs(double(measured - c.bytes)) <= 0.03 * double(c.bytes))
        return {c.bytes, c.source + " (" + std::to_string(c.bytes) + " B; " + std::to_string(measured) + " B measured)"};
  return {measured, std::to_string(measured) + " B measured"};
}

// Where strides cannot see the sets (a set index hashed from many address bits), the ways of
// minimal eviction sets, when a probe of the element's plugin found them (spec.eviction_ways_key),
// and the size give sets and ways; false when there are none.
bool geometry_from_eviction_sets(Context& ctx, const ElementSpec& spec, int64_t first_size, int64_t line_bytes,
                                 const std::string& strides) {
  if (spec.eviction_ways_key.empty()) return false;
  const std::string& e = spec.element;
  const auto ways = ctx.try_input<int64_t>(spec.eviction_ways_key);
  const auto [size_bytes, size_text] = size_for_sets(ctx, spec, first_size);
  if (!ways || *ways < 1 || line_bytes < 1 || size_bytes / line_bytes < *ways) return false;
  const int64_t lines = size_bytes / line_bytes, sets = (lines + *ways / 2) / *ways;
  const std::string how = "from the ways of minimal eviction sets (" + spec.eviction_ways_key + ") and " +
                          std::to_string(lines) + " lines of " + size_text +
                          (sets * *ways == lines ? "" : " (" + std::to_string(sets * *ways) + " as whole sets)") +
                          "; strides: " + strides;
  ctx.result(e + ".sets", sets, ResultInfo{0.8, Bound::Exact, how});
  ctx.result(e + ".ways", *ways, ResultInfo{0.8, Bound::Exact, how});
  ctx.result(e + ".set_mapping", std::string("hashed"), ResultInfo{0.8, Bound::Exact, "no stride reaches the sets: " + strides});
  return true;
}

// The size, checked against the hardware counters where its path has them; a size they refute
// is not reported (the probe cannot determine it).
void report_size(Context& ctx, Measurer& m, const std::string& key, const Measured<int64_t>& size, bool by_occupancy,
                 int64_t line_bytes) {
  if (!size.found) return report(ctx, key, size);
  ResultInfo info{size.confidence, size.bound, size.note};
  std::string refuted;
  if (!check_size_by_counters(m, size, by_occupancy, line_bytes, info, &refuted))
    throw NotDeterminable(key + " (" + std::to_string(size.value) + " B) is refuted by the hardware counters: " + refuted);
  ctx.result(key, size.value, info);
}

// Where neither strides nor eviction sets of its own give the sets, the sets, ways and mapping
// of the element whose storage this path shares (spec.storage_key names it): one storage has
// one geometry. Only where they hold this path's size at its own line, within 1 % (the
// geometry's own rounding to whole sets): a path whose line is longer than the storage's
// (the H100's texture path, 256 B blocks in the 128 B-line L1) holds its lines otherwise.
// A storage whose geometry does not hold this path's lines is a finding (said in `why_not`,
// which the not-determinable reason carries), not a problem to warn about.
bool geometry_from_storage(Context& ctx, const ElementSpec& spec, int64_t size_bytes, int64_t line_bytes,
                           const std::string& strides, std::string& why_not) {
  if (spec.storage_key.empty() || line_bytes < 1) return false;
  const auto o = ctx.try_input<std::string>(spec.storage_key);
  if (!o || std::find(spec.storage_elements.begin(), spec.storage_elements.end(), *o) == spec.storage_elements.end())
    return false;
  const auto sets = ctx.try_input<int64_t>(*o + ".sets"), ways = ctx.try_input<int64_t>(*o + ".ways");
  if (!sets || !ways) return false;
  const std::string e = spec.element, shape = std::to_string(*sets) + " sets x " + std::to_string(*ways) + " ways";
  const double held = double(*sets) * double(*ways) * double(line_bytes);
  if (std::fabs(held - double(size_bytes)) > 0.01 * double(size_bytes)) {
    why_not = e + " shares the storage of " + *o + " (" + spec.storage_key + "), but " + *o + "'s " + shape + " of " +
              std::to_string(line_bytes) + " B lines (" + e + ".line_bytes) hold " + std::to_string(int64_t(held)) +
              " B, not its " + std::to_string(size_bytes) + " B: its sets are not " + *o + "'s";
    ctx.info(why_not);
    return false;
  }
  const std::string mapping = ctx.try_input<std::string>(*o + ".set_mapping").value_or("hashed");
  const std::string how = "those of " + *o + ", whose storage this path uses (" + spec.storage_key + " = \"" + *o +
                          "\"): " + shape + " of " + std::to_string(line_bytes) + " B hold its " +
                          std::to_string(size_bytes) + " B; strides: " + strides;
  ctx.result(e + ".sets", *sets, ResultInfo{0.8, Bound::Exact, how});
  ctx.result(e + ".ways", *ways, ResultInfo{0.8, Bound::Exact, how});
  ctx.result(e + ".set_mapping", mapping, ResultInfo{0.8, Bound::Exact, how});
  return true;
}

// Where no stride puts lines into one set, the policy the element's minimal eviction sets
// showed (their own reduction finds congruent lines under any index): lru, fifo or random,
// which the policy step names alike. Random devices' hashed L1s had none (15 of 50), their
// eviction sets' policy right on each.
void policy_from_eviction_sets(const Context& ctx, const std::string& key, Measured<std::string>& policy) {
  if (key.empty()) return;
  const auto seen = ctx.try_input<std::string>(key);
  if (!seen || (*seen != "lru" && *seen != "fifo" && *seen != "random")) return;
  policy = {true, *seen, 0.8, Bound::Exact,
            "from minimal eviction sets (" + key + "); strides: " + policy.note};
}

// Where no stride puts lines into one set, the policy of the element whose storage this path
// uses (spec.storage_key), where that element has this path's sets and ways: one storage, one
// policy (random devices' read-only paths on a hashed L1 had none).
void policy_from_storage(const Context& ctx, const ElementSpec& spec, Measured<std::string>& policy) {
  if (spec.storage_key.empty()) return;
  const auto o = ctx.try_input<std::string>(spec.storage_key);
  if (!o || std::find(spec.storage_elements.begin(), spec.storage_elements.end(), *o) == spec.storage_elements.end())
    return;
  const std::string& e = spec.element;
  const auto seen = ctx.try_input<std::string>(*o + ".replacement_policy");
  if (!seen || ctx.try_input<int64_t>(*o + ".sets") != ctx.try_input<int64_t>(e + ".sets") ||
      ctx.try_input<int64_t>(*o + ".ways") != ctx.try_input<int64_t>(e + ".ways"))
    return;
  policy = {true, *seen, 0.8, Bound::Exact,
            "that of " + *o + ", whose storage this path uses (" + spec.storage_key + " = \"" + *o +
                "\") with the same sets and ways; strides: " + policy.note};
}

// The own partition's lines are used where four times the element's size fits in this (the
// steps reach at most that far): every footprint over them is one array of that length, which
// each launch writes and uploads whole.
constexpr int64_t kOwnLinesRegionBytes = int64_t(64) << 20;

// Where strides are blind to an element of hashed partition homes: the lines homed in the
// measuring SM's own partition, as many as `reach` bytes of all partitions would hold
// (ElementSpec::partitions_key). An empty map where the element has no such keys (why_not
// empty) or they cannot be found.
OwnLines own_partition_lines(const Context& ctx, Measurer& m, const ElementSpec& spec, int64_t size, int64_t reach,
                             int64_t& parts) {
  OwnLines none;
  if (spec.partitions_key.empty()) return none;
  parts = ctx.try_input<int64_t>(spec.partitions_key).value_or(0);
  const int64_t granule = ctx.try_input<int64_t>(spec.home_granule_key).value_or(0);
  if (parts < 2 || granule <= 0) return none;
  if (4 * size > kOwnLinesRegionBytes) {
    none.why_not = "the own partition's lines are scanned where four times the size fits in " +
                   std::to_string(kOwnLinesRegionBytes >> 20) + " MiB (one array a footprint)";
    return none;
  }
  OwnLines own =
      find_own_partition_lines(m, uint32_t(parts), uint64_t(granule), uint64_t(reach / parts), uint64_t(size), 256);
  if (own.map.empty()) own.why_not = "the own partition's lines: " + own.why_not;
  return own;
}

std::string own_lines_how(const OwnLines& own, int64_t part_size) {
  return "lines of the " + std::to_string(own.map.chunks.size()) + " chunks of " + std::to_string(own.map.chunk_bytes) +
         " B homed in the measuring SM's own partition (hits at " + std::to_string(std::lround(own.near_cycles)) +
         " raw cycles, the others' at " + std::to_string(std::lround(own.far_cycles)) + "), one partition's size " +
         std::to_string(part_size) + " B";
}

// The policy step (over the own partition's lines where strides are blind to hashed partition
// homes), else the element's eviction sets, else the storage it shares.
void measure_policy(Context& ctx, Measurer& m, const ElementSpec& spec) {
  const std::string& e = spec.element;
  const int64_t line = ctx.input<int64_t>(e + ".line_bytes"), sets = ctx.input<int64_t>(e + ".sets"),
                ways = ctx.input<int64_t>(e + ".ways");
  if (spec.front) m.set_front(spec.front(ctx));
  const std::string blind = spec.strides_blind ? spec.strides_blind(ctx) : std::string();
  int64_t parts = 1;
  const OwnLines own =
      blind.empty() ? OwnLines{} : own_partition_lines(ctx, m, spec, sets * ways * line, 4 * sets * ways * line, parts);
  PolicyResult r;
  if (!own.map.empty() && sets % parts == 0) {
    m.set_line_map(own.map);
    r = find_policy(m, line, sets / parts, ways);
    m.set_line_map({});
    const std::string how = own_lines_how(own, sets / parts * ways * line);
    r.policy.note += (r.policy.note.empty() ? "" : "; ") + how;
  } else {
    r = find_policy(m, line, sets, ways);
  }
  if (!r.policy.found) policy_from_eviction_sets(ctx, spec.eviction_policy_key, r.policy);
  if (!r.policy.found) policy_from_storage(ctx, spec, r.policy);
  report(ctx, e + ".replacement_policy", r.policy);
  if (!r.victim_probabilities.empty())
    ctx.result(e + ".victim_probabilities", r.victim_probabilities,
               ResultInfo{r.policy.confidence, Bound::Exact, "per fill position, from the victim census"});
  else
    ctx.absent(e + ".victim_probabilities",
               r.policy.found ? "misses are periodic (" + r.policy.value +
                                    "): victims are counted only where the misses are aperiodic"
                              : "no victim census: " + (r.policy.note.empty() ? "policy not determined" : r.policy.note));
  if (!r.policy.found) throw NotDeterminable("replacement policy: " + r.policy.note);
}

// What the policy probe reads beyond its inputs.
std::vector<std::string> policy_uses(const ElementSpec& spec) {
  std::vector<std::string> keys = spec.geometry_uses;
  if (!spec.eviction_policy_key.empty()) keys.push_back(spec.eviction_policy_key);
  if (spec.storage_key.empty()) return keys;
  keys.push_back(spec.storage_key);
  for (const std::string& o : spec.storage_elements)
    for (const char* k : {".sets", ".ways", ".replacement_policy"}) keys.push_back(o + k);
  return keys;
}

// The keys geometry_from_storage reads.
std::vector<std::string> storage_uses(const ElementSpec& spec) {
  if (spec.storage_key.empty()) return {};
  std::vector<std::string> keys{spec.storage_key};
  for (const std::string& o : spec.storage_elements)
    for (const char* k : {".sets", ".ways", ".set_mapping"}) keys.push_back(o + k);
  return keys;
}

std::vector<std::string> eviction_uses(const ElementSpec& spec) {
  if (spec.eviction_ways_key.empty()) return {};
  return {spec.eviction_ways_key};
}

// What size_for_sets reads beyond the first miss, where the eviction sets may give the sets.
std::vector<std::string> sets_size_uses(const ElementSpec& spec) {
  if (spec.eviction_ways_key.empty() || !spec.size_by_occupancy) return {};
  return with({spec.element + ".size_bytes"}, spec.candidate_uses);
}

// The line step; where strides are blind to hashed partition homes, over the own partition's lines.
LineResult measure_line(Context& ctx, Measurer& m, const ElementSpec& spec, int64_t size, int64_t full_miss) {
  const std::string blind = spec.strides_blind ? spec.strides_blind(ctx) : std::string();
  if (blind.empty()) return find_line(m, size, full_miss);
  int64_t parts = 1;
  // Odd strides up to a few lines reach every line's full miss: past 2.25 times it at 288 B
  // for 128 B lines (a random device's full miss 1.7 times its size).
  const OwnLines own = own_partition_lines(ctx, m, spec, size, 4 * std::max(size, full_miss), parts);
  if (own.map.empty()) return find_line(m, size, full_miss);
  LineResult r = find_line_in_partition(m, size, full_miss, own, parts);
  if (r.line_bytes.found) r.line_bytes.note += "; " + own_lines_how(own, size / parts);
  return r;
}

// The sets and ways of one partition from the lines homed in the measuring SM's own partition,
// the sets times the partitions; `blind` says why plain strides cannot, and stays in the note
// where this cannot either.
GeometryResult own_partition_geometry(Context& ctx, Measurer& m, const ElementSpec& spec, int64_t size, int64_t line,
                                      const std::string& blind) {
  GeometryResult r;
  auto not_this_way = [&](const std::string& why) {
    r.sets.note = r.ways.note = r.set_mapping.note = blind + (why.empty() ? "" : "; " + why);
    return r;
  };
  int64_t parts = 1;
  const OwnLines own = own_partition_lines(ctx, m, spec, size, 4 * size, parts);
  if (own.map.empty()) return not_this_way(own.why_not);
  const int64_t part_size = size / parts;
  const std::string how = own_lines_how(own, part_size);
  m.set_line_map(own.map);
  r = find_geometry(m, part_size, line);
  m.set_line_map({});
  if (!r.sets.found) return not_this_way("strides over " + how + ": " + r.sets.note);
  // One partition's lines are a plain address space; strides that do not fit modulo sets there
  // say the map or the line is wrong, not that the partition hashes (a wrong line read 68 sets
  // of 181 ways at 0.95 on a random device).
  if (!r.set_mapping.found || r.set_mapping.value != "modulo") {
    const std::string seen = r.set_mapping.found ? r.set_mapping.note : r.ways.note;
    r = GeometryResult{};
    return not_this_way("strides over " + how + " fit no modulo sets (" + seen + ")");
  }
  r.sets.value *= parts;
  r.sets.note = "the sets of one partition times " + std::to_string(parts) + " partitions; " + how + ": " + r.sets.note;
  r.ways.note += "; " + how;
  if (r.set_mapping.found) r.set_mapping.note += " within a partition; " + how;
  return r;
}

// The geometry step: the stride scan, else the element's eviction sets, else the storage it
// shares.
void measure_geometry(Context& ctx, Measurer& m, const ElementSpec& spec, const std::string& first_key) {
  const std::string& e = spec.element;
  const int64_t size = ctx.input<int64_t>(first_key), line = ctx.input<int64_t>(e + ".line_bytes");
  const std::string blind = spec.strides_blind ? spec.strides_blind(ctx) : std::string();
  if (spec.front) m.set_front(spec.front(ctx));
  GeometryResult r = blind.empty() ? find_geometry(m, size, line) : own_partition_geometry(ctx, m, spec, size, line, blind);
  // Eviction sets count the ways directly; strides that see other ways read a hash's pattern.
  const auto eviction_ways = spec.eviction_ways_key.empty() ? std::nullopt : ctx.try_input<int64_t>(spec.eviction_ways_key);
  const bool strides_disagree = r.ways.found && eviction_ways && *eviction_ways != r.ways.value;
  const std::string strides_note =
      strides_disagree ? std::to_string(r.sets.value) + " sets of " + std::to_string(r.ways.value) +
                             " ways, which the eviction sets refute (" + r.sets.note + ")"
                       : r.sets.note;
  if ((!r.sets.found || strides_disagree) && geometry_from_eviction_sets(ctx, spec, size, line, strides_note)) return;
  std::string not_storage;
  if (!r.sets.found && geometry_from_storage(ctx, spec, size, line, r.sets.note, not_storage)) return;
  report(ctx, e + ".set_mapping", r.set_mapping);
  report(ctx, e + ".sets", r.sets);
  report(ctx, e + ".ways", r.ways);
  if (!r.sets.found)
    throw NotDeterminable("sets and ways: " + r.sets.note + (not_storage.empty() ? "" : "; " + not_storage));
}

}  // namespace

namespace {

// The procedure's probes for one element, without roles.
std::vector<Probe> procedure_probes(const ElementSpec& spec) {
  const std::string e = spec.element;
  // Keys the target builder reads go to every probe of the element; "<element>.present" is
  // used where some probe provides it, so an absent cache skips the whole element.
  const std::vector<std::string> uses = with(spec.size_uses, {e + ".present"});
  const std::vector<std::string>& size_req = spec.size_requires;
  // The footprint the line and geometry steps start from: the first miss of the cyclic sweep.
  const std::string first_key = e + (spec.size_by_occupancy ? ".first_miss_bytes" : ".size_bytes");
  std::vector<Probe> probes;

  probes.push_back(element_probe(spec, "size",
                                 spec.size_by_occupancy ? "first miss of a cyclic footprint sweep"
                                                        : "size (largest footprint without capacity misses)",
                                 true, [e, first_key, carveout = spec.carveout_option](Context& ctx, Measurer& m) {
                                   const SizeResult r = find_size(m);
                                   report(ctx, e + ".full_miss_bytes", r.full_miss_bytes);
                                   if (carveout) report_carveout(ctx, e, m.target().shared_carveout_percent);
                                   if (first_key == e + ".size_bytes")
                                     report_size(ctx, m, first_key, r.size_bytes, false, 0);
                                   else
                                     report(ctx, first_key, r.size_bytes);
                                   ctx.debug(e + " size: " + std::to_string(m.launches()) + " launches");
                                 }));
  std::vector<std::string> size_keys{first_key, e + ".full_miss_bytes"};
  if (spec.carveout_option) size_keys.push_back(e + ".size_carveout_percent");
  probes.back().provides(size_keys).requires_keys(size_req).uses(uses);
  // Where the sets are hashed and replacement is not LRU, where the first miss shows moves by
  // several percent between runs: an estimate (MT_KEY_ESTIMATE), compared within a tolerance.
  if (spec.size_by_occupancy)
    // Where the first miss lies depends on the buffer's physical pages (a hashed index fills
    // some sets first): on an H100 0.95, 1.00 or 1.05 x API/2 by buffer (docs/format.md,
    // "Values that vary"): reported, never a difference.
    probes.back().key(first_key, MT_VALUE_INT, "bytes", "footprint of the first capacity miss of a cyclic sweep",
                      MT_KEY_ESTIMATE | MT_KEY_VARIES);
  // With a hashed index the full miss moves with the pages as the first miss does (H100: 10 %
  // over 24 runs): it varies there (docs/format.md, "Values that vary").
  probes.back().key(e + ".full_miss_bytes", MT_VALUE_INT, "bytes", "footprint from which every load of the sweep misses",
                    spec.size_by_occupancy ? MT_KEY_ESTIMATE | MT_KEY_VARIES : MT_KEY_ESTIMATE);
  // The simulator derives both from the cache it builds.
  probes.back().not_replayed({e + ".full_miss_bytes"});
  if (spec.carveout_option) probes.back().not_replayed({e + ".size_carveout_percent"});

  if (spec.size_by_occupancy) {
    probes.push_back(element_probe(
        spec, "occupancy", "size as the lines held under random loads (every set full)", false,
        [e, first_key, candidates = spec.size_candidates](Context& ctx, Measurer& m) {
          const OccupancyResult r = find_occupancy(
              m, ctx.input<int64_t>(first_key), ctx.try_input<int64_t>(e + ".full_miss_bytes").value_or(0),
              ctx.input<int64_t>(e + ".line_bytes"), candidates ? candidates(ctx) : std::vector<SizeCandidate>{});
          report_size(ctx, m, e + ".size_bytes", r.size_bytes, true, ctx.input<int64_t>(e + ".line_bytes"));
        }));
    // Lines held, to the line where no candidate agrees: an estimate, compared within a tolerance,
    // which holds over healthy GPUs of a model (rated: docs/fleet.md, "Rated keys").
    probes.back()
        .provides({e + ".size_bytes"})
        .key(e + ".size_bytes", MT_VALUE_INT, "bytes", "lines held under random loads, every set full, times the line",
             MT_KEY_ESTIMATE | MT_KEY_RATED)
        .requires_keys(with(size_req, {first_key, e + ".line_bytes"}))
        .uses(with(with(uses, {e + ".full_miss_bytes"}), spec.candidate_uses));
  }

  probes.push_back(element_probe(spec, "line", "fetch granularity (sector) and line size", false,
                                 [e, first_key, spec](Context& ctx, Measurer& m) {
                                   const LineResult r = measure_line(ctx, m, spec, ctx.input<int64_t>(first_key),
                                                                     ctx.try_input<int64_t>(e + ".full_miss_bytes").value_or(0));
                                   report(ctx, e + ".fetch_granularity_bytes", r.fetch_granularity_bytes);
                                   report(ctx, e + ".line_bytes", r.line_bytes);
                                   // The fetch unit alone (a path too short for the line) is kept.
                                   if (!r.line_bytes.found) throw NotDeterminable("line size: " + r.line_bytes.note);
                                 }));
  probes.back()
      .provides({e + ".fetch_granularity_bytes", e + ".line_bytes"})
      .requires_keys(with(size_req, {first_key}))
      .uses(with(with(uses, {e + ".full_miss_bytes"}), spec.partitions_key.empty() ? std::vector<std::string>{}
                                                                                     : spec.geometry_uses));

  probes.push_back(element_probe(spec, "geometry", "sets, ways and set-index mapping", false,
                                 [first_key, spec](Context& ctx, Measurer& m) { measure_geometry(ctx, m, spec, first_key); }));
  // Stride scans of the cache, seconds on a GPU or a simulated one of many SMs: declared, so
  // that a run of probes at once starts its chain (the policy, the paths that share the
  // storage) before probes that take as long alone (docs/host.md).
  probes.back()
      .budget_seconds(30)
      .provides({e + ".sets", e + ".ways", e + ".set_mapping"})
      .requires_keys(with(size_req, {first_key, e + ".line_bytes"}))
      .uses(with(with(with(with(uses, eviction_uses(spec)), storage_uses(spec)), sets_size_uses(spec)),
                 spec.geometry_uses));

  probes.push_back(element_probe(spec, "policy", "replacement policy", false,
                                 [spec](Context& ctx, Measurer& m) { measure_policy(ctx, m, spec); }));
  probes.back()
      .provides({e + ".replacement_policy", e + ".victim_probabilities"})
      .requires_keys(with(size_req, {e + ".line_bytes", e + ".sets", e + ".ways"}))
      .uses(with(uses, policy_uses(spec)));

  if (!spec.latency_probe) return probes;
  probes.push_back(element_probe(spec, "latency", "hit latency (load to use) and miss penalty", false,
                                 [e](Context& ctx, Measurer& m) {
                                   const LatencyResult r = find_latency(m, ctx.input<int64_t>(e + ".size_bytes"),
                                                                        ctx.try_input<int64_t>(e + ".line_bytes").value_or(0));
                                   report(ctx, e + ".latency_cycles", r.latency_cycles);
                                   report(ctx, e + ".miss_penalty_cycles", r.miss_penalty_cycles);
                                 }));
  probes.back()
      .provides({e + ".latency_cycles", e + ".miss_penalty_cycles"})
      .requires_keys(with(size_req, {e + ".size_bytes"}))
      .uses(with(uses, {e + ".line_bytes"}));
  return probes;
}

}  // namespace

std::vector<Probe> element_probes(const ElementSpec& spec) {
  std::vector<Probe> probes = procedure_probes(spec);
  if (spec.subject.empty()) return probes;
  const std::string prefix = spec.element + ".";
  for (Probe& p : probes)
    for (const std::string& key : p.provided())
      if (key.compare(0, prefix.size(), prefix) == 0)
        p.role(key, "cache." + key.substr(prefix.size()) + "@" + spec.subject);
  return probes;
}

}  // namespace memtopo::cache
