// [tlb] and the [sim] table with its sub-tables: what probes do not measure (noise, GPCs,
// carveout, storages, L2 placement and traffic, TLB sharing). Defaults: docs/simulator.md.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "sim/sim_description.hpp"
#include "sim/sim_limits.hpp"

namespace memtopo::sim {
namespace {

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
  r.ignore((p + "_reach_bytes").c_str());  // measured: entries x page_bytes
  // Measured sets (tlb/sets): the ways of each set in the order they overflowed.
  const auto set_ways = r.integer_or_integers((p + "_set_ways").c_str());
  if (!entries || *entries == 0) {
    r.integer_or_integers((p + "_sets").c_str());
    return t;
  }
  const int64_t n = positive(r, (p + "_entries").c_str(), entries, 1);
  if (n > kMaxTlbEntries)
    r.fail((p + "_entries").c_str(), std::to_string(n) + " entries are more than the simulator handles in one TLB level (" +
                                         std::to_string(kMaxTlbEntries) + "); check the value (docs/simulator.md, \"Limits\")");
  const uint64_t page_bytes = t.geometry.line_bytes;
  t.geometry.size_bytes = uint64_t(n) * page_bytes;
  const std::string sets_key = p + "_sets";
  const std::string entries_key = p + "_entries";
  const bool unequal = set_ways && std::any_of(set_ways->begin(), set_ways->end(),
                                                [&](int64_t w) { return w != set_ways->front(); });
  if (unequal) {
    r.integer_or_integers(sets_key.c_str());
    int64_t sum = 0;
    for (int64_t w : *set_ways) {
      if (w <= 0 || w > n) r.fail((p + "_set_ways").c_str(), "every set needs 1 to " + std::to_string(n) + " entries");
      sum += w;
      t.geometry.set_ways.push_back(uint32_t(w));
    }
    if (sum != n)
      r.fail((p + "_set_ways").c_str(), "the sets hold " + std::to_string(sum) + " entries, but " + entries_key + " = " +
                                            std::to_string(n) + "; make them agree");
  } else if (!r.has(sets_key.c_str())) {
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

void read_tlb(Reader& tlb, Model& m) {
  auto present = tlb.boolean("present");
  auto page = tlb.integer("page_bytes");
  const uint64_t page_bytes = power_of_two(tlb, "page_bytes", page, 2 << 20);
  m.tlb_l1 = read_tlb_level(tlb, "l1", page_bytes, 30);
  m.tlb_l2 = read_tlb_level(tlb, "l2", page_bytes, 300);
  m.tlb_present = tlb.exists() && present.value_or(true) && (m.tlb_l1.geometry.present || m.tlb_l2.geometry.present);
  tlb.ignore("level_count");  // measured: the levels present above
  // Measured with aliased 2 MiB mappings (tlb/mapped-levels, CUDA only): informational, the
  // simulator's chases go through [tlb] l1 and l2.
  for (const char* k : {"mapped_page_bytes", "mapped_level_count", "mapped_entries", "mapped_miss_penalty_cycles",
                        "mapped_reach_bytes"})
    tlb.ignore(k);
  // Measured (tlb/l1d-virtual); [sim.tlb] translate_on_l1_hit, read later, may override it.
  if (auto t = tlb.boolean("l1d_hit_translated")) m.tlb_on_l1_hit = *t;
}

void read_shared_banks(Reader& shared, Model& m) {
  auto banks = shared.integer("banks");
  auto width = shared.integer("bank_bytes");
  m.shared_banks = uint32_t(power_of_two(shared, "banks", banks, 32));
  m.shared_bank_bytes = uint32_t(power_of_two(shared, "bank_bytes", width, 4));
  if (m.shared_banks > 64) shared.fail("banks", "at most 64 banks");
  if (m.shared_bank_bytes < 4 || m.shared_bank_bytes > 16) shared.fail("bank_bytes", "4, 8 or 16 bytes");
  m.shared_conflict_cycles = shared.cycles("conflict_cycles").value_or(2);
  if (m.shared_conflict_cycles < 0) shared.fail("conflict_cycles", "must not be negative");
  shared.boolean("broadcast");  // measured: a warp's lanes reading one word take one turn
  shared.ignore("latency_by_conflict_degree_cycles");  // measured, follows from the above
  shared.ignore("sm_bytes_per_cycle");                 // measured; the simulator has no limit
  shared.ignore("wide_load_latency_cycles");           // measured, follows from the banks
  shared.ignore("wide_load_turns");
  shared.ignore("wide_load_sm_bytes_per_cycle");
}

void read_mlp(Reader& mlp, Model& m) {
  const auto limit = [&](const char* key) {
    auto v = mlp.integer(key);
    const int64_t n = v ? positive(mlp, key, v, 1) : 0;
    if (n > 1 << 20) mlp.fail(key, std::to_string(n) + " loads in flight per SM is more than the simulator handles (2^20)");
    return uint32_t(n);
  };
  m.l2_loads_in_flight = limit("sm_l2_loads_in_flight");
  m.dram_loads_in_flight = limit("sm_dram_loads_in_flight");
  for (const char* k : {"warp_l2_loads_in_flight", "warp_dram_loads_in_flight", "thread_l2_loads_in_flight",
                        "sm_l2_latency_cycles", "sm_dram_latency_cycles", "sm_l2_loads_per_kcycle",
                        "sm_dram_loads_per_kcycle"})
    mlp.ignore(k);
}

void read_throughput(Reader& t, Model& m) {
  StreamPeaks& p = m.stream_peaks;
  const auto rate = [&](const char* key) {
    const double v = t.number(key).value_or(0);
    if (v < 0 || !std::isfinite(v)) t.fail(key, "must be a positive rate (or absent: no peak)");
    return v;
  };
  p.l1_read_bytes_per_cycle_per_sm = rate("l1_read_bytes_per_cycle_per_sm");
  p.l2_read_bytes_per_cycle = rate("l2_read_bytes_per_cycle");
  p.l2_write_bytes_per_cycle = rate("l2_write_bytes_per_cycle");
  p.dram_read_bytes_per_second = rate("dram_read_bytes_per_second");
  p.dram_write_bytes_per_second = rate("dram_write_bytes_per_second");
  // Measured (global-throughput/streams), and following from the peaks above.
  for (const char* series : {"l1_read", "l2_read", "l2_write", "dram_read", "dram_write", "dram_copy", "dram_update"})
    for (const char* what : {"_bytes_per_second", "_best_config", "_min95_config"})
      t.ignore(std::string(series) + what);
  for (const char* k : {"dram_theoretical_bytes_per_second", "dram_read_fraction_of_theoretical",
                        "dram_write_fraction_of_theoretical"})
    t.ignore(k);
}

void read_sim_globals(Reader& sim, Model& m, bool constant_l15_measured) {
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
  // A measured L1.5 was measured from one SM at a time, and the constant L1's miss penalty
  // from eight SMs at once, each of whose footprints hit the L1.5 on the device measured: one
  // L1.5 per SM reproduces both without knowing which SMs share one.
  const int64_t gpc_default = constant_l15_measured ? 1 : m.info.sm_count;
  const int64_t sm_per_gpc = positive(sim, "sm_per_gpc", sim.integer("sm_per_gpc"), gpc_default);
  if (sm_per_gpc > m.info.sm_count)  // also keeps the GPC count from wrapping to a division by zero
    sim.fail("sm_per_gpc", "is more than device.sm_count (" + std::to_string(m.info.sm_count) + "); at most sm_count");
  m.sm_per_gpc = uint32_t(sm_per_gpc);
  const int64_t schedulers = positive(sim, "warp_schedulers", sim.integer("warp_schedulers"), 4);
  if (schedulers > kMaxWarpSchedulers)
    sim.fail("warp_schedulers", "must be within 1.." + std::to_string(kMaxWarpSchedulers));
  m.warp_schedulers = uint32_t(schedulers);
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
}

void read_carveout(Reader& sim, Reader& shared, Model& m) {
  const auto sizes = sim.integers("shared_sizes_bytes");
  // Measured (shared-memory/carveout): the levels a carveout sweep found, which replay as the
  // sizes a carveout selects, and the L1 plus shared memory of the first as the array they split.
  shared.ignore("carveout_percent");
  shared.ignore("carveout_block_shared_bytes");
  const auto measured = shared.integers("carveout_sm_shared_bytes");
  const auto l1_left = shared.integers("carveout_l1d_size_bytes");
  if (measured && l1_left && measured->size() != l1_left->size())
    shared.fail("carveout_l1d_size_bytes", "has " + std::to_string(l1_left->size()) + " entries, carveout_sm_shared_bytes " +
                                               std::to_string(measured->size()) + "; one per carveout level");
  Reader& from = sizes ? sim : shared;
  const char* key = sizes ? "shared_sizes_bytes" : "carveout_sm_shared_bytes";
  const std::vector<int64_t> list = sizes ? *sizes : measured.value_or(std::vector<int64_t>{});
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] < 0) from.fail(key, "holds a negative size");
    if (i && list[i] <= list[i - 1]) from.fail(key, "must be ascending: one entry per size a carveout selects");
    m.shared_sizes_bytes.push_back(uint64_t(list[i]));
  }
  // One level: the L1 does not change with the carveout. The measured L1 is one thread's, so
  // one partition's.
  if (!sizes && measured && l1_left && measured->size() > 1 && !sim.has("l1_shared_total_bytes")) {
    const uint64_t total = uint64_t(std::max<int64_t>(0, (*l1_left)[0])) * m.l1d.partitions_per_sm + uint64_t((*measured)[0]);
    m.l1_shared_total_bytes = std::max<uint64_t>(total, m.l1d.geometry.size_bytes);
  }
}

