// `memtopo export --accel-sim`: the cache and latency lines of a GPGPU-Sim / Accel-Sim
// gpgpusim.config from a topology (docs/accel-sim.md has the mapping and its sources).
//
// The cache strings follow GPGPU-Sim's cache_config::init (src/gpgpu-sim/gpu-cache.h):
// "<type>:<sets>:<line>:<ways>,<repl>:<write>:<alloc>:<write alloc>:<set index>,
// <mshr>:<entries>:<merge>,<miss queue>:<fifo entries>[,<data port width>]". Latencies are in
// core cycles: GPGPU-Sim counts the L1, ROP and DRAM latency queues in core clock cycles, the
// unit of every memtopo `_cycles` key.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "topology/base/terminal_text.hpp"
#include "tools/export/topology_export.hpp"
#include "tools/export/topology_reads.hpp"

namespace memtopo::host {

namespace {

constexpr const char* kNotMeasured = "default: not measured by memtopo";


bool is_power_of_two(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

// The keys of one cache's values by its subject (docs/roles.md): k("line_bytes") of "l1_cache" is
// the key whose role is cache.line_bytes@l1_cache.
struct CacheKeys {
  const TopologyReads& t;
  std::string subject;
  std::string operator()(const char* quantity) const { return t.cache(subject, quantity); }
};


// The config text: sections of `-option value  # source` lines. Every line passes through
// terminal_text: a line break in a device or file name would start a live option line.
class ConfigWriter {
 public:
  void raw(const std::string& line) { out_ += terminal_text(line) + "\n"; }
  void section(const std::string& title) {
    out_ += "\n";
    raw("# " + title);
  }
  void option(const std::string& name, const std::string& value, const std::string& source) {
    std::string line = name + " " + value;
    if (line.size() < 48) line.resize(48, ' ');
    raw(line + "  # " + source);
  }
  void left_out(const std::string& name, const std::string& why) { raw("# not written: " + name + ": " + why); }
  std::string text() const { return out_; }

 private:
  std::string out_;
};

// One cache's sets x line x ways, and where they come from.
struct Geometry {
  int64_t sets = 0, line = 0, ways = 0;
  std::string source;
  int64_t bytes() const { return sets * line * ways; }
};

// Whether measured sets x ways x line is the measured size, to one line: a size measured as a
// footprint can be a step (a line) off the capacity.
bool agrees_with_size(int64_t bytes, std::optional<int64_t> size, int64_t line) {
  return !size || (bytes >= *size - line && bytes <= *size + line);
}

// A per-SM cache: the measured sets and ways when they agree with the size, else the size
// split into `default_sets` sets (fewer where the lines do not divide). Sets stay powers of two:
// GPGPU-Sim masks the set index with sets - 1.
std::optional<Geometry> cache_geometry(const TopologyReads& t, const CacheKeys& k, int64_t default_sets, std::string* why) {
  const auto line = t.integer(k("line_bytes"));
  const auto size = t.integer(k("size_bytes"));
  const auto sets = t.integer(k("sets"));
  const auto ways = t.integer(k("ways"));
  if (!line || *line <= 0) {
    *why = "needs " + k("line_bytes");
    return std::nullopt;
  }
  if (sets && ways && is_power_of_two(*sets) && *ways > 0 && agrees_with_size(*sets * *line * *ways, size, *line))
    return Geometry{*sets, *line, *ways, k("sets") + ", " + k("line_bytes") + ", " + k("ways") + t.bound_note(k("sets"))};
  if (!size || *size <= 0 || *size % *line != 0) {
    *why = "needs " + k("size_bytes") + ", a multiple of " + k("line_bytes") + " (or " + k("sets") + " and " + k("ways") + ")";
    return std::nullopt;
  }
  const int64_t lines = *size / *line;
  int64_t s = default_sets;
  while (s > 1 && lines % s != 0) s /= 2;
  const char* why_default = sets && ways ? "the measured sets and ways do not fit GPGPU-Sim or the size"
                                         : "sets and ways not measured";
  return Geometry{s, *line, lines / s,
                  k("size_bytes") + t.bound_note(k("size_bytes")) + " / " + k("line_bytes") + " as " +
                      std::to_string(s) + " sets (default: " + why_default + ")"};
}

std::string geometry_text(char type, const Geometry& g) {
  return std::string(1, type) + ":" + std::to_string(g.sets) + ":" + std::to_string(g.line) + ":" + std::to_string(g.ways);
}

// GPGPU-Sim models LRU and FIFO replacement, and linear or XOR-hashed set indexing.
char replacement_char(const TopologyReads& t, const CacheKeys& k) {
  return t.text(k("replacement_policy")).value_or("") == "fifo" ? 'F' : 'L';
}
char set_index_char(const TopologyReads& t, const CacheKeys& k) {
  return t.text(k("set_mapping")).value_or("") == "hashed" ? 'X' : 'L';
}
// ", l1d.fetch_granularity_bytes, l1d.replacement_policy, ...": the keys of a cache string's
// type and policies that the topology has (the others are defaults).
std::string present_keys(const TopologyReads& t, const CacheKeys& k, bool with_fetch) {
  std::string out;
  for (const char* q : {"fetch_granularity_bytes", "replacement_policy", "set_mapping"})
    if (t.node(k(q)) && (with_fetch || std::string(q) != "fetch_granularity_bytes")) out += ", " + k(q);
  return out;
}

// Sectored (GPGPU-Sim's fixed 4 sectors of 32 B) where a 128 B line is fetched in parts.
char cache_type(const TopologyReads& t, const CacheKeys& k, int64_t line) {
  const auto fetch = t.integer(k("fetch_granularity_bytes"));
  return line == 128 && fetch && *fetch < line ? 'S' : 'N';
}

std::string cycles_text(double cycles) { return std::to_string(std::llround(cycles)); }

std::string mhz_text(int64_t khz) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(khz) / 1000.0);
  std::string s(buf);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  return s;
}

// ---------------------------------------------------------------------------- L2 and memory

// GPGPU-Sim's L2 is one cache per memory sub-partition: -gpgpu_cache:dl2 describes one of the
// n_mem x n_sub_partition of them, each holding an even share of the sets.
struct L2Plan {
  int64_t n_mem = 8, n_sub = 2;
  std::string n_mem_source;
  std::optional<Geometry> slice;  // one sub-partition
  std::string why_not;            // without a slice
};

// Channels as Accel-Sim's tuner counts them: 128-bit HBM channels on a 1024-bit or wider bus,
// else 32-bit GDDR channels (the DRAM type is not measured).
void memory_channels(const TopologyReads& t, L2Plan& plan) {
  const std::string& bus_key = t.key("gpu.memory_bus_width_bits");
  const auto bus = t.integer(bus_key);
  if (!bus || *bus <= 0) {
    plan.n_mem_source = std::string(kNotMeasured) + " (GPGPU-Sim's default; no " + bus_key + ")";
    return;
  }
  const int64_t width = *bus >= 1024 ? 128 : 32;
  plan.n_mem = std::max<int64_t>(1, *bus / width);
  plan.n_mem_source = bus_key + " / " + std::to_string(width) + "-bit " +
                      (width == 128 ? "HBM" : "GDDR") + " channels (channel width: default, not measured)";
}

// The ways of one slice's lines: the measured ways, else the first usual associativity that
// leaves a power-of-two number of sets.
std::optional<int64_t> slice_ways(int64_t lines, std::optional<int64_t> measured) {
  if (measured) {
    if (*measured > 0 && lines % *measured == 0 && is_power_of_two(lines / *measured)) return measured;
    return std::nullopt;
  }
  for (int64_t w : {16, 24, 20, 32, 12, 8, 4, 2, 1})
    if (lines % w == 0 && is_power_of_two(lines / w)) return w;
  return std::nullopt;
}

// How many times l2.size_bytes GPGPU-Sim's L2 holds, and why. One SM measured the size: where
// far reads leave copies in its near partition (l2.far_copy_bytes > 0), or partitions x size is
// the driver's L2 size to 2 %, it filled one partition, and GPGPU-Sim's L2, sliced by address
// over every memory sub-partition with no copies, holds all of them.
std::pair<int64_t, std::string> l2_partition_factor(const TopologyReads& t, int64_t size) {
  const auto parts = t.integer(t.key("cache.partitions@l2_cache"));
  if (!parts || *parts < 2) return {1, ""};
  const auto copies = t.integer(t.key("cache.far_copy_bytes@l2_cache"));
  const auto api = t.integer(t.key("cache.api_size_bytes@l2_cache")) ? t.integer(t.key("cache.api_size_bytes@l2_cache")) : t.integer(t.key("gpu.l2_bytes"));
  const bool api_agrees = api && std::llabs(*parts * size - *api) <= *api / 50;
  if (!(copies && *copies > 0) && !api_agrees) return {1, ""};
  return {*parts, " x " + t.key("cache.partitions@l2_cache") + " (one partition's: " +
                      (copies && *copies > 0 ? t.key("cache.far_copy_bytes@l2_cache") + " > 0" : "partitions x size is the API's") + ")"};
}

L2Plan plan_l2(const TopologyReads& t) {
  L2Plan plan;
  memory_channels(t, plan);
  const CacheKeys k{t, "l2_cache"};
  const auto line = t.integer(k("line_bytes"));
  const auto size = t.integer(k("size_bytes"));
  if (!line || !size || *line <= 0 || *size <= 0) {
    plan.why_not = "needs " + k("size_bytes") + " and " + k("line_bytes");
    return plan;
  }
  // The measured geometry's capacity where it agrees with the size (the sets need not be a
  // power of two: each slice holds a share of them).
  const auto sets = t.integer(k("sets"));
  auto ways = t.integer(k("ways"));
  if (ways && !(sets && *sets > 0 && *ways > 0 && agrees_with_size(*sets * *ways * *line, size, *line))) ways.reset();
  const auto [factor, per_partition] = l2_partition_factor(t, *size);
  const int64_t capacity = (ways ? *sets * *ways * *line : *size) * factor;
  // The derived channel count first, then powers of two below it, until the size splits evenly.
  std::vector<int64_t> candidates{plan.n_mem};
  int64_t p = 1;
  while (p * 2 <= plan.n_mem) p *= 2;
  for (; p >= 1; p /= 2)
    if (p != plan.n_mem) candidates.push_back(p);
  for (int64_t n_mem : candidates) {
    const int64_t slices = n_mem * plan.n_sub;
    if (capacity % (slices * *line) != 0) continue;
    const int64_t lines = capacity / (slices * *line);
    const auto w = slice_ways(lines, ways);
    if (!w) continue;
    if (n_mem != plan.n_mem)
      plan.n_mem_source += ", lowered from " + std::to_string(plan.n_mem) + " so that the L2 splits evenly";
    plan.n_mem = n_mem;
    const std::string share = " / (" + std::to_string(slices) + " sub-partitions)";
    plan.slice = Geometry{lines / *w, *line, *w,
                          ways ? k("sets") + per_partition + share + ", " + k("line_bytes") + ", " + k("ways")
                               : k("size_bytes") + t.bound_note(k("size_bytes")) + per_partition + share + " in " +
                                     k("line_bytes") + " lines, " + std::to_string(*w) + " ways (default: not measured)"};
    return plan;
  }
  plan.why_not = "the L2 (" + std::to_string(capacity) + " bytes) does not split into " +
                 "sub-partitions of a power-of-two number of sets of " + k("line_bytes") + " lines";
  return plan;
}

// ---------------------------------------------------------------------------- sections

void write_header(ConfigWriter& w, const TopologyReads& t, const std::string& source) {
  w.raw("# gpgpusim.config lines from a memtopo topology (memtopo export --accel-sim)");
  w.raw("# topology: " + source + "; device: " + t.text(t.key("gpu.name")).value_or("unknown") + " (" +
        t.text("meta.backend").value_or("?") + "), measured " + t.text("meta.created_utc").value_or("?") +
        " by memtopo " + t.text("meta.tool_version").value_or("?"));
  w.raw("# Append these lines to a complete gpgpusim.config (e.g. Accel-Sim's");
  w.raw("# configs/tested-cfgs/SM90_H100/gpgpusim.config): GPGPU-Sim reads options in order and the");
  w.raw("# last value wins. Each comment names the memtopo key a value comes from (device.*: what the");
  w.raw("# driver reports); \"default:\" marks values memtopo does not measure. docs/accel-sim.md has");
  w.raw("# the mapping.");
}

void write_architecture(ConfigWriter& w, const TopologyReads& t, const L2Plan& l2) {
  w.section("SMs, memory partitions, clocks");
  const std::string& sm_count = t.key("gpu.sm_count");
  if (const auto sms = t.integer(sm_count); sms && *sms > 0) {
    w.option("-gpgpu_n_clusters", std::to_string(*sms), sm_count);
    w.option("-gpgpu_n_cores_per_cluster", "1", std::string(kNotMeasured) + " (one SM per cluster)");
  } else {
    w.left_out("-gpgpu_n_clusters", "needs " + sm_count);
  }
  w.option("-gpgpu_n_mem", std::to_string(l2.n_mem), l2.n_mem_source);
  w.option("-gpgpu_n_sub_partition_per_mchannel", std::to_string(l2.n_sub),
           std::string(kNotMeasured) + " (Accel-Sim's Volta and later configs)");
  const std::string &core_key = t.key("gpu.sm_clock_khz"), &memory_key = t.key("gpu.memory_clock_khz");
  const auto core = t.integer(core_key);
  const auto memory = t.integer(memory_key);
  if (core && memory && *core > 0 && *memory > 0) {
    const std::string c = mhz_text(*core);
    w.option("-gpgpu_clock_domains", c + ":" + c + ":" + c + ":" + mhz_text(*memory),
             core_key + ", " + memory_key + " in MHz; interconnect and L2 at the core clock: default");
  } else {
    w.left_out("-gpgpu_clock_domains", "needs " + core_key + " and " + memory_key);
  }
}

// The unified L1/shared storage of the carveout levels: the largest L1 plus shared memory of a
// level, and the shared-memory sizes, when every one is whole KiB (GPGPU-Sim's units).
struct UnifiedL1 {
  int64_t bytes = 0;
  std::vector<int64_t> shared_options;  // sorted, distinct
};
std::optional<UnifiedL1> unified_l1(const TopologyReads& t) {
  const auto shared = t.integers(t.key("memory.carveout_shared_bytes@shared"));
  const auto l1 = t.integers(t.key("memory.carveout_l1_bytes@shared"));
  if (shared.empty() || shared.size() != l1.size()) return std::nullopt;
  UnifiedL1 u;
  for (size_t i = 0; i < shared.size(); ++i) {
    if (shared[i] % 1024 != 0) return std::nullopt;
    u.bytes = std::max(u.bytes, shared[i] + l1[i]);
  }
  if (u.bytes % 1024 != 0) return std::nullopt;
  u.shared_options = shared;
  std::sort(u.shared_options.begin(), u.shared_options.end());
  u.shared_options.erase(std::unique(u.shared_options.begin(), u.shared_options.end()), u.shared_options.end());
  return u;
}

// GPGPU-Sim's adaptive L1 takes the dl1 geometry as the whole unified storage and, for a
// kernel's shared memory, the next -gpgpu_shmem_option s, keeps round(ways x (1 - s / unified))
// ways: with the dl1 at the unified size, each carveout level's L1 comes back.
void write_unified_l1(ConfigWriter& w, const TopologyReads& t, const std::optional<UnifiedL1>& u, const Geometry& dl1) {
  const std::string &shared = t.key("memory.carveout_shared_bytes@shared"), &l1 = t.key("memory.carveout_l1_bytes@shared");
  const int64_t dl1_kib = dl1.bytes() / 1024;
  if (u && dl1_kib > 0 && (u->bytes / 1024) % dl1_kib == 0) {
    std::string list;
    for (int64_t s : u->shared_options) list += (list.empty() ? "" : ",") + std::to_string(s / 1024);
    w.option("-gpgpu_adaptive_cache_config", "1", shared + " (the L1 shrinks as shared memory grows)");
    w.option("-gpgpu_unified_l1d_size", std::to_string(u->bytes / 1024),
             "KiB: largest " + l1 + " + " + shared);
    w.option("-gpgpu_shmem_option", list, "KiB: " + shared);
    w.option("-gpgpu_l1_cache_write_ratio", "25", std::string(kNotMeasured) + " (Accel-Sim's SM86 and SM90 configs)");
    return;
  }
  w.option("-gpgpu_adaptive_cache_config", "0",
           std::string(kNotMeasured) + (u ? " (the unified size is no multiple of the dl1's: the L1 keeps the dl1 geometry)"
                                          : " (no carveout levels (" + shared +
                                                ") in whole KiB: the L1 keeps the dl1 geometry)"));
  w.option("-gpgpu_unified_l1d_size", std::to_string(dl1_kib), "KiB: the dl1 size, so that the L1 is the dl1 geometry");
}

void write_l1(ConfigWriter& w, const TopologyReads& t) {
  w.section("L1 data cache");
  const CacheKeys k{t, "l1_cache"};
  std::string why;
  auto g = cache_geometry(t, k, 4, &why);
  const std::optional<UnifiedL1> unified = unified_l1(t);
  if (g && unified && unified->bytes % (g->sets * g->line) == 0) {
    // The dl1 as the whole unified storage, so that the adaptive L1 scales its ways.
    g->ways = unified->bytes / (g->sets * g->line);
    g->source = "the unified L1 and shared storage (largest " + t.key("memory.carveout_l1_bytes@shared") + " + " + t.key("memory.carveout_shared_bytes@shared") +
                ") as " + std::to_string(g->sets) + " sets of " + k("line_bytes") + " (from " + g->source + ")";
  }
  if (g) {
    const int64_t port = g->line % 32 == 0 ? 32 : g->line;
    const std::string value = geometry_text(cache_type(t, k, g->line), *g) + "," + replacement_char(t, k) +
                              ":T:m:L:" + set_index_char(t, k) + ",A:512:64,16:0," + std::to_string(port);
    w.option("-gpgpu_cache:dl1", value,
             g->source + present_keys(t, k, true) +
                 "; write-through, queues: default (Accel-Sim's SM90_H100)");
    write_unified_l1(w, t, unified, *g);
  } else {
    w.left_out("-gpgpu_cache:dl1", why);
  }
  const std::string latency = k("latency_cycles");
  if (const auto lat = t.number(latency); lat && std::llround(*lat) > 0)
    w.option("-gpgpu_l1_latency", cycles_text(*lat), latency + t.bound_note(latency));
  else
    w.left_out("-gpgpu_l1_latency", "needs " + latency);
  if (const auto present = t.boolean(t.key("cache.present@l1_cache")))
    w.option("-gpgpu_gmem_skip_L1D", *present ? "0" : "1", t.key("cache.present@l1_cache") + " (global loads through L1)");
}

void write_shared(ConfigWriter& w, const TopologyReads& t) {
  w.section("shared memory");
  struct Item {
    const char* option;
    std::string key;
  };
  for (const Item& i : {Item{"-gpgpu_shmem_size", t.key("gpu.shared_per_sm_bytes")},
                        Item{"-gpgpu_shmem_per_block", t.key("gpu.shared_per_block_bytes")},
                        Item{"-gpgpu_shmem_num_banks", t.key("memory.banks@shared")}}) {
    if (const auto v = t.integer(i.key); v && *v > 0) w.option(i.option, std::to_string(*v), i.key);
    else w.left_out(i.option, "needs " + i.key);
  }
  const std::string& latency = t.key("memory.latency_cycles@shared");
  if (const auto lat = t.number(latency); lat && std::llround(*lat) > 0)
    w.option("-gpgpu_smem_latency", cycles_text(*lat), latency);
  else
    w.left_out("-gpgpu_smem_latency", "needs " + latency);
}

// The ROP latency is what an L2 hit adds to an L1 hit and the DRAM latency what a DRAM access
// adds to an L2 hit, as Accel-Sim's tuner derives them (l2_lat.cu, mem_lat.cu).
void write_memory_latencies(ConfigWriter& w, const TopologyReads& t, const CacheKeys& l1, const CacheKeys& l2) {
  const std::string l1_pen = l1("miss_penalty_cycles"), l1_hit = l1("latency_cycles");
  const std::string l2_pen = l2("miss_penalty_cycles"), l2_hit = l2("latency_cycles");
  const auto l1_penalty = t.number(l1_pen);
  const auto l1_lat = t.number(l1_hit);
  const auto l2_lat = t.number(l2_hit);
  if (l1_penalty && std::llround(*l1_penalty) > 0)
    w.option("-gpgpu_l2_rop_latency", cycles_text(*l1_penalty), l1_pen + " (L2 hit minus L1 hit)");
  else if (l1_lat && l2_lat && std::llround(*l2_lat - *l1_lat) > 0)
    w.option("-gpgpu_l2_rop_latency", cycles_text(*l2_lat - *l1_lat), l2_hit + " - " + l1_hit);
  else
    w.left_out("-gpgpu_l2_rop_latency", "needs " + l1_pen + ", or " + l2_hit + " and " + l1_hit);
  const std::string &dram_by_loads = t.key("memory.loaded_latency_cycles@main"), &l2_by_loads = t.key("cache.loaded_latency_cycles@l2_cache");
  const auto l2_penalty = t.number(l2_pen);
  const auto loads_dram = t.number(dram_by_loads);
  const auto loads_l2 = t.number(l2_by_loads);
  if (l2_penalty && std::llround(*l2_penalty) > 0)
    w.option("-dram_latency", cycles_text(*l2_penalty), l2_pen + " (DRAM access minus L2 hit)");
  else if (loads_dram && loads_l2 && std::llround(*loads_dram - *loads_l2) > 0)
    w.option("-dram_latency", cycles_text(*loads_dram - *loads_l2), dram_by_loads + " - " + l2_by_loads);
  else
    w.left_out("-dram_latency", "needs " + l2_pen + ", or " + dram_by_loads + " and " + l2_by_loads);
}

void write_l2(ConfigWriter& w, const TopologyReads& t, const L2Plan& l2) {
  w.section("L2 cache (one memory sub-partition) and memory latencies");
  const CacheKeys k{t, "l2_cache"};
  if (l2.slice) {
    const Geometry& g = *l2.slice;
    const int64_t port = g.line % 32 == 0 ? 32 : g.line;
    w.option("-gpgpu_cache:dl2",
             geometry_text(cache_type(t, k, g.line), g) + "," + replacement_char(t, k) + ":B:m:L:" +
                 set_index_char(t, k) + ",A:192:4,32:0," + std::to_string(port),
             g.source + present_keys(t, k, true) + "; write-back, queues: default (Accel-Sim's tuner)");
  } else {
    w.left_out("-gpgpu_cache:dl2", l2.why_not);
  }
  const auto parts = t.integer(t.key("cache.partitions@l2_cache"));
  const auto near = t.number(k("latency_cycles")), far = t.number(t.key("cache.far_latency_cycles@l2_cache"));
  if (parts && *parts > 1)
    w.raw("# the L2's " + std::to_string(*parts) + " partitions (" + t.key("cache.partitions@l2_cache") +
          (near && far ? ": a hit " + cycles_text(*near) + " cycles from the near one, " + cycles_text(*far) +
                             " from the far one" : std::string()) +
          ") have no counterpart: GPGPU-Sim's L2 is one distance from every SM, the near hit below");
  w.option("-gpgpu_cache:dl2_texture_only", "0", std::string(kNotMeasured) + " (the L2 caches every access)");
  write_memory_latencies(w, t, CacheKeys{t, "l1_cache"}, k);
}

// Texture and constant caches: read-only, with the queues of Accel-Sim's SM90_H100 config (the
// texture cache's 'T' FIFO takes exactly 14 fields: no data port width).
void write_read_only(ConfigWriter& w, const TopologyReads& t) {
  w.section("texture and constant caches");
  struct Cache {
    const char* option;
    CacheKeys k;
    const char* policies;  // after the replacement policy, before the set index
    const char* queues;
  };
  for (const Cache& c : {Cache{"-gpgpu_tex_cache:l1", {t, "texture_cache"}, ":R:m:N:", ",T:512:8,128:2"},
                         Cache{"-gpgpu_const_cache:l1", {t, "constant_cache"}, ":R:f:N:", ",S:2:64,4"}}) {
    std::string why;
    const auto g = cache_geometry(t, c.k, 4, &why);
    if (!g) {
      w.left_out(c.option, why);
      continue;
    }
    w.option(c.option,
             geometry_text('N', *g) + "," + replacement_char(t, c.k) + c.policies + set_index_char(t, c.k) +
                 c.queues,
             g->source + present_keys(t, c.k, false) + "; queues: default (Accel-Sim's SM90_H100)");
  }
}

}  // namespace

std::string accel_sim_config_text(const toml::table& doc, const std::string& source) {
  const TopologyReads t(doc);
  const L2Plan l2 = plan_l2(t);
  ConfigWriter w;
  write_header(w, t, source);
  write_architecture(w, t, l2);
  write_l1(w, t);
  write_shared(w, t);
  write_l2(w, t, l2);
  write_read_only(w, t);
  return w.text();
}

}  // namespace memtopo::host
