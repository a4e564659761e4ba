// The levels all SMs share, as `memtopo draw` shows them (docs/host.md), nearest first: the
// constant L1.5, the L2 with its partitions inside, the TLB, DRAM. The L2 says per partition
// and in total what it holds: an H100's measured 25 MiB is what one SM fills (its near
// partition), and "25 MiB, API 50 MiB" side by side read as a contradiction.
#include <cmath>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

void add_constant_l15(const Doc& d, GpuDrawing& g) {
  const std::string& c15 = element("constant_cache_l15");
  if (!d.has(c15, "size_bytes") && !d.has(c15, "latency_cycles")) return;
  auto p = cache_parts(d, c15);
  if (auto n = d.num(key("constant_l15_groups"))) {
    const auto counts = d.ints(key("constant_l15_group_sms"));
    p.push_back(count_text(*n, "group", "groups") + (counts.empty() ? "" : " of " + joined(counts) + " SMs"));
  }
  for (const DrawStrip& s : g.strips)
    if (s.label == "L1.5 group" && !s.same_as.empty()) p.push_back("the groups are the " + s.same_as + "s (SM map)");
  g.shared.push_back({"constant L1.5", p, "cache", {}});
}

// Per partition and in total. The measured size is one of the candidates the occupancy probe
// weighs: the API's size, or its share per partition (docs/cache-probes.md).
std::vector<std::string> l2_size_parts(const Doc& d, const std::string& l2, double& per_partition) {
  std::vector<std::string> p;
  const auto size = d.num(l2, "size_bytes"), api = d.num(key("l2_api_size")), n = d.num(key("l2_partitions"));
  const std::string mark = d.mark(l2, "size_bytes");
  const auto near = [](double a, double b) { return std::fabs(a - b) <= 0.1 * b; };
  if (size && n && *n > 1 && api && near(*size * *n, *api)) {
    per_partition = *size;
    // The API's total, not the measured size times the partitions: the two differ by the
    // lines a partition keeps for itself (an H200: 2 x 29.4 MiB against 60 MiB).
    p.push_back(printf_text("%.0f", *n) + " partitions, API " + bytes_text(*api) + " in all");
    p.push_back("one SM fills its near partition: " + mark + bytes_text(*size) + " measured");
    return p;
  } else if (size && n && *n > 1 && near(*size, api.value_or(*size))) {
    per_partition = *size / *n;
    p.push_back(mark + bytes_text(*size) + " in all = " + printf_text("%.0f", *n) + " partitions x " +
                bytes_text(per_partition));
  } else if (size) {
    p.push_back(mark + bytes_text(*size) + " measured");
  }
  if (api) p.push_back("API " + bytes_text(*api));
  return p;
}

void add_l2(const Doc& d, GpuDrawing& g) {
  const std::string& l2 = element("l2_cache");
  if (!d.has(l2, "size_bytes") && !d.has(l2, "latency_cycles") && !d.has(key("l2_read_rate")) &&
      !d.has(key("l2_slice_gap")))
    return;
  double per_partition = 0;
  auto p = l2_size_parts(d, l2, per_partition);
  for (auto& s : cache_parts(d, l2, false)) p.push_back(s.rfind("hit ", 0) == 0 ? s + " near" : s);
  if (auto v = d.num(key("l2_far_latency"))) p.push_back("far hit " + d.mark(key("l2_far_latency")) + cycles_text(*v));
  if (d.has(key("l2_interleave")))
    p.push_back("interleave " + d.text(key("l2_interleave")) +
                (d.has(key("l2_granule")) ? " by " + bytes_text(*d.num(key("l2_granule"))) : ""));
  if (auto gap = d.num(key("l2_slice_gap"))) {
    const auto sms = d.ints(key("l2_slice_class_sms"));
    const auto granule = d.num(key("l2_slice_granule"));
    p.push_back("slice classes" + (sms.empty() ? "" : " of " + joined(sms) + " SMs") + ", +" + cycles_text(*gap) +
                " across" + (granule ? " (lines by " + d.mark(key("l2_slice_granule")) + bytes_text(*granule) + ")" : ""));
  }
  if (auto r = d.num(key("l2_read_rate"))) p.push_back("read " + rate_text(*r));
  if (auto r = d.num(key("l2_write_rate"))) p.push_back("write " + rate_text(*r));
  DrawNode node{"L2", p, "cache", {}};
  const auto near_sms = d.ints(key("l2_partition_sms"));
  for (size_t k = 0; k < near_sms.size() && k < kListedCounts; ++k) {
    std::vector<std::string> q;
    if (per_partition > 0) q.push_back(bytes_text(per_partition));
    q.push_back(std::to_string(near_sms[k]) + " SMs near");
    node.children.push_back({"partition " + std::to_string(k), q, "instance", {}});
  }
  if (near_sms.size() > kListedCounts)
    node.children.push_back({"...", {std::to_string(near_sms.size()) + " partitions in all"}, "instance", {}});
  g.shared.push_back(std::move(node));
}

