// [tlb] and the [sim] table with its sub-tables: what probes do not measure (noise, GPCs,
// carveout, storages, L2 placement and traffic, TLB sharing). Defaults: docs/simulator.md.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
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
  // Measured sets: the ways of each set in the order they overflowed.
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
  // Clusters' GPCs: each SM's GPC (-1: unknown, a GPC of its own), else runs of sm_per_gpc.
  if (const auto of = sim.integers("gpc_of_sm")) {
    if (int64_t(of->size()) != m.info.sm_count)
      sim.fail("gpc_of_sm", "has " + std::to_string(of->size()) + " entries; it needs one per SM (device.sm_count " +
                                std::to_string(m.info.sm_count) + ")");
    std::map<int64_t, size_t> index;
    for (size_t s = 0; s < of->size(); ++s) {
      const int64_t g = (*of)[s];
      if (g < -1 || g >= m.info.sm_count) sim.fail("gpc_of_sm", "holds " + std::to_string(g) + "; GPCs are 0 .. sm_count - 1, or -1");
      const int64_t key = g < 0 ? -1 - int64_t(s) : g;
      if (!index.count(key)) {
        index[key] = m.gpcs.size();
        m.gpcs.emplace_back();
      }
      m.gpcs[index[key]].push_back(uint32_t(s));
    }
  } else {
    for (uint32_t s = 0; s < uint32_t(m.info.sm_count); ++s) {
      if (s % m.sm_per_gpc == 0) m.gpcs.emplace_back();
      m.gpcs.back().push_back(s);
    }
  }
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

void read_carveout(Reader& sim, Model& m) {
  const auto sizes = sim.integers("shared_sizes_bytes");
  const auto l1_left = sim.integers("carveout_l1d_size_bytes");
  if (l1_left && (!sizes || sizes->size() != l1_left->size()))
    sim.fail("carveout_l1d_size_bytes", "has " + std::to_string(l1_left->size()) + " entries, shared_sizes_bytes " +
                                            std::to_string(sizes ? sizes->size() : 0) + "; one per carveout level");
  const std::vector<int64_t> list = sizes.value_or(std::vector<int64_t>{});
  for (size_t i = 0; i < list.size(); ++i) {
    if (list[i] < 0) sim.fail("shared_sizes_bytes", "holds a negative size");
    if (i && list[i] <= list[i - 1]) sim.fail("shared_sizes_bytes", "must be ascending: one entry per size a carveout selects");
    m.shared_sizes_bytes.push_back(uint64_t(list[i]));
  }
  // The smallest carveout of each level, as a GPU's driver maps a percent to a level (the
  // H100's is neither the next level up nor the nearest from p% of the shared memory).
  if (const auto percents = sim.integers("carveout_percents")) {
    if (percents->size() != list.size())
      sim.fail("carveout_percents", "has " + std::to_string(percents->size()) + " entries, shared_sizes_bytes " +
                                        std::to_string(list.size()) + "; one per carveout level");
    for (size_t i = 0; i < percents->size(); ++i) {
      const int64_t p = (*percents)[i];
      if (p < 0 || p > 100) sim.fail("carveout_percents", "holds " + std::to_string(p) + "; a percent is 0..100");
      if (i && p <= (*percents)[i - 1]) sim.fail("carveout_percents", "must be ascending, as the levels are");
      m.carveout_percents.push_back(int32_t(p));
    }
  }
  // The L1 beside the smallest shared memory plus that memory is the array they split (one
  // level: the L1 does not change with the carveout). A measured L1 is one thread's, so one
  // partition's.
  if (l1_left && list.size() > 1 && !sim.has("l1_shared_total_bytes")) {
    const uint64_t total = uint64_t(std::max<int64_t>(0, (*l1_left)[0])) * m.l1d.partitions_per_sm + uint64_t(list[0]);
    m.l1_shared_total_bytes = std::max<uint64_t>(total, m.l1d.geometry.size_bytes);
  }
}

