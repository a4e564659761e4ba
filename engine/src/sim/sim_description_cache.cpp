// The cache element tables ([l1d], [texture], [readonly], [constant_l1], [constant_l15],
// [l2]) and their [sim.<element>] sub-tables. A hand-written element must be consistent
// (size = sets x ways x line); a measured one (with [provenance.<element>]) is read with the
// replay rules of docs/simulator.md, so that what probes wrote replays and measures back to
// itself.
#include <algorithm>
#include <bit>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "memtopo/errors.hpp"
#include "sim/sim_description.hpp"
#include "sim/sim_limits.hpp"

namespace memtopo::sim {

std::vector<uint32_t> read_sets(Reader& r, uint64_t size, uint32_t line, const char* sets_key,
                                const char* ways_key, uint32_t instances, const char* size_key) {
  auto sets = r.integer_or_integers(sets_key);
  auto ways = ways_key ? r.integer(ways_key) : std::nullopt;
  if (size % line) r.fail(size_key, std::to_string(size) + " is not a multiple of the line size " + std::to_string(line));
  const uint64_t lines = size / line;
  std::vector<uint32_t> out;
  if (sets && sets->size() > 1) {  // unequal sets: one entry per set
    if (ways) r.fail(ways_key, "give either per-set ways in " + std::string(sets_key) + " (an array) or ways, not both");
    if (instances != 1) r.fail(sets_key, "per-set ways are not supported with several partitions");
    uint64_t sum = 0;
    for (int64_t w : *sets) {
      if (w <= 0) r.fail(sets_key, "every set needs at least one way");
      if (uint64_t(w) > lines)  // also keeps the sum from overflowing
        r.fail(sets_key, "a set of " + std::to_string(w) + " ways is more than the " + std::to_string(lines) + " lines of " +
                             size_key + "; make them agree");
      sum += uint64_t(w);
      out.push_back(uint32_t(w));
    }
    if (sum != lines)
      r.fail(sets_key, "the sets hold " + std::to_string(sum) + " lines, but " + size_key + " / line = " +
                           std::to_string(lines) + "; make them agree");
    return out;
  }
  uint64_t s = 0, w = 0;
  if (sets) s = uint64_t(positive(r, sets_key, (*sets)[0], 1));
  if (ways) w = uint64_t(positive(r, ways_key, *ways, 1));
  if (s && w) {
    // s > lines / w first: the product of huge values would overflow and could even match.
    if (s > lines / w || s * w != lines)
      r.fail(sets_key, geometry_text(s, w, line) + ", but " + size_key + " = " + std::to_string(size) +
                           "; make them agree");
  } else if (s) {
    if (lines % s) r.fail(sets_key, std::to_string(lines) + " lines do not divide into " + std::to_string(s) + " sets");
    w = lines / s;
  } else if (w) {
    if (lines % w) r.fail(ways_key, std::to_string(lines) + " lines do not divide into " + std::to_string(w) + " ways");
    s = lines / w;
  } else {  // neither given: 4 ways when the line count allows (documented default)
    w = 4;
    while (w > 1 && (lines % (w * instances))) w /= 2;
    s = lines / w;
  }
  if (s % instances)
    r.fail(sets_key, std::to_string(s) + " sets do not divide among " + std::to_string(instances) + " partitions");
  if (w > 1024) r.fail(ways_key ? ways_key : sets_key, std::to_string(w) + " ways is more than the simulator handles (1024)");
  out.assign(s / instances, uint32_t(w));
  return out;
}

namespace {

// One cache instance within the limits (sim_limits.hpp), before anything of its size is
// allocated: a 64 GiB L2 or a size of 2^62 is a mistake to name, not a std::bad_alloc.
void check_cache_size(Reader& r, uint64_t size, uint32_t line) {
  if (size > kMaxCacheBytes)
    r.fail("size_bytes", std::to_string(size) + " B (" + bytes_text(size) + ") is more than the simulator handles in one cache (" +
                             bytes_text(kMaxCacheBytes) + "); check the value (docs/simulator.md, \"Limits\")");
  if (size / line > kMaxCacheLines)
    r.fail("size_bytes", std::to_string(size / line) + " lines of " + std::to_string(line) +
                             " B are more than the simulator handles in one cache (" + std::to_string(kMaxCacheLines) +
                             " lines); check size_bytes and line_bytes (docs/simulator.md, \"Limits\")");
}

// Sets and ways the probes could not determine (a set index hashed from many address bits,
// as on the H100): `t` sets of equal ways per partition behind a folded XOR hash. Any t
// consecutive lines then fill every set once, so the measured size stays exact, while
// power-of-two strides reach every set, so the sets stay hidden as they were on the device.
// t is the largest power of two dividing the lines that leaves at least 16 ways; a line count
// with too few factors of two for at most 1024 ways is rounded to one that has them, which
// moves it by less than 1/1024.
std::vector<uint32_t> folded_geometry(uint64_t lines, uint32_t instances, SetIndex& index) {
  uint64_t per = std::max<uint64_t>(1, (lines + instances / 2) / instances);
  uint64_t step = 1;
  while (per / step > 1024) step *= 2;
  per = std::clamp<uint64_t>((per + step / 2) / step, 1, 1024) * step;
  uint64_t t = 1;
  while (per % (2 * t) == 0 && per / (2 * t) >= 16) t *= 2;
  index = t > 1 ? SetIndex::Folded : SetIndex::Modulo;
  return std::vector<uint32_t>(t, uint32_t(per / t));  // of one partition
}

// A measured element's sets and ways. The geometry probe rounds the measured line count to
// whole sets when that moves it by 1 % at most, so sets x ways may differ from the measured
// size by that much: then sets x ways is the cache. Only one of them given: the other is the
// measured line count over it, rounded. Neither: folded_geometry. An element sized by
// occupancy is searched from its first miss; where other traffic made that come early, sets x
// ways fit the first miss and not the size, and the size wins (as if the sets were hidden).
std::vector<uint32_t> replay_sets(Reader& r, uint64_t lines, uint32_t line, uint32_t instances, bool hashed,
                                  std::optional<uint64_t> first_miss_lines, SetIndex& index, uint32_t sets_scale) {
  auto sets = r.integer_or_integers("sets");
  auto ways = r.integer("ways");
  if (sets && sets->size() > 1) return read_sets(r, lines * line, line, "sets", "ways", instances, "size_bytes");
  uint64_t s = sets ? uint64_t(positive(r, "sets", (*sets)[0], 1)) * sets_scale : 0;
  uint64_t w = ways ? uint64_t(positive(r, "ways", *ways, 1)) : 0;
  if (!s && !w) return folded_geometry(lines, instances, index);
  const char* key = s ? "sets" : "ways";
  if (!s) s = (lines + w / 2) / w;
  if (!w) w = (lines + s / 2) / s;
  // In double: the integer product of huge values would overflow.
  auto near = [&](uint64_t n) { return std::fabs(double(s) * double(w) - double(n)) <= 0.01 * double(n); };
  if (s && w && !near(lines) && first_miss_lines && near(*first_miss_lines))
    return folded_geometry(lines, instances, index);
  if (s == 0 || w == 0 || !near(lines))
    r.fail(key, geometry_text(s, w, line) + ", more than 1 % from the measured size_bytes (" + std::to_string(lines) +
                    " lines); make them agree");
  if (s % instances)
    r.fail("sets", std::to_string(s) + " sets do not divide among " + std::to_string(instances) + " partitions");
  if (w > 1024) r.fail("ways", std::to_string(w) + " ways is more than the simulator handles (1024)");
  const uint64_t per = s / instances;
  // A hashed index the probe found but could not name: pairs of bits, as the probe saw them;
  // for a set count that is not a power of two a non-linear hash (docs/simulator.md).
  if (hashed && per > 1) index = std::has_single_bit(per) ? SetIndex::Pairs : SetIndex::Mixed;
  return std::vector<uint32_t>(per, uint32_t(w));
}


// set_mapping: "modulo", "hashed" (with no set_hash, a hash is derived) or "mixed" (a
// non-linear hash: SetIndex::Mixed).
enum class Mapping { Modulo, Hashed, Mixed };
Mapping read_mapping(Reader& r) {
  auto v = r.string("set_mapping");
  if (!v || *v == "modulo") return Mapping::Modulo;
  if (*v == "hashed") return Mapping::Hashed;
  if (*v == "mixed") return Mapping::Mixed;
  r.fail("set_mapping", "\"" + *v + "\" is not a set mapping; use \"modulo\", \"hashed\" or \"mixed\"");
}

// The lines of a size. A measured size may not be a whole number of lines (the size probe
// steps by 32 B, and a stray miss stops it a step or two early): the nearest whole line. A
// bound "at_most" (misses already at the smallest footprint tried) is one line less than the
// bound; "at_least" (no miss up to the largest footprint the path reaches) is the bound itself.
uint64_t lines_of(Reader& r, uint64_t size, uint32_t line, const Provenance& prov) {
  if (!prov.measured) {
    if (size % line)
      r.fail("size_bytes", std::to_string(size) + " is not a multiple of the line size " + std::to_string(line));
    return size / line;
  }
  if (prov.size_bound == Provenance::Bound::AtMost) return std::max<uint64_t>(1, (size - 1) / line);
  return std::max<uint64_t>(1, (size + line / 2) / line);
}

// The hash masks of a derived set index: one per index bit, over the address bits of a line
// index (Pairs: the bit and the one log2(sets) above it; Folded: every such bit below 2^48).
std::vector<uint64_t> derived_masks(SetIndex index, uint32_t sets, uint32_t line_bytes) {
  std::vector<uint64_t> out;
  if (index == SetIndex::Modulo || index == SetIndex::Mixed || sets < 2) return out;
  const uint32_t t = uint32_t(std::countr_zero(sets)), shift = uint32_t(std::countr_zero(line_bytes));
  for (uint32_t i = 0; i < t; ++i) {
    uint64_t mask = 0;
    for (uint32_t k = 0; shift + i + k * t < 48 && (index == SetIndex::Folded || k < 2); ++k)
      mask |= uint64_t(1) << (shift + i + k * t);
    out.push_back(mask);
  }
  return out;
}

// The census reports one probability per fill position, or one per bin of consecutive
// positions when there are many ways (way j in bin j * bins / ways): a bin's probability is
// split evenly over its ways.
std::vector<double> per_way(const std::vector<double>& p, uint32_t ways) {
  if (p.empty() || p.size() >= ways) return p;
  const size_t bins = p.size();
  std::vector<size_t> count(bins, 0);
  for (uint32_t j = 0; j < ways; ++j) ++count[size_t(j) * bins / ways];
  std::vector<double> out;
  for (uint32_t j = 0; j < ways; ++j) {
    const size_t k = size_t(j) * bins / ways;
    out.push_back(p[k] / double(count[k]));
  }
  return out;
}

void read_set_hash(Reader& s, const toml::node& hash, CacheElement& e) {
  const toml::array* a = hash.as_array();
  if (!a) s.fail("set_hash", "must be an array: one entry per set-index bit, each an address bit or an array of bits to XOR");
  for (const toml::node& bit : *a) {
    uint64_t mask = 0;
    auto add = [&](const toml::node& b) {
      auto v = b.value_exact<int64_t>();
      if (!v || *v < 0 || *v > 63) s.fail("set_hash", "address bits are integers 0..63");
      mask |= uint64_t(1) << *v;
    };
    if (const toml::array* xs = bit.as_array()) {
      for (const toml::node& b : *xs) add(b);
    } else {
      add(bit);
    }
    if (!mask) s.fail("set_hash", "an entry selects no address bit");
    e.geometry.set_hash_masks.push_back(mask);
  }
  // 64 entries or more address more sets than a 64-bit count holds (and would overflow the shift).
  if (e.geometry.present && (e.geometry.set_hash_masks.size() >= 64 ||
                             (uint64_t(1) << e.geometry.set_hash_masks.size()) != e.geometry.sets()))
    s.fail("set_hash", std::to_string(e.geometry.set_hash_masks.size()) + " index bits cannot address " +
                           std::to_string(e.geometry.sets()) + " sets; give log2(sets) entries");
}

// <element>.set_hash as probes write it: one string per index bit, address bits joined by
// "^" ("7^12"); the same masks as [sim.<element>] set_hash.
void read_set_hash_text(Reader& r, const toml::node& hash, CacheElement& e) {
  const toml::array* a = hash.as_array();
  const char* form = "must be an array of strings, one per set-index bit, each address bits joined by ^ (\"7^12\")";
  if (!a) r.fail("set_hash", form);
  for (const toml::node& bit : *a) {
    const auto text = bit.value<std::string>();
    if (!text) r.fail("set_hash", form);
    uint64_t mask = 0;
    size_t at = 0;
    while (at <= text->size()) {
      const size_t end = std::min(text->find('^', at), text->size());
      const std::string part = text->substr(at, end - at);
      const bool digits = !part.empty() && part.size() <= 2 && std::all_of(part.begin(), part.end(), ::isdigit);
      if (!digits || std::stoi(part) > 63) r.fail("set_hash", "\"" + *text + "\": address bits are integers 0..63; " + form);
      mask ^= uint64_t(1) << std::stoi(part);
      at = end + 1;
    }
    if (!mask) r.fail("set_hash", "\"" + *text + "\" selects no address bit");
    e.geometry.set_hash_masks.push_back(mask);
  }
  if (e.geometry.set_hash_masks.size() >= 64 || (uint64_t(1) << e.geometry.set_hash_masks.size()) != e.geometry.sets())
    r.fail("set_hash", std::to_string(e.geometry.set_hash_masks.size()) + " index bits cannot address " +
                           std::to_string(e.geometry.sets()) + " sets (sets and ways); give log2(sets) entries");
}

}  // namespace

Provenance read_provenance(const toml::table& root, const char* element, const std::string& file) {
  Provenance p;
  const toml::table* all = root["provenance"].as_table();
  const toml::table* mine = all ? (*all)[element].as_table() : nullptr;
  if (!mine) return p;
  p.measured = true;
  const toml::node* bound = (*mine)["size_bytes"]["bound"].node();
  if (!bound) return p;
  Reader r((*mine)["size_bytes"].as_table(), std::string("provenance.") + element + ".size_bytes", file);
  const auto v = r.string("bound");
  if (*v == "at_least") p.size_bound = Provenance::Bound::AtLeast;
  else if (*v == "at_most") p.size_bound = Provenance::Bound::AtMost;
  else if (*v != "exact") r.fail("bound", "\"" + *v + "\" is not a bound; use \"exact\", \"at_least\" or \"at_most\"");
  return p;
}

CacheRead read_cache(Reader& r, ElementDefaults d, std::optional<uint64_t> default_size, const Provenance& prov,
                     uint32_t instances) {
  CacheRead out;
  CacheElement& e = out.element;
  auto present = r.boolean("present");
  auto size = r.integer("size_bytes");
  auto line = r.integer("line_bytes");
  auto sector = r.integer("fetch_granularity_bytes");
  auto latency = r.cycles("latency_cycles");
  auto penalty = r.cycles("miss_penalty_cycles");
  const Mapping mapping = read_mapping(r);
  const bool hashed = mapping != Mapping::Modulo;
  // The first miss only tells replay_sets which footprint measured sets were measured from.
  const auto first_miss = r.integer("first_miss_bytes");
  bool on = r.exists() ? present.value_or(true) : false;
  if (!r.exists() && default_size && *default_size > 0) on = true;
  e.geometry.line_bytes = power_of_two(r, "line_bytes", line, d.line_bytes);
  e.geometry.sector_bytes = power_of_two(r, "fetch_granularity_bytes", sector, e.geometry.line_bytes);
  if (e.geometry.sector_bytes > e.geometry.line_bytes)
    r.fail("fetch_granularity_bytes", "must not exceed line_bytes (" + std::to_string(e.geometry.line_bytes) + ")");
  if (e.geometry.line_bytes / e.geometry.sector_bytes > 64)
    r.fail("fetch_granularity_bytes", "more than 64 sectors per line are not supported");
  e.geometry.policy = read_policy(r, "replacement_policy");
  // A measured cache whose replacement test said nothing, where its eviction sets found that
  // it keeps a re-used line (the H100's L1): SRRIP's re-reference predictions do that.
  if (prov.measured && !r.string("replacement_policy") && r.string("eviction_set_policy") == "keeps_reused")
    e.geometry.policy = Policy::Srrip;
  e.latency_cycles = latency.value_or(d.latency_cycles);
  if (e.latency_cycles < 0) r.fail("latency_cycles", "must not be negative");
  if (penalty) {
    e.has_miss_penalty = true;
    e.miss_penalty_cycles = *penalty;
    e.miss_penalty_pooled = prov.measured && !d.l2;
  }
  if (!on) {  // still type-check the structure keys
    r.integer_or_integers("sets");
    r.integer("ways");
    return out;
  }
  if (!size && !default_size) r.fail(nullptr, "needs size_bytes (or present = false)");
  const uint64_t sz = uint64_t(positive(r, "size_bytes", size, int64_t(default_size.value_or(0))));
  const uint32_t b = e.geometry.line_bytes;
  check_cache_size(r, sz, b);  // before the sets are allocated
  const uint64_t lines = lines_of(r, sz, b, prov);
  if (prov.measured) {
    // Sizes, first miss and sets measured from one SM are one instance's where it fills only one.
    const uint32_t scale = prov.size_of_one_instance ? instances : 1;
    std::optional<uint64_t> first_lines;
    if (first_miss && *first_miss > 0) first_lines = uint64_t(*first_miss) / b * scale;
    e.geometry.set_ways = replay_sets(r, lines * scale, b, instances, hashed, first_lines, out.index, scale);
  } else {
    if (lines % instances) r.fail("size_bytes", "does not divide among " + std::to_string(instances) + " partitions");
    // Structure given for the whole cache; each partition holds an equal share of the sets.
    e.geometry.set_ways = read_sets(r, sz, b, "sets", "ways", instances, "size_bytes");
    if (mapping == Mapping::Mixed) {
      out.index = SetIndex::Mixed;
    } else if (hashed) {
      const uint32_t per = uint32_t(e.geometry.set_ways.size());
      if (per < 2 || !std::has_single_bit(per))
        r.fail("set_mapping", "\"hashed\" derives a hash for a power-of-two number of sets (per partition), not " +
                                  std::to_string(per) + "; give [sim." + r.path() + "] set_hash or set_mapping = \"modulo\"");
      out.index = SetIndex::Pairs;
    }
  }
  uint64_t held = 0;
  for (uint32_t w : e.geometry.set_ways) held += w;
  e.geometry.size_bytes = held * b;
  e.geometry.present = true;
  return out;
}

void read_cache_sim(Reader& s, Reader& element, CacheRead& read, bool partitions_allowed) {
  CacheElement& e = read.element;
  if (auto hash = s.node("set_hash")) {
    if (element.has("set_mapping") && element.string("set_mapping") == "modulo")
      s.fail("set_hash", "contradicts " + element.path() + ".set_mapping = \"modulo\"; remove one of them");
    read_set_hash(s, *hash, e);
  } else if (auto measured = element.node("set_hash"); measured && e.geometry.present) {
    read_set_hash_text(element, *measured, e);  // the form probes write: ["7^12", ...]
  } else if (e.geometry.present) {
    e.geometry.set_hash_masks = derived_masks(read.index, e.geometry.sets(), e.geometry.line_bytes);
    e.geometry.mixed_index = read.index == SetIndex::Mixed;
  }
  auto probs = s.numbers("victim_probabilities");
  auto eprobs = element.numbers("victim_probabilities");  // the probes report the measured ones
  if (!probs) probs = eprobs;
  if (e.geometry.present && e.geometry.policy == Policy::NonUniform) {
    const uint32_t w = e.geometry.max_ways();
    if (!probs) {  // Mei and Chu's Fermi L1: way 2 three times as likely as each other way
      probs = std::vector<double>(w, 1.0);
      if (w > 1) (*probs)[1] = 3.0;
    }
    *probs = per_way(*probs, w);
    if (probs->size() != w)
      s.fail("victim_probabilities", "needs one entry per way (" + std::to_string(w) + ") or per bin of ways, got " +
                                         std::to_string(probs->size()));
    double sum = 0;
    for (double p : *probs) {
      if (p < 0) s.fail("victim_probabilities", "must not be negative");
      sum += p;
    }
    if (sum <= 0) s.fail("victim_probabilities", "must not all be zero");
    for (double& p : *probs) p /= sum;
    e.geometry.victim_probabilities = *probs;
  }
  if (partitions_allowed) {
    e.partitions_per_sm = uint32_t(positive(s, "partitions_per_sm", s.integer("partitions_per_sm"), 1));
    if (e.partitions_per_sm > 32) s.fail("partitions_per_sm", "at most 32 partitions per SM");
  }
}

}  // namespace memtopo::sim
