// Reads a simulated device from a topology TOML file: every key is type-checked, unknown
// keys in known tables are refused, contradictions (size != sets*ways*line) are refused,
// and each error names FILE:LINE and the key path. Defaults: docs/simulator.md.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "memtopo/errors.hpp"
#include "engine/param_bank.hpp"
#include "sim/sim_model.hpp"

namespace memtopo::sim {
namespace {

const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}

// One TOML table being read: records which keys were read so that the rest can be
// refused as unknown, and words every error the same way.
class Reader {
 public:
  Reader(const toml::table* table, std::string path, const std::string& file)
      : table_(table), path_(std::move(path)), file_(file) {}

  bool exists() const { return table_ != nullptr; }
  bool has(const char* key) const { return table_ && table_->get(key); }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    std::ostringstream m;
    const toml::node* n = (table_ && key) ? table_->get(key) : nullptr;
    const auto& src = n ? n->source() : (table_ ? table_->source() : toml::source_region{});
    m << file_ << ":" << src.begin.line << ": " << path_ << (key ? std::string(".") + key : "") << ": " << what;
    throw Error(m.str());
  }

  const toml::node* node(const char* key) {
    used_.insert(key);
    return table_ ? table_->get(key) : nullptr;
  }
  void ignore(const char* key) { used_.insert(key); }

  std::optional<int64_t> integer(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<int64_t>()) return *v;
    fail(key, std::string("must be an integer, not ") + type_name(*n));
  }
  // Cycle counts: measured averages may be floats; they are rounded to whole cycles.
  std::optional<int64_t> cycles(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<int64_t>()) return *v;
    if (auto v = n->value_exact<double>()) return static_cast<int64_t>(std::llround(*v));
    fail(key, std::string("must be a number of cycles, not ") + type_name(*n));
  }
  std::optional<double> number(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<double>()) return *v;
    if (auto v = n->value_exact<int64_t>()) return static_cast<double>(*v);
    fail(key, std::string("must be a number, not ") + type_name(*n));
  }
  std::optional<bool> boolean(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<bool>()) return *v;
    fail(key, std::string("must be true or false, not ") + type_name(*n));
  }
  std::optional<std::string> string(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<std::string>()) return *v;
    fail(key, std::string("must be a string, not ") + type_name(*n));
  }
  std::optional<std::vector<int64_t>> integers(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) fail(key, std::string("must be an array of integers, not ") + type_name(*n));
    std::vector<int64_t> out;
    for (const toml::node& e : *a) {
      auto v = e.value_exact<int64_t>();
      if (!v) fail(key, std::string("must be an array of integers; it holds ") + type_name(e));
      out.push_back(*v);
    }
    return out;
  }
  std::optional<std::vector<double>> numbers(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    if (!a) fail(key, std::string("must be an array of numbers, not ") + type_name(*n));
    std::vector<double> out;
    for (const toml::node& e : *a) {
      if (auto v = e.value_exact<double>()) out.push_back(*v);
      else if (auto i = e.value_exact<int64_t>()) out.push_back(double(*i));
      else fail(key, std::string("must be an array of numbers; it holds ") + type_name(e));
    }
    return out;
  }
  // An integer, or an array of integers (per-set ways).
  std::optional<std::vector<int64_t>> integer_or_integers(const char* key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (auto v = n->value_exact<int64_t>()) return std::vector<int64_t>{*v};
    if (n->is_array()) {
      auto v = integers(key);
      if (v->empty()) fail(key, "must not be an empty array");
      return v;
    }
    fail(key, std::string("must be an integer or an array of integers, not ") + type_name(*n));
  }
  // Sub-table (e.g. [sim.l1d]); a missing one reads as empty.
  Reader sub(const char* key) {
    const toml::node* n = node(key);
    if (n && !n->is_table()) fail(key, std::string("must be a table, not ") + type_name(*n));
    return Reader(n ? n->as_table() : nullptr, path_ + "." + key, file_);
  }

  // Every key read so far is known; any other key is a mistake.
  void finish() const {
    if (!table_) return;
    for (const auto& [k, v] : *table_) {
      if (used_.count(std::string(k.str()))) continue;
      std::ostringstream known;
      for (const auto& u : used_) known << (known.tellp() ? ", " : "") << u;
      std::ostringstream m;
      m << file_ << ":" << v.source().begin.line << ": " << path_ << "." << k.str()
        << ": unknown key (known keys here: " << known.str() << ")";
      throw Error(m.str());
    }
  }

 private:
  const toml::table* table_;
  std::string path_;
  const std::string& file_;
  std::set<std::string> used_;
};

