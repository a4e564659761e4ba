// The memory a description would make the simulator allocate, checked before the simulated
// GPU is built (docs/simulator.md, "Limits"): each cache instance is bounded by the reader, but
// a cache of a few GiB on each of thousands of SMs would still exhaust the machine.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

#include "sim/sim_cache.hpp"
#include "sim/sim_description.hpp"
#include "sim/sim_limits.hpp"

namespace memtopo::sim {

uint64_t simulator_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return kMaxSimulatorStateBytes;
  return std::min<uint64_t>(kMaxSimulatorStateBytes, uint64_t(pages) * uint64_t(page) / 2);
}

std::string bytes_text(uint64_t bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v == double(uint64_t(v)) ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

namespace {

struct CacheUse {
  const Reader* reader;
  const char* key;
  uint64_t instances;
  const char* counted_as;  // what the instances are, for the message
  uint64_t bytes;          // of all instances
};

std::vector<CacheUse> cache_uses(const Model& m, const SizeReaders& r) {
  // The instances sim::Gpu builds (sim_gpu.cpp): keep the two in step.
  const uint64_t sms = uint64_t(m.info.sm_count);
  std::vector<CacheUse> out;
  auto add = [&](bool built, const CacheGeometry& g, const Reader* reader, const char* key, uint64_t n, const char* what) {
    if (built && g.present) out.push_back({reader, key, n, what, n * Cache::state_bytes(g)});
  };
  add(true, m.l1d.geometry, r.l1d, "size_bytes", sms * m.l1d.partitions_per_sm, "sm_count x partitions_per_sm");
  add(m.texture_storage == Storage::Texture, m.texture.geometry, r.texture, "size_bytes",
      sms * m.texture.partitions_per_sm, "sm_count x partitions_per_sm");
  add(m.readonly_storage == Storage::Readonly, m.readonly.geometry, r.readonly, "size_bytes",
      sms * m.readonly.partitions_per_sm, "sm_count x partitions_per_sm");
  add(true, m.constant_l1.geometry, r.constant_l1, "size_bytes", sms, "sm_count");
  add(true, m.constant_l15.geometry, r.constant_l15, "size_bytes", m.l15_instances(),
      m.l15_of_sm.empty() ? "sm_count / sm_per_gpc" : "the groups of sim.constant_l15.group_of_sm");
  const bool l2_own_size = r.l2->exists() && r.l2->has("size_bytes");
  add(true, m.l2.geometry, l2_own_size ? r.l2 : r.device, l2_own_size ? "size_bytes" : "l2_bytes", m.l2_partitions,
      "partitions");
  add(m.tlb_present, m.tlb_l1.geometry, r.tlb, "l1_entries", m.tlb_l1_per_sm ? sms : 1, "one per SM");
  add(m.tlb_present, m.tlb_l2.geometry, r.tlb, "l2_entries", 1, "one");
  return out;
}

}  // namespace

void check_simulator_memory(const Model& m, const SizeReaders& r) {
  const std::vector<CacheUse> uses = cache_uses(m, r);
  uint64_t total = 0;
  for (const CacheUse& u : uses) total += u.bytes;
  const uint64_t limit = simulator_memory_limit();
  if (total <= limit) return;
  const CacheUse& worst = *std::max_element(uses.begin(), uses.end(), [](const CacheUse& a, const CacheUse& b) {
    return a.bytes < b.bytes;
  });
  const std::string limit_text = bytes_text(limit) + (limit < kMaxSimulatorStateBytes ? " (half of this machine's memory)" : "");
  worst.reader->fail(worst.key, std::to_string(worst.instances) + " instances of this cache (" + worst.counted_as +
                                    ") need " + bytes_text(worst.bytes) + " of simulator memory, the whole device " +
                                    bytes_text(total) + ": more than the simulator's limit of " + limit_text +
                                    "; make the caches or sm_count smaller (docs/simulator.md, \"Limits\")");
}

}  // namespace memtopo::sim