void add_tlb(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto v = d.num(key("tlb_page"))) p.add("page " + bytes_text(*v));
  if (auto v = d.num(key("tlb_entries"))) p.add(printf_text("%.0f entries", *v));
  if (auto v = d.num(key("tlb_reach"))) p.add("reach " + d.mark(key("tlb_reach")) + bytes_text(*v));
  if (auto v = d.num(key("tlb_miss"))) p.add("miss +" + d.mark(key("tlb_miss")) + cycles_text(*v));
  if (auto v = d.num(key("tlb_next_reach"))) p.add("next level reach " + d.mark(key("tlb_next_reach")) + bytes_text(*v));
  if (auto v = d.num(key("tlb_mapped_page")))
    p.add("mapped " + bytes_text(*v) + " pages" +
          (d.has(key("tlb_mapped_reach"))
               ? " reach " + d.mark(key("tlb_mapped_reach")) + bytes_text(*d.num(key("tlb_mapped_reach")))
               : ""));
  if (auto v = d.num(key("spectrum_tlb_miss_latency"))) p.add("a load missing it " + cycles_text(*v));
  if (!p.v.empty()) g.shared.push_back({"TLB", p.v, "cache", {}});
}

void add_dram(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto v = d.num("device", "global_memory_bytes")) p.add(bytes_text(*v) + " (API)");
  const auto fraction = [&](const char* role) {
    auto f = d.num(key(role));
    return f ? printf_text(" = %.0f %%", *f * 100) : std::string();
  };
  const auto peak = d.num(key("dram_theoretical_rate"));
  if (auto r = d.num(key("dram_read_rate")))
    p.add("read " + rate_text(*r) + fraction("dram_read_fraction") + (peak && d.has(key("dram_read_fraction")) ? " of " + rate_text(*peak) : ""));
  if (auto r = d.num(key("dram_write_rate"))) p.add("write " + rate_text(*r) + fraction("dram_write_fraction"));
  // The DRAM latency (docs/format.md); a topology without it shows what the spectrum's chase met.
  if (auto v = d.num(key("dram_latency"))) {
    p.add("latency " + d.mark(key("dram_latency")) + cycles_text(*v));
    if (auto far = d.num(key("dram_far_latency"))) p.add("far " + cycles_text(*far));
  } else if (auto s = d.num(key("dram_load_latency"))) {
    p.add("latency " + cycles_text(*s));
  }
  if (!p.v.empty()) g.shared.push_back({"DRAM", p.v, "memory", {}});
}

}  // namespace

void add_shared(const Doc& d, GpuDrawing& g) {
  add_constant_l15(d, g);
  add_l2(d, g);
  add_tlb(d, g);
  add_dram(d, g);
}

}  // namespace memtopo::host::draw