void read_storages(Reader& s_tex, Reader& s_ro, Model& m) {
  const Storage tex_def =
      m.texture.geometry.present ? Storage::Texture : (m.l1d.geometry.present ? Storage::L1d : Storage::None);
  m.texture_storage = read_storage(s_tex, "storage", {{"own", Storage::Texture}, {"l1d", Storage::L1d}}, tex_def);
  if (m.texture_storage == Storage::Texture && !m.texture.geometry.present)
    s_tex.fail("storage", "\"own\" needs a [texture] table with size_bytes");
  if (m.texture_storage == Storage::L1d && !m.l1d.geometry.present)
    s_tex.fail("storage", "\"l1d\" needs an [l1d] table with size_bytes");
  // A [readonly] table describes a cache of its own (a measured one may differ from the
  // texture path's: the H100's has 128 B lines, its texture path 256 B); without one,
  // read-only loads share whatever texture loads use.
  const Storage ro_def = m.readonly.geometry.present ? Storage::Readonly : m.texture_storage;
  m.readonly_storage = read_storage(
      s_ro, "storage", {{"texture", m.texture_storage}, {"own", Storage::Readonly}, {"l1d", Storage::L1d}}, ro_def);
  if (m.readonly_storage == Storage::Readonly && !m.readonly.geometry.present)
    s_ro.fail("storage", "\"own\" needs a [readonly] table with size_bytes");
  if (m.readonly_storage == Storage::L1d && !m.l1d.geometry.present)
    s_ro.fail("storage", "\"l1d\" needs an [l1d] table with size_bytes");
}

bool far_copies_near(Reader& s_l2) {
  // A read of a far line leaves a copy near: said outright, or as the bytes a far read copies.
  const auto copy_bytes = s_l2.integer("far_copy_bytes");
  if (copy_bytes && *copy_bytes < 0) s_l2.fail("far_copy_bytes", "must not be negative");
  return s_l2.boolean("far_copies_near").value_or(copy_bytes && *copy_bytes > 0);
}

// The slice map: a class per SM, a line class by the parity of masked granule-index bits,
// and the cycles an L2 hit costs more across classes. All four together, or none.
static void read_l2_slices(Reader& s_l2, Model& m) {
  const auto classes = s_l2.integers("slice_class_of_sm");
  const auto cycles = s_l2.cycles("slice_cycles");
  const auto mask = s_l2.integer("slice_line_mask");
  const auto granule = s_l2.integer("slice_granule_bytes");
  if (!classes) {
    if (cycles || mask || granule) s_l2.fail("slice_class_of_sm", "is needed by the other slice_ keys");
    return;
  }
  if (classes->size() != uint64_t(m.info.sm_count))
    s_l2.fail("slice_class_of_sm", "needs one entry per SM (" + std::to_string(m.info.sm_count) + ")");
  for (int64_t c : *classes) {
    if (c != 0 && c != 1) s_l2.fail("slice_class_of_sm", "holds classes 0 and 1 only");
    m.l2_slice_class_of_sm.push_back(uint32_t(c));
  }
  m.l2_slice_granule_bytes = power_of_two(s_l2, "slice_granule_bytes", granule, 256);
  if (mask && *mask <= 0) s_l2.fail("slice_line_mask", "must select at least one bit");
  m.l2_slice_line_mask = uint64_t(mask.value_or(1));
  m.l2_slice_cycles = cycles.value_or(0);
}

void read_l2_placement(Reader& s_l2, Model& m) {
  const uint32_t sm_count = uint32_t(m.info.sm_count);
  m.l2_interleave_bytes = power_of_two(s_l2, "interleave_bytes", s_l2.integer("interleave_bytes"), 4096);
  if (const auto order = s_l2.string("interleave")) {
    if (*order != "alternating" && *order != "hashed")
      s_l2.fail("interleave", "\"" + *order + "\" is not an interleave; use \"alternating\" or \"hashed\"");
    m.l2_interleave_hashed = *order == "hashed";
  }
  m.l2_far_copies_near = far_copies_near(s_l2);
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
  read_l2_slices(s_l2, m);
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

void read_sim_memory(Reader& mem, Model& m) {
  const auto limit = [&](const char* key) {
    auto v = mem.integer(key);
    const int64_t n = v ? positive(mem, key, v, 1) : 0;
    if (n > 1 << 20) mem.fail(key, std::to_string(n) + " requests in flight per SM is more than the simulator handles (2^20)");
    return uint32_t(n);
  };
  m.l2_loads_in_flight = limit("sm_l2_requests_in_flight");
  m.dram_loads_in_flight = limit("sm_dram_requests_in_flight");
  StreamPeaks& p = m.stream_peaks;
  const auto rate = [&](const char* key) {
    const double v = mem.number(key).value_or(0);
    if (v < 0 || !std::isfinite(v)) mem.fail(key, "must be a positive rate (or absent: no peak)");
    return v;
  };
  p.l1_read_bytes_per_cycle_per_sm = rate("l1_read_bytes_per_cycle_per_sm");
  p.l2_read_bytes_per_cycle = rate("l2_read_bytes_per_cycle");
  p.l2_write_bytes_per_cycle = rate("l2_write_bytes_per_cycle");
  p.dram_read_bytes_per_second = rate("dram_read_bytes_per_second");
  p.dram_write_bytes_per_second = rate("dram_write_bytes_per_second");
  p.dram_copy_bytes_per_second = rate("dram_copy_bytes_per_second");
}

}  // namespace memtopo::sim