int64_t positive(Reader& r, const char* key, std::optional<int64_t> v, int64_t def) {
  if (!v) return def;
  if (*v <= 0) r.fail(key, "must be positive, got " + std::to_string(*v));
  return *v;
}

uint32_t power_of_two(Reader& r, const char* key, std::optional<int64_t> v, int64_t def) {
  int64_t x = positive(r, key, v, def);
  if (!std::has_single_bit(uint64_t(x)) || x > (int64_t(1) << 31))
    r.fail(key, "must be a power of two (bytes), got " + std::to_string(x));
  return static_cast<uint32_t>(x);
}

Policy read_policy(Reader& r, const char* key) {
  auto s = r.string(key);
  if (!s || *s == "lru") return Policy::Lru;
  if (*s == "fifo") return Policy::Fifo;
  if (*s == "random") return Policy::Random;
  if (*s == "non_uniform") return Policy::NonUniform;
  r.fail(key, "\"" + *s + "\" is not a replacement policy; use \"lru\", \"fifo\", \"random\" or \"non_uniform\"");
}

// Per-set ways from (size, line, sets, ways); `instances` splits the sets (L2 partitions).
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

struct ElementDefaults {
  uint32_t line_bytes;
  int64_t latency_cycles;
};

// A cache element table ([l1d], [texture], ...). `instances` > 1 for the partitioned L2.
CacheElement read_cache(Reader& r, ElementDefaults d, std::optional<uint64_t> default_size, uint32_t instances = 1) {
  CacheElement e;
  auto present = r.boolean("present");
  auto size = r.integer("size_bytes");
  auto line = r.integer("line_bytes");
  auto sector = r.integer("fetch_granularity_bytes");
  auto latency = r.cycles("latency_cycles");
  auto penalty = r.cycles("miss_penalty_cycles");
  // informational: what probes report beside the model's keys
  for (const char* k : {"full_miss_bytes", "set_mapping", "api_size_bytes", "level_latencies_cycles", "level_start_bytes"})
    r.ignore(k);
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

// [sim.<element>]: set-index hash, non-uniform probabilities, partitions per SM.
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

TlbLevel read_tlb_level(Reader& r, const char* lvl, uint64_t page_default, int64_t penalty_default) {
  const std::string p = lvl;
  TlbLevel t;
  auto entries = r.integer((p + "_entries").c_str());
  auto page = r.integer((p + "_page_bytes").c_str());
  auto penalty = r.cycles((p + "_miss_penalty_cycles").c_str());
  t.geometry.line_bytes = power_of_two(r, (p + "_page_bytes").c_str(), page, int64_t(page_default));
  t.geometry.sector_bytes = t.geometry.line_bytes;
  t.geometry.policy = read_policy(r, (p + "_replacement_policy").c_str());
  t.miss_penalty_cycles = penalty.value_or(penalty_default);
  if (!entries || *entries == 0) {
    r.integer_or_integers((p + "_sets").c_str());
    return t;
  }
  const int64_t n = positive(r, (p + "_entries").c_str(), entries, 1);
  const uint64_t page_bytes = t.geometry.line_bytes;
  t.geometry.size_bytes = uint64_t(n) * page_bytes;
  const std::string sets_key = p + "_sets";
  const std::string entries_key = p + "_entries";
  if (!r.has(sets_key.c_str())) {
    r.ignore(sets_key.c_str());
    t.geometry.set_ways.assign(1, uint32_t(n));  // fully associative
  } else {
    t.geometry.set_ways = read_sets(r, t.geometry.size_bytes, t.geometry.line_bytes, sets_key.c_str(), nullptr, 1,
                                    entries_key.c_str());
  }
  if (t.geometry.policy == Policy::NonUniform) {
    t.geometry.victim_probabilities.assign(t.geometry.max_ways(), 1.0 / t.geometry.max_ways());
  }
  t.geometry.present = true;
  return t;
}

void read_device(Reader& r, mt_device_info& info) {
  info.struct_size = sizeof(info);
  std::snprintf(info.backend, sizeof info.backend, "sim");
  if (!r.exists()) r.fail(nullptr, "missing: a simulated device needs a [device] table with at least sm_count");
  auto str = [&](const char* key, char* dst, size_t n) {
    if (auto v = r.string(key)) std::snprintf(dst, n, "%s", v->c_str());
  };
  auto num = [&](const char* key, auto& dst) {
    if (auto v = r.integer(key)) {
      if (*v < 0) r.fail(key, "must not be negative");
      dst = static_cast<std::remove_reference_t<decltype(dst)>>(*v);
    }
  };
  std::snprintf(info.name, sizeof info.name, "memtopo simulated GPU");
  str("name", info.name, sizeof info.name);
  str("uuid", info.uuid, sizeof info.uuid);
  str("pci_bus_id", info.pci_bus_id, sizeof info.pci_bus_id);
  if (auto cc = r.string("compute_capability")) {
    if (std::sscanf(cc->c_str(), "%d.%d", &info.cc_major, &info.cc_minor) != 2)
      r.fail("compute_capability", "must look like \"9.0\"");
  }
  info.warp_size = 32;
  num("sm_count", info.sm_count);
  num("warp_size", info.warp_size);
  num("sm_clock_khz", info.sm_clock_khz);
  num("memory_clock_khz", info.memory_clock_khz);
  num("memory_bus_width_bits", info.memory_bus_width_bits);
  num("global_memory_bytes", info.global_memory_bytes);
  num("l2_bytes", info.l2_bytes);
  num("shared_per_sm_bytes", info.shared_per_sm_bytes);
  num("shared_per_block_bytes", info.shared_per_block_bytes);
  num("shared_per_block_optin_bytes", info.shared_per_block_optin_bytes);
  num("constant_memory_bytes", info.constant_memory_bytes);
  // As on CUDA: Volta and later read a constant array's tail from the kernel parameters.
  info.constant_reach_bytes = engine::constant_reach(info.constant_memory_bytes, info.cc_major);
  num("constant_reach_bytes", info.constant_reach_bytes);
  if (info.constant_reach_bytes < info.constant_memory_bytes)
    r.fail("constant_reach_bytes", "must be at least constant_memory_bytes (" +
                                       std::to_string(info.constant_memory_bytes) + ")");
  num("registers_per_sm", info.registers_per_sm);
  num("registers_per_block", info.registers_per_block);
  num("max_threads_per_sm", info.max_threads_per_sm);
  num("max_threads_per_block", info.max_threads_per_block);
  num("max_blocks_per_sm", info.max_blocks_per_sm);
  if (info.sm_count <= 0) r.fail("sm_count", "must be a positive integer");
  if (info.sm_count > 1024) r.fail("sm_count", "at most 1024 SMs are simulated");
  if (info.warp_size <= 0) r.fail("warp_size", "must be positive");
  r.finish();
}

Storage read_storage(Reader& s, const char* key, std::initializer_list<std::pair<const char*, Storage>> allowed,
                     Storage def) {
  auto v = s.string(key);
  if (!v) return def;
  std::string names;
  for (auto& [n, st] : allowed) {
    if (*v == n) return st;
    names += (names.empty() ? "\"" : ", \"") + std::string(n) + "\"";
  }
  s.fail(key, "\"" + *v + "\" is not a storage; use " + names);
}

}  // namespace

