// The latency ladder of `memtopo draw` (docs/host.md): load-to-use of each level, nearest
// first, in SM cycles and in ns of the SM clock the file records; and the loads in flight one SM
// keeps (MLP), which with the latency give the rate one SM can pull.
#include <algorithm>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

// The first of the roles the topology has a value of (a cache's own probe, else the spectrum's
// chase).
void rung(const Doc& d, GpuDrawing& g, const char* name, std::initializer_list<const char*> roles) {
  for (const char* role : roles)
    if (const std::string& k = d.key(role); auto v = d.num(k)) {
      g.ladder.push_back({name, *v, d.confidence(k) < kUncertain ? "~" : ""});
      return;
    }
}

void add_loads_in_flight(const Doc& d, GpuDrawing& g) {
  Parts p;
  // One SM's loads in flight to a level ("cache", "l2_cache") and the latency under them.
  const auto level = [&](const std::string& role_class, const std::string& subject, const char* to) {
    const std::string& loads = d.key(role_class + ".sm_loads_in_flight@" + subject);
    const std::string& latency = d.key(role_class + ".loaded_latency_cycles@" + subject);
    if (auto n = d.num(loads))
      p.add("per SM " + d.mark(loads) + printf_text("%.0f", *n) + " to " + to +
            (d.has(latency) ? " at " + cycles_text(*d.num(latency)) + " each" : ""));
  };
  level("cache", "l2_cache", "L2");
  level("memory", "main", "DRAM");
  if (auto n = d.num(d.key("cache.warp_loads_in_flight@l2_cache"))) p.add(printf_text("per warp %.0f", *n) + " to L2");
  if (auto n = d.num(d.key("cache.thread_loads_in_flight@l2_cache"))) p.add(printf_text("per thread %.0f", *n) + " to L2");
  if (!p.v.empty()) g.extras.push_back({"loads in flight", p.v, "info", {}});
}

}  // namespace

void add_ladder(const Doc& d, GpuDrawing& g) {
  if (auto khz = d.num(d.key("gpu.sm_clock_khz")); khz && *khz > 0) g.sm_clock_mhz = *khz / 1000;
  rung(d, g, "shared memory", {"memory.latency_cycles@shared"});
  rung(d, g, "L1", {"cache.latency_cycles@l1_cache", "cache.chase_latency_cycles@l1_cache"});
  rung(d, g, "DSMEM", {"memory.latency_cycles@distributed_shared"});
  rung(d, g, "L2 near", {"cache.latency_cycles@l2_cache", "cache.chase_latency_cycles@l2_cache"});
  rung(d, g, "L2 far", {"cache.far_latency_cycles@l2_cache", "cache.chase_far_latency_cycles@l2_cache"});
  rung(d, g, "DRAM", {"memory.latency_cycles@main", "memory.chase_latency_cycles@main"});
  rung(d, g, "DRAM far", {"memory.far_latency_cycles@main", "memory.chase_far_latency_cycles@main"});
  rung(d, g, "TLB miss", {"translation.chase_miss_latency_cycles"});
  std::stable_sort(g.ladder.begin(), g.ladder.end(), [](const DrawRung& a, const DrawRung& b) { return a.cycles < b.cycles; });
  add_loads_in_flight(d, g);
}

}  // namespace memtopo::host::draw
