// Reads a simulated device from a topology TOML file: every key is type-checked, unknown
// keys in known tables are refused, contradictions (size != sets*ways*line) in hand-written
// tables are refused, measured tables replay (docs/simulator.md), and each error names
// FILE:LINE and the key path. This file reads [device] and puts the tables together; the
// cache tables are in sim_description_cache.cpp, [tlb] and [sim] in sim_description_sim.cpp.
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>

#include <toml++/toml.h>

#include "engine/param_bank.hpp"
#include "engine/utf8_copy.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "sim/sim_description.hpp"
#include "sim/sim_limits.hpp"
#include "sim/sim_model.hpp"
#include "sim/sim_replay.hpp"

namespace memtopo::sim {

namespace {

// [sim.constant_l15] group_of_sm: the L1.5 instance of every SM.
void read_l15_groups(Reader& c15, Model& m) {
  const auto groups = c15.integers("group_of_sm");
  if (!groups) return;
  if (int64_t(groups->size()) != m.info.sm_count)
    c15.fail("group_of_sm", "has " + std::to_string(groups->size()) + " entries; it needs one per SM (device.sm_count " +
                                std::to_string(m.info.sm_count) + ")");
  for (int64_t g : *groups)
    if (g < 0 || g >= m.info.sm_count)
      c15.fail("group_of_sm", "holds " + std::to_string(g) + "; groups are numbered 0 .. sm_count - 1");
  m.l15_of_sm.assign(groups->begin(), groups->end());
}

void read_device(Reader& r, mt_device_info& info) {
  info.struct_size = sizeof(info);
  std::snprintf(info.backend, sizeof info.backend, "sim");
  if (!r.exists()) r.fail(nullptr, "missing: a simulated device needs a [device] table with at least sm_count");
  auto str = [&](const char* key, char* dst, size_t n) {
    if (auto v = r.string(key)) engine::copy_utf8_truncated(dst, n, *v);
  };
  auto num = [&](const char* key, auto& dst) {
    using Field = std::remove_reference_t<decltype(dst)>;
    if (auto v = r.integer(key)) {
      if (*v < 0) r.fail(key, "must not be negative");
      if (*v > int64_t(std::numeric_limits<Field>::max()))  // would wrap (sm_count = 2^32 + 1 read as 1)
        r.fail(key, std::to_string(*v) + " is out of range (at most " + std::to_string(std::numeric_limits<Field>::max()) +
                        "); check the value");
      dst = static_cast<Field>(*v);
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
  if (info.sm_count > kMaxSmCount)
    r.fail("sm_count", "at most " + std::to_string(kMaxSmCount) + " SMs are simulated; check the value");
  if (info.warp_size <= 0 || info.warp_size > kMaxWarpSize)
    r.fail("warp_size", "must be within 1.." + std::to_string(kMaxWarpSize));
  // The L2's default size: checked here, where the key is, like every cache's size_bytes.
  if (uint64_t(info.l2_bytes) > kMaxCacheBytes)
    r.fail("l2_bytes", std::to_string(info.l2_bytes) + " B (" + bytes_text(uint64_t(info.l2_bytes)) +
                           ") is more than the simulator handles in one cache (" + bytes_text(kMaxCacheBytes) +
                           "); check the value (docs/simulator.md, \"Limits\")");
  r.finish();
}

Model read_root(const toml::table& root, const std::string& file, const std::string& origin);

}  // namespace

Model load_model(const std::string& text, const std::string& file, const std::string& origin,
                 const std::map<std::string, std::string>& replay) {
  if (const auto line = engine::toml_too_deep_at(text)) throw Error(engine::toml_too_deep_message(file, *line));
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    std::ostringstream m;
    m << file << ":" << e.source().begin.line << ":" << e.source().begin.column << ": " << e.description();
    throw Error(m.str());
  }
  const auto moved = apply_replay(root, replay);
  try {
    return read_root(root, file, origin);
  } catch (const Error& e) {
    throw Error(name_replayed(e.what(), moved));
  }
}

namespace {

Model read_root(const toml::table& root, const std::string& file, const std::string& origin) {
  Model m;
  m.origin = origin;
  auto table = [&](const char* name) {
    const toml::node* n = root.get(name);
    if (n && !n->is_table()) {
      std::ostringstream msg;
      msg << file << ":" << n->source().begin.line << ": " << name << ": must be a table, not " << type_name(*n);
      throw Error(msg.str());
    }
    Reader r(n ? n->as_table() : nullptr, name, file);
    r.measured_by(root["provenance"][name].as_table());
    return r;
  };
  auto provenance = [&](const char* element) { return read_provenance(root, element, file); };

  Reader device = table("device");
  read_device(device, m.info);

  Reader sim = table("sim");
  Reader l1d = table("l1d"), texture = table("texture"), readonly = table("readonly");
  Reader c1 = table("constant_l1"), c15 = table("constant_l15"), l2 = table("l2");
  Reader shared = table("shared"), dram = table("dram"), tlb = table("tlb");
  Reader attachment = table("attachment"), link = table("link");

  CacheRead r_l1d = read_cache(l1d, {128, 33}, std::nullopt, provenance("l1d"));
  CacheRead r_tex = read_cache(texture, {32, 40}, std::nullopt, provenance("texture"));
  CacheRead r_ro = read_cache(readonly, {32, 40}, std::nullopt, provenance("readonly"));
  CacheRead r_c1 = read_cache(c1, {64, 30}, std::nullopt, provenance("constant_l1"));
  const Provenance c15_prov = provenance("constant_l15");
  CacheRead r_c15 = read_cache(c15, {256, 80}, std::nullopt, c15_prov);

  // L2: partitions split the sets; absent table: device.l2_bytes with default structure.
  auto parts = l2.integer("partitions");
  m.l2_partitions = uint32_t(positive(l2, "partitions", parts, 1));
  if (m.l2_partitions > 64) l2.fail("partitions", "at most 64 L2 partitions");
  std::optional<uint64_t> l2_default;
  if (m.info.l2_bytes > 0) l2_default = uint64_t(m.info.l2_bytes);
  if (l2.exists() && l2.has("size_bytes")) l2_default.reset();
  Provenance l2_prov = provenance("l2");
  Reader s_l2 = sim.sub("l2");
  l2_prov.size_of_one_instance = far_copies_near(s_l2);
  CacheRead r_l2 = read_cache(l2, {128, 200, true}, l2_default, l2_prov, m.l2_partitions);
  auto far = l2.cycles("far_latency_cycles");
  m.l2_far_latency_cycles = far.value_or(r_l2.element.latency_cycles);
  if (far && *far < r_l2.element.latency_cycles)
    l2.fail("far_latency_cycles", "is below latency_cycles (the near partition's); the far partition cannot be faster");

  // shared, dram
  shared.boolean("present");
  m.shared_latency_cycles = shared.cycles("latency_cycles").value_or(30);
  read_shared_banks(shared, m);
  dram.boolean("present");
  if (auto v = dram.cycles("latency_cycles")) {
    m.has_dram_latency = true;
    m.dram_latency_cycles = *v;
  }
  const CacheElement& e2 = r_l2.element;
  if (!m.has_dram_latency) m.dram_latency_cycles = e2.has_miss_penalty ? e2.latency_cycles + e2.miss_penalty_cycles : 500;
  // A line homed in the far partition: what DRAM adds beyond the near home's, where measured;
  // else what a far L2 hit adds (sim_gpu.cpp).
  if (auto v = dram.cycles("far_latency_cycles")) {
    if (*v < m.dram_latency_cycles)
      dram.fail("far_latency_cycles", "is below latency_cycles (the near home's); a far home cannot be faster");
    m.dram_far_extra_cycles = *v - m.dram_latency_cycles;
  }
  read_tlb(tlb, m);

  // [sim] and its sub-tables
  Reader s_l1d = sim.sub("l1d"), s_tex = sim.sub("texture"), s_ro = sim.sub("readonly");
  Reader s_c1 = sim.sub("constant_l1"), s_c15 = sim.sub("constant_l15"), s_tlb = sim.sub("tlb");
  Reader s_cluster = sim.sub("cluster"), s_memory = sim.sub("memory"), s_link = sim.sub("link");
  read_cache_sim(s_l1d, l1d, r_l1d, true);
  read_cache_sim(s_tex, texture, r_tex, true);
  read_cache_sim(s_ro, readonly, r_ro, true);
  read_cache_sim(s_c1, c1, r_c1, false);
  read_cache_sim(s_c15, c15, r_c15, false);
  read_cache_sim(s_l2, l2, r_l2, false);
  m.l1d = r_l1d.element;
  m.texture = r_tex.element;
  m.readonly = r_ro.element;
  m.constant_l1 = r_c1.element;
  m.constant_l15 = r_c15.element;
  m.l2 = r_l2.element;
  read_sim_globals(sim, m, c15_prov.measured);
  read_l15_groups(s_c15, m);
  read_carveout(sim, m);
  read_storages(s_tex, s_ro, m);
  read_l2_placement(s_l2, m);
  read_sim_memory(s_memory, m);
  read_sim_tlb(s_tlb, m);
  read_sim_cluster(s_cluster, m);
  m.link = read_link(attachment, link, s_link);

  check_simulator_memory(m, {&device, &l1d, &texture, &readonly, &c1, &c15, &l2, &tlb});
  for (Reader* r : {&device, &l1d, &texture, &readonly, &c1, &c15, &l2, &shared, &dram, &tlb, &s_l1d, &s_tex, &s_ro,
                    &s_c1, &s_c15, &s_l2, &s_tlb, &s_cluster, &s_memory, &attachment, &link, &s_link, &sim})
    r->finish();
  return m;
}

}  // namespace
}  // namespace memtopo::sim
