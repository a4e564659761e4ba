// The latency ladder of `memtopo draw` (docs/host.md): load-to-use of each level, nearest
// first, in SM cycles and in ns of the SM clock the file records; and the loads in flight one SM
// keeps (MLP), which with the latency give the rate one SM can pull.
#include <algorithm>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

// The first of the keys the topology has (a cache's own probe, else the spectrum's chase).
void rung(const Doc& d, GpuDrawing& g, const char* name, std::initializer_list<std::string> keys) {
  for (const std::string& k : keys)
    if (auto v = d.num(k)) {
      g.ladder.push_back({name, *v, d.confidence(k) < kUncertain ? "~" : ""});
      return;
    }
}

void add_loads_in_flight(const Doc& d, GpuDrawing& g) {
  Parts p;
  const auto level = [&](const char* loads, const char* latency, const char* to) {
    if (auto n = d.num(key(loads)))
      p.add("per SM " + d.mark(key(loads)) + printf_text("%.0f", *n) + " to " + to +
            (d.has(key(latency)) ? " at " + cycles_text(*d.num(key(latency))) + " each" : ""));
  };
  level("mlp_l2_loads", "mlp_l2_latency", "L2");
  level("mlp_dram_loads", "mlp_dram_latency", "DRAM");
  if (auto n = d.num(key("mlp_warp_l2_loads"))) p.add(printf_text("per warp %.0f", *n) + " to L2");
  if (auto n = d.num(key("mlp_thread_l2_loads"))) p.add(printf_text("per thread %.0f", *n) + " to L2");
  if (!p.v.empty()) g.extras.push_back({"loads in flight", p.v, "info", {}});
}

}  // namespace

void add_ladder(const Doc& d, GpuDrawing& g) {
  if (auto khz = d.num("device", "sm_clock_khz"); khz && *khz > 0) g.sm_clock_mhz = *khz / 1000;
  const std::string& l1 = element("l1_cache");
  const std::string& l2 = element("l2_cache");
  rung(d, g, "shared memory", {key("shared_latency")});
  rung(d, g, "L1", {l1 + ".latency_cycles", key("spectrum_l1_latency")});
  rung(d, g, "DSMEM", {key("dsmem_remote_latency")});
  rung(d, g, "L2 near", {l2 + ".latency_cycles", key("spectrum_l2_latency")});
  rung(d, g, "L2 far", {key("l2_far_latency"), key("spectrum_l2_far_latency")});
  rung(d, g, "DRAM", {key("dram_latency"), key("dram_load_latency")});
  rung(d, g, "DRAM far", {key("dram_far_latency"), key("spectrum_dram_far_latency")});
  rung(d, g, "TLB miss", {key("spectrum_tlb_miss_latency")});
  std::stable_sort(g.ladder.begin(), g.ladder.end(), [](const DrawRung& a, const DrawRung& b) { return a.cycles < b.cycles; });
  add_loads_in_flight(d, g);
}

}  // namespace memtopo::host::draw
