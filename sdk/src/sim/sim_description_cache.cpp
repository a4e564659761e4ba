// The cache element tables ([l1d], [texture], [readonly], [constant_l1], [constant_l15],
// [l2]) and their [sim.<element>] sub-tables: size = sets x ways x line, set-index hash,
// non-uniform victim probabilities, partitions per SM.
#include <string>
#include <vector>

#include "sim/sim_description.hpp"

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
    if (s * w != lines)
      r.fail(sets_key, std::to_string(s) + " sets x " + std::to_string(w) + " ways x " + std::to_string(line) +
                           " B = " + std::to_string(s * w * line) + " B, but " + size_key + " = " +
                           std::to_string(size) + "; make them agree");
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

// Keys the probes report that the model derives instead: type-checked, then not used.
void read_informational(Reader& r, bool l2) {
  r.integer("first_miss_bytes");
  r.integer("full_miss_bytes");
  if (!l2) return;
  r.integer("api_size_bytes");
  r.numbers("level_latencies_cycles");
  r.integers("level_start_bytes");
}

// set_mapping: "modulo" or "hashed", as the geometry probe reports it.
void read_set_mapping(Reader& r) {
  auto v = r.string("set_mapping");
  if (v && *v != "modulo" && *v != "hashed")
    r.fail("set_mapping", "\"" + *v + "\" is not a set mapping; use \"modulo\" or \"hashed\"");
}

}  // namespace

CacheElement read_cache(Reader& r, ElementDefaults d, std::optional<uint64_t> default_size, uint32_t instances) {
  CacheElement e;
  auto present = r.boolean("present");
  auto size = r.integer("size_bytes");
  auto line = r.integer("line_bytes");
  auto sector = r.integer("fetch_granularity_bytes");
  auto latency = r.cycles("latency_cycles");
  auto penalty = r.cycles("miss_penalty_cycles");
  read_set_mapping(r);
  read_informational(r, d.l2);
  bool on = r.exists() ? present.value_or(true) : false;
  if (!r.exists() && default_size && *default_size > 0) on = true;
  e.geometry.line_bytes = power_of_two(r, "line_bytes", line, d.line_bytes);
  e.geometry.sector_bytes = power_of_two(r, "fetch_granularity_bytes", sector, e.geometry.line_bytes);
  if (e.geometry.sector_bytes > e.geometry.line_bytes)
    r.fail("fetch_granularity_bytes", "must not exceed line_bytes (" + std::to_string(e.geometry.line_bytes) + ")");
  if (e.geometry.line_bytes / e.geometry.sector_bytes > 64)
    r.fail("fetch_granularity_bytes", "more than 64 sectors per line are not supported");
  e.geometry.policy = read_policy(r, "replacement_policy");
  e.latency_cycles = latency.value_or(d.latency_cycles);
  if (e.latency_cycles < 0) r.fail("latency_cycles", "must not be negative");
  if (penalty) {
    e.has_miss_penalty = true;
    e.miss_penalty_cycles = *penalty;
  }
  if (!on) {  // still type-check the structure keys
    r.integer_or_integers("sets");
    r.integer("ways");
    return e;
  }
  if (!size && !default_size) r.fail(nullptr, "needs size_bytes (or present = false)");
  const uint64_t sz = uint64_t(positive(r, "size_bytes", size, int64_t(default_size.value_or(0))));
  if (sz % instances) r.fail("size_bytes", "does not divide among " + std::to_string(instances) + " partitions");
  e.geometry.size_bytes = sz / instances;
  // Structure given for the whole cache; each partition holds an equal share of the sets.
  e.geometry.set_ways = read_sets(r, sz, e.geometry.line_bytes, "sets", "ways", instances, "size_bytes");
  e.geometry.present = true;
  return e;
}

void read_cache_sim(Reader& s, Reader& element, CacheElement& e, bool partitions_allowed) {
  if (auto hash = s.node("set_hash")) {
    const toml::array* a = hash->as_array();
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
    if (e.geometry.present && (uint64_t(1) << e.geometry.set_hash_masks.size()) != e.geometry.sets())
      s.fail("set_hash", std::to_string(e.geometry.set_hash_masks.size()) + " index bits cannot address " +
                             std::to_string(e.geometry.sets()) + " sets; give log2(sets) entries");
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
    if (probs->size() != w)
      s.fail("victim_probabilities", "needs one entry per way (" + std::to_string(w) + "), got " + std::to_string(probs->size()));
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
