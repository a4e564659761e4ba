// The SMs of `memtopo draw` (docs/host.md): how many in how many GPCs, and the SM map, a strip
// of one cell per SM for each way the topology groups the SMs (GPC, near L2 partition, constant
// L1.5 group, L2 slice class). Two groupings that split the SMs alike are drawn once and said to be the same:
// on an H100 the L1.5 groups are the GPCs, and drawing both looked like two findings.
#include <algorithm>
#include <map>

#include "tools/draw/draw_internal.hpp"

namespace memtopo::host::draw {
namespace {

// Whether `b` splits the SMs as `a` does where both know the SM: one index of `b` for each of
// `a`, and the other way round.
bool same_split(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::map<int64_t, int64_t> ab, ba;
  size_t both = 0;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (a[i] < 0 || b[i] < 0) continue;
    ++both;
    if (ab.emplace(a[i], b[i]).first->second != b[i]) return false;
    if (ba.emplace(b[i], a[i]).first->second != a[i]) return false;
  }
  return both > 0;
}

void add_sms(const Doc& d, GpuDrawing& g) {
  Parts p;
  const auto sms = d.num(d.key("gpu.sm_count"));
  if (auto n = d.num(d.key("chip.gpc_count"))) {
    g.gpc_sm_counts = d.ints(d.key("chip.gpc_sm_counts"));
    p.add((sms ? printf_text("%.0f in ", *sms) : std::string()) + d.bound(d.key("chip.gpc_count")) +
          count_text(*n, "GPC", "GPCs"));
    if (!g.gpc_sm_counts.empty()) p.add("SMs per GPC " + joined(g.gpc_sm_counts));
  } else if (sms) {
    p.add(printf_text("%.0f", *sms));
  }
  if (const auto unresolved = d.ints(d.key("chip.gpc_unresolved_sms")); !unresolved.empty())
    p.add(std::to_string(unresolved.size()) + " SMs of no GPC found (" + sm_list(unresolved) + ")");
  if (!p.v.empty()) g.sms = {"SMs", p.v, "info", {}};
}

}  // namespace

void add_sm_map(const Doc& d, GpuDrawing& g) {
  add_sms(d, g);
  const std::vector<std::pair<std::string, std::vector<int64_t>>> maps = {
      {"GPC", d.ints(d.key("chip.gpc_of_sm"))},
      {"L2 partition", d.ints(d.key("cache.near_partition_of_sm@l2_cache"))},
      {"L1.5 group", d.ints(d.key("cache.group_of_sm@constant_cache_l15"))},
      {"L2 slice class", d.ints(d.key("cache.slice_class_of_sm@l2_cache"))}};
  size_t longest = 0;
  for (const auto& [name, cells] : maps) {
    if (cells.empty()) continue;
    DrawStrip s{name, cells, ""};
    for (const DrawStrip& earlier : g.strips)
      if (earlier.same_as.empty() && s.same_as.empty() && same_split(earlier.cells, cells)) s.same_as = earlier.label;
    if (s.cells.size() > kStripCells) s.cells.resize(kStripCells);
    longest = std::max(longest, s.cells.size());
    g.strips.push_back(std::move(s));
  }
  g.strip_sms = int64_t(longest);
}

}  // namespace memtopo::host::draw