Model load_model(const std::string& text, const std::string& file, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    std::ostringstream m;
    m << file << ":" << e.source().begin.line << ":" << e.source().begin.column << ": " << e.description();
    throw Error(m.str());
  }
  Model m;
  m.origin = origin;
  Reader top(&root, "", file);
  auto table = [&](const char* name) {
    const toml::node* n = root.get(name);
    if (n && !n->is_table()) {
      std::ostringstream msg;
      msg << file << ":" << n->source().begin.line << ": " << name << ": must be a table, not " << type_name(*n);
      throw Error(msg.str());
    }
    return Reader(n ? n->as_table() : nullptr, name, file);
  };

  Reader device = table("device");
  read_device(device, m.info);
  const uint32_t sm_count = uint32_t(m.info.sm_count);

  Reader sim = table("sim");
  Reader l1d = table("l1d"), texture = table("texture"), readonly = table("readonly");
  Reader c1 = table("constant_l1"), c15 = table("constant_l15"), l2 = table("l2");
  Reader shared = table("shared"), dram = table("dram"), tlb = table("tlb");

  m.l1d = read_cache(l1d, {128, 33}, std::nullopt);
  m.texture = read_cache(texture, {32, 40}, std::nullopt);
  m.readonly = read_cache(readonly, {32, 40}, std::nullopt);
  m.constant_l1 = read_cache(c1, {64, 30}, std::nullopt);
  m.constant_l15 = read_cache(c15, {256, 80}, std::nullopt);

  // L2: partitions split the sets; absent table: device.l2_bytes with default structure.
  auto parts = l2.integer("partitions");
  m.l2_partitions = uint32_t(positive(l2, "partitions", parts, 1));
  if (m.l2_partitions > 64) l2.fail("partitions", "at most 64 L2 partitions");
  std::optional<uint64_t> l2_default;
  if (m.info.l2_bytes > 0) l2_default = uint64_t(m.info.l2_bytes);
  if (l2.exists() && l2.has("size_bytes")) l2_default.reset();
  m.l2 = read_cache(l2, {128, 200}, l2_default, m.l2_partitions);
  auto far = l2.cycles("far_latency_cycles");
  m.l2_far_latency_cycles = far.value_or(m.l2.latency_cycles);
  if (far && *far < m.l2.latency_cycles)
    l2.fail("far_latency_cycles", "is below latency_cycles (the near partition's); the far partition cannot be faster");

  // shared, dram
  shared.boolean("present");
  shared.ignore("size_bytes");
  m.shared_latency_cycles = shared.cycles("latency_cycles").value_or(30);
  dram.boolean("present");
  if (auto v = dram.cycles("latency_cycles")) {
    m.has_dram_latency = true;
    m.dram_latency_cycles = *v;
  }
  if (!m.has_dram_latency) m.dram_latency_cycles = m.l2.has_miss_penalty ? m.l2.latency_cycles + m.l2.miss_penalty_cycles : 500;

  // TLB
  {
    auto present = tlb.boolean("present");
    auto page = tlb.integer("page_bytes");
    const uint64_t page_bytes = power_of_two(tlb, "page_bytes", page, 2 << 20);
    m.tlb_l1 = read_tlb_level(tlb, "l1", page_bytes, 30);
    m.tlb_l2 = read_tlb_level(tlb, "l2", page_bytes, 300);
    m.tlb_present = tlb.exists() && present.value_or(true) && (m.tlb_l1.geometry.present || m.tlb_l2.geometry.present);
  }

  // [sim]
  m.seed = uint64_t(sim.integer("seed").value_or(1));
  m.timing_overhead_cycles = sim.cycles("timing_overhead_cycles").value_or(0);
  if (m.timing_overhead_cycles < 0) sim.fail("timing_overhead_cycles", "must not be negative");
  m.noise_cycles = sim.cycles("noise_cycles").value_or(0);
  if (m.noise_cycles < 0) sim.fail("noise_cycles", "must not be negative");
  if (auto d = sim.string("noise_distribution")) {
    if (*d == "geometric") m.noise_geometric = true;
    else if (*d != "uniform") sim.fail("noise_distribution", "\"" + *d + "\": use \"uniform\" or \"geometric\"");
  }
  m.outlier_probability = sim.number("outlier_probability").value_or(0.0);
  if (m.outlier_probability < 0 || m.outlier_probability > 1) sim.fail("outlier_probability", "must be within 0..1");
  m.outlier_cycles = sim.cycles("outlier_cycles").value_or(0);
  if (m.outlier_cycles < 0) sim.fail("outlier_cycles", "must not be negative");
  m.stray_line_probability = sim.number("stray_line_probability").value_or(0.0);
  if (m.stray_line_probability < 0 || m.stray_line_probability > 1) sim.fail("stray_line_probability", "must be within 0..1");
  m.sm_per_gpc = uint32_t(positive(sim, "sm_per_gpc", sim.integer("sm_per_gpc"), sm_count));
  m.warp_schedulers = uint32_t(positive(sim, "warp_schedulers", sim.integer("warp_schedulers"), 4));
  if (auto v = sim.integer("l1_shared_total_bytes")) {
    if (*v < 0) sim.fail("l1_shared_total_bytes", "must not be negative");
    m.l1_shared_total_bytes = uint64_t(*v);
    if (*v && m.l1d.geometry.present && uint64_t(*v) < m.l1d.geometry.size_bytes)
      sim.fail("l1_shared_total_bytes", "is smaller than l1d.size_bytes; it is the L1 plus shared-memory array");
  }
  if (auto v = sim.integer("default_carveout_percent")) {
    if (*v < 0 || *v > 100) sim.fail("default_carveout_percent", "must be within 0..100");
    m.default_carveout_percent = int32_t(*v);
  }

  Reader s_l1d = sim.sub("l1d"), s_tex = sim.sub("texture"), s_ro = sim.sub("readonly");
  Reader s_c1 = sim.sub("constant_l1"), s_c15 = sim.sub("constant_l15"), s_l2 = sim.sub("l2"), s_tlb = sim.sub("tlb");
  read_cache_sim(s_l1d, l1d, m.l1d, true);
  read_cache_sim(s_tex, texture, m.texture, true);
  read_cache_sim(s_ro, readonly, m.readonly, true);
  read_cache_sim(s_c1, c1, m.constant_l1, false);
  read_cache_sim(s_c15, c15, m.constant_l15, false);
  read_cache_sim(s_l2, l2, m.l2, false);

  // Storage of the texture and read-only paths (which cache they look up first).
  const Storage tex_def = m.texture.geometry.present ? Storage::Texture : (m.l1d.geometry.present ? Storage::L1d : Storage::None);
  m.texture_storage = read_storage(s_tex, "storage", {{"own", Storage::Texture}, {"l1d", Storage::L1d}}, tex_def);
  if (m.texture_storage == Storage::Texture && !m.texture.geometry.present)
    s_tex.fail("storage", "\"own\" needs a [texture] table with size_bytes");
  if (m.texture_storage == Storage::L1d && !m.l1d.geometry.present)
    s_tex.fail("storage", "\"l1d\" needs an [l1d] table with size_bytes");
  Storage ro_def = m.texture_storage;
  if (ro_def == Storage::None && m.readonly.geometry.present) ro_def = Storage::Readonly;
  m.readonly_storage = read_storage(
      s_ro, "storage", {{"texture", m.texture_storage}, {"own", Storage::Readonly}, {"l1d", Storage::L1d}}, ro_def);
  if (m.readonly_storage == Storage::Readonly && !m.readonly.geometry.present)
    s_ro.fail("storage", "\"own\" needs a [readonly] table with size_bytes");
  if (m.readonly_storage == Storage::L1d && !m.l1d.geometry.present)
    s_ro.fail("storage", "\"l1d\" needs an [l1d] table with size_bytes");

  // L2 placement: which partition each SM is near.
  m.l2_interleave_bytes = power_of_two(s_l2, "interleave_bytes", s_l2.integer("interleave_bytes"), 4096);
  m.l2_foreign_line_probability = s_l2.number("foreign_line_probability").value_or(0.0);
  if (m.l2_foreign_line_probability < 0 || m.l2_foreign_line_probability > 1)
    s_l2.fail("foreign_line_probability", "must be within 0..1");
  m.l2_foreign_lines_per_kcycle = s_l2.number("foreign_lines_per_kcycle").value_or(0.0);
  if (m.l2_foreign_lines_per_kcycle < 0 || m.l2_foreign_lines_per_kcycle > 1000)
    s_l2.fail("foreign_lines_per_kcycle", "must be within 0..1000");
  if (auto near = s_l2.integers("near_partition")) {
    if (near->size() != sm_count)
      s_l2.fail("near_partition", "needs one entry per SM (" + std::to_string(sm_count) + ")");
    for (int64_t p : *near) {
      if (p < 0 || p >= int64_t(m.l2_partitions)) s_l2.fail("near_partition", "names a partition that does not exist");
      m.l2_near_partition.push_back(uint32_t(p));
    }
  } else {  // the first SMs are near partition 0, the next ones near partition 1, ...
    for (uint32_t s = 0; s < sm_count; ++s) m.l2_near_partition.push_back(uint32_t(uint64_t(s) * m.l2_partitions / sm_count));
  }
  m.tlb_l1_per_sm = s_tlb.boolean("l1_per_sm").value_or(true);
  m.tlb_on_l1_hit = s_tlb.boolean("translate_on_l1_hit").value_or(false);

  for (Reader* r : {&device, &l1d, &texture, &readonly, &c1, &c15, &l2, &shared, &dram, &tlb, &s_l1d, &s_tex, &s_ro,
                    &s_c1, &s_c15, &s_l2, &s_tlb, &sim})
    r->finish();
  (void)top;
  return m;
}

}  // namespace memtopo::sim
