// The levels all SMs share, as `memtopo draw` shows them (docs/host.md), nearest first: the
// constant L1.5, the L2 with its partitions inside, the TLB, DRAM. The L2 says per partition
// and in total what it holds: an H100's measured 25 MiB is what one SM fills (its near
// partition), and "25 MiB, API 50 MiB" side by side read as a contradiction.
#include <cmath>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

void add_constant_l15(const Doc& d, GpuDrawing& g) {
  const auto c15 = [&](const char* quantity) { return d.cache("constant_cache_l15", quantity); };
  if (!d.has(c15("size_bytes")) && !d.has(c15("latency_cycles"))) return;
  auto p = cache_parts(d, "constant_cache_l15");
  if (auto n = d.num(c15("group_count"))) {
    const auto counts = d.ints(c15("group_sm_counts"));
    p.push_back(count_text(*n, "group", "groups") + (counts.empty() ? "" : " of " + joined(counts) + " SMs"));
  }
  for (const DrawStrip& s : g.strips)
    if (s.label == "L1.5 group" && !s.same_as.empty()) p.push_back("the groups are the " + s.same_as + "s (SM map)");
  g.shared.push_back({"constant L1.5", p, "cache", {}});
}

// Per partition and in total. The measured size is one of the candidates the occupancy probe
// weighs: the API's size, or its share per partition (docs/cache-probes.md).
std::vector<std::string> l2_size_parts(const Doc& d, double& per_partition) {
  std::vector<std::string> p;
  const std::string& size_key = d.cache("l2_cache", "size_bytes");
  const auto size = d.num(size_key), api = d.num(d.cache("l2_cache", "api_size_bytes"));
  const auto n = d.num(d.cache("l2_cache", "partitions"));
  const std::string mark = d.mark(size_key);
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
  const auto l2 = [&](const char* quantity) { return d.cache("l2_cache", quantity); };
  if (!d.has(l2("size_bytes")) && !d.has(l2("latency_cycles")) && !d.has(l2("read_bytes_per_second")) &&
      !d.has(l2("slice_class_gap_cycles")))
    return;
  double per_partition = 0;
  auto p = l2_size_parts(d, per_partition);
  for (auto& s : cache_parts(d, "l2_cache", false)) p.push_back(s.rfind("hit ", 0) == 0 ? s + " near" : s);
  if (auto v = d.num(l2("far_latency_cycles"))) p.push_back("far hit " + d.mark(l2("far_latency_cycles")) + cycles_text(*v));
  if (d.has(l2("partition_interleave")))
    p.push_back("interleave " + d.text(l2("partition_interleave")) +
                (d.has(l2("partition_granule_bytes")) ? " by " + bytes_text(*d.num(l2("partition_granule_bytes"))) : ""));
  if (auto gap = d.num(l2("slice_class_gap_cycles"))) {
    const auto sms = d.ints(l2("slice_class_sm_counts"));
    const auto granule = d.num(l2("slice_line_granule_bytes"));
    p.push_back("slice classes" + (sms.empty() ? "" : " of " + joined(sms) + " SMs") + ", +" + cycles_text(*gap) +
                " across" + (granule ? " (lines by " + d.mark(l2("slice_line_granule_bytes")) + bytes_text(*granule) + ")" : ""));
  }
  if (auto r = d.num(l2("read_bytes_per_second"))) p.push_back("read " + rate_text(*r));
  if (auto r = d.num(l2("write_bytes_per_second"))) p.push_back("write " + rate_text(*r));
  DrawNode node{"L2", p, "cache", {}};
  const auto near_sms = d.ints(l2("partition_sm_counts"));
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
  const auto tlb = [&](const std::string& quantity) { return d.key("translation." + quantity); };
  Parts p;
  if (auto v = d.num(tlb("page_bytes@l1"))) p.add("page " + bytes_text(*v));
  if (auto v = d.num(tlb("entries@l1"))) p.add(printf_text("%.0f entries", *v));
  if (auto v = d.num(tlb("reach_bytes@l1"))) p.add("reach " + d.mark(tlb("reach_bytes@l1")) + bytes_text(*v));
  if (auto v = d.num(tlb("miss_penalty_cycles@l1"))) p.add("miss +" + d.mark(tlb("miss_penalty_cycles@l1")) + cycles_text(*v));
  if (auto v = d.num(tlb("reach_bytes@l2"))) p.add("next level reach " + d.mark(tlb("reach_bytes@l2")) + bytes_text(*v));
  if (auto v = d.num(tlb("page_bytes@mapped")))
    p.add("mapped " + bytes_text(*v) + " pages" +
          (d.has(tlb("reach_bytes@mapped"))
               ? " reach " + d.mark(tlb("reach_bytes@mapped")) + bytes_text(*d.num(tlb("reach_bytes@mapped")))
               : ""));
  if (auto v = d.num(tlb("chase_miss_latency_cycles"))) p.add("a load missing it " + cycles_text(*v));
  if (!p.v.empty()) g.shared.push_back({"TLB", p.v, "cache", {}});
}

void add_dram(const Doc& d, GpuDrawing& g) {
  Parts p;
  if (auto v = d.num(d.key("gpu.global_memory_bytes"))) p.add(bytes_text(*v) + " (API)");
  const auto dram = [&](const std::string& quantity) { return d.key("memory." + quantity + "@main"); };
  const auto fraction = [&](const char* quantity) {
    auto f = d.num(dram(quantity));
    return f ? printf_text(" = %.0f %%", *f * 100) : std::string();
  };
  const auto peak = d.num(dram("theoretical_bytes_per_second"));
  if (auto r = d.num(dram("read_bytes_per_second")))
    p.add("read " + rate_text(*r) + fraction("read_fraction_of_theoretical") + (peak && d.has(dram("read_fraction_of_theoretical")) ? " of " + rate_text(*peak) : ""));
  if (auto r = d.num(dram("write_bytes_per_second"))) p.add("write " + rate_text(*r) + fraction("write_fraction_of_theoretical"));
  // The DRAM latency (docs/format.md); a topology without it shows what the spectrum's chase met.
  if (auto v = d.num(dram("latency_cycles"))) {
    p.add("latency " + d.mark(dram("latency_cycles")) + cycles_text(*v));
    if (auto far = d.num(dram("far_latency_cycles"))) p.add("far " + cycles_text(*far));
  } else if (auto s = d.num(dram("chase_latency_cycles"))) {
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