void read_storages(Reader& s_tex, Reader& s_ro, Reader& texture, Reader& readonly, Reader& constant_l1, Model& m) {
  // Measured (cache-sharing/storage): the simulator's constant L1 always has a storage of its own.
  if (auto c = constant_l1.string("storage"); c && *c != "own")
    constant_l1.fail("storage", "\"" + *c + "\": the simulator's constant L1 has a storage of its own; use \"own\" or "
                                "remove the key");
  Storage tex_def =
      m.texture.geometry.present ? Storage::Texture : (m.l1d.geometry.present ? Storage::L1d : Storage::None);
  tex_def = read_storage(texture, "storage", {{"own", tex_def}, {"l1d", Storage::L1d}}, tex_def);
  m.texture_storage = read_storage(s_tex, "storage", {{"own", Storage::Texture}, {"l1d", Storage::L1d}}, tex_def);
  if (m.texture_storage == Storage::Texture && !m.texture.geometry.present)
    s_tex.fail("storage", "\"own\" needs a [texture] table with size_bytes");
  if (m.texture_storage == Storage::L1d && !m.l1d.geometry.present)
    s_tex.fail("storage", "\"l1d\" needs an [l1d] table with size_bytes");
  // A [readonly] table describes a cache of its own (a measured one may differ from the
  // texture path's: the H100's has 128 B lines, its texture path 256 B); without one,
  // read-only loads share whatever texture loads use.
  Storage ro_def = m.readonly.geometry.present ? Storage::Readonly : m.texture_storage;
  ro_def = read_storage(readonly, "storage", {{"texture", m.texture_storage}, {"own", ro_def}, {"l1d", Storage::L1d}},
                        ro_def);
  m.readonly_storage = read_storage(
      s_ro, "storage", {{"texture", m.texture_storage}, {"own", Storage::Readonly}, {"l1d", Storage::L1d}}, ro_def);
  if (m.readonly_storage == Storage::Readonly && !m.readonly.geometry.present)
    s_ro.fail("storage", "\"own\" needs a [readonly] table with size_bytes");
  if (m.readonly_storage == Storage::L1d && !m.l1d.geometry.present)
    s_ro.fail("storage", "\"l1d\" needs an [l1d] table with size_bytes");
}

void read_l2_placement(Reader& s_l2, Reader& l2, Model& m) {
  const uint32_t sm_count = uint32_t(m.info.sm_count);
  // Measured (cache-sharing/l2-partitions): the granule of the interleave, and each SM's near
  // partition, where [sim.l2] gives none and they fit this L2 (a power-of-two granule, a map of
  // one entry per SM naming partitions the L2 has).
  const auto granule = l2.integer("partition_granule_bytes");
  const auto measured_near = l2.integers("near_partition_of_sm");
  l2.ignore("partition_interleave");
  l2.ignore("partition_sm_counts");
  const bool granule_fits = granule && *granule > 0 && (*granule & (*granule - 1)) == 0;
  m.l2_interleave_bytes = power_of_two(s_l2, "interleave_bytes", s_l2.integer("interleave_bytes"),
                                       granule_fits ? *granule : 4096);
  // Measured (cache-sharing/l2-far-copies): a read of a far line leaves a copy near.
  const auto copy_bytes = l2.integer("far_copy_bytes");
  m.l2_far_copies_near = s_l2.boolean("far_copies_near").value_or(copy_bytes && *copy_bytes > 0);
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
  } else if (measured_near && measured_near->size() == sm_count &&
             std::all_of(measured_near->begin(), measured_near->end(),
                         [&](int64_t p) { return p >= 0 && p < int64_t(m.l2_partitions); })) {
    for (int64_t p : *measured_near) m.l2_near_partition.push_back(uint32_t(p));
  } else {  // the first SMs are near partition 0, the next ones near partition 1, ...
    for (uint32_t s = 0; s < sm_count; ++s) m.l2_near_partition.push_back(uint32_t(uint64_t(s) * m.l2_partitions / sm_count));
  }
}

void read_sim_tlb(Reader& s_tlb, Model& m) {
  m.tlb_l1_per_sm = s_tlb.boolean("l1_per_sm").value_or(true);
  m.tlb_on_l1_hit = s_tlb.boolean("translate_on_l1_hit").value_or(m.tlb_on_l1_hit);
}

// [sim.cluster]: distributed shared memory of probe kernels' clusters (docs/simulator.md,
// "Probe kernels").
void read_sim_cluster(Reader& c, Model& m) {
  m.cluster_remote_latency_cycles = c.cycles("remote_latency_cycles").value_or(0);
  m.cluster_local_latency_cycles = c.cycles("local_latency_cycles").value_or(0);
  m.cluster_bytes_per_cycle_per_sm = c.number("bytes_per_cycle_per_sm").value_or(0.0);
  if (m.cluster_bytes_per_cycle_per_sm < 0) c.fail("bytes_per_cycle_per_sm", "must be 0 (no limit) or more");
}

}  // namespace memtopo::sim
