// The occupancy roofline's analysis: shapes, per-SM rates, the adaptive sweep and its summary.
#include "roofline_analysis.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <utility>

#include <memtopo/analysis.hpp>

namespace occupancy_roofline {

const std::vector<std::string>& key_suffixes() {
  static const std::vector<std::string> suffixes{"peak_ops_per_cycle_per_sm", "ridge_warps_per_sm",
                                                 "ridge_ilp",                 "ilp1_ridge_warps_per_sm",
                                                 "completion_latency_cycles", "issue_latency_cycles"};
  return suffixes;
}

const std::vector<OpInfo>& ops() {
  static const std::vector<OpInfo> table = {
      {Op::Ffma, "ffma", "fma.rn.f32", "FFMA", 0},
      {Op::Dfma, "dfma", "fma.rn.f64", "DFMA", 0},
      {Op::Imad, "imad", "mad.lo.u32", "IMAD", 0},
      {Op::Sfu, "sfu", "rsqrt.approx.ftz.f32", "MUFU.RSQ", 0},
      {Op::Hfma2, "hfma2", "fma.rn.f16x2", "HFMA2", 0},
      {Op::Hfma2Bf16, "hfma2_bf16", "fma.rn.bf16x2", "HFMA2.BF16_V2", 8},
      {Op::Cvt, "cvt", "cvt.rzi.s32.f32", "F2I.TRUNC.NTZ", 0},
      {Op::SharedLoad, "shared_load", "ld.shared.u32", "LDS", 0},
      {Op::GlobalLoadL1, "global_load_l1", "ld.global.ca.u64", "LDG.E.64 (L1 hit)", 0},
      {Op::GlobalLoadL2, "global_load_l2", "ld.global.cg.u64", "LDG.E.64 (.cg, L2 hit)", 0},
      {Op::GlobalLoadDram, "global_load_dram", "ld.global.cg.u64", "LDG.E.64 (.cg, DRAM)", 0},
  };
  return table;
}

const OpInfo* find_op(const std::string& name) {
  for (const OpInfo& o : ops())
    if (name == o.name) return &o;
  return nullptr;
}

bool is_load(Op op) {
  switch (op) {
    case Op::SharedLoad:
    case Op::GlobalLoadL1:
    case Op::GlobalLoadL2:
    case Op::GlobalLoadDram: return true;
    default: return false;
  }
}

double cycles_per_op(const Point& p) { return p.ops_per_cycle > 0 ? p.warps * kWarpSize / p.ops_per_cycle : 0.0; }

BlockShape block_shape(int warps_per_sm, int max_block_warps) {
  BlockShape b;
  b.blocks_per_sm = std::max(1, (warps_per_sm + max_block_warps - 1) / max_block_warps);
  b.warps_per_block = std::max(1, warps_per_sm / b.blocks_per_sm);
  return b;
}

std::vector<int> warp_counts(int max_warps_per_sm, int max_block_warps) {
  std::vector<int> out;
  for (int w = 1; w <= max_warps_per_sm; w *= 2) out.push_back(w);
  const BlockShape top = block_shape(max_warps_per_sm, max_block_warps);
  const int largest = top.blocks_per_sm * top.warps_per_block;  // 48 of 2 x 24; 50 would give 2 x 25
  if (largest >= 1 && (out.empty() || largest > out.back())) out.push_back(largest);
  return out;
}

std::vector<SmRate> rates_per_sm(const std::vector<WarpRecord>& warps, double ops_per_warp) {
  struct Span {
    uint64_t first = UINT64_MAX, last = 0;
    int warps = 0;
  };
  std::map<uint32_t, Span> by_sm;
  for (const WarpRecord& w : warps) {
    Span& s = by_sm[w.sm];
    s.first = std::min(s.first, w.start);
    s.last = std::max(s.last, w.end);
    ++s.warps;
  }
  std::vector<SmRate> out;
  for (const auto& [sm, s] : by_sm)
    if (s.last > s.first) out.push_back({sm, s.warps, s.warps * ops_per_warp / double(s.last - s.first)});
  return out;
}

std::optional<PooledRate> pooled_rate(const std::vector<SmRate>& rates, int warps) {
  std::vector<double> v;
  for (const SmRate& r : rates)
    if (r.warps == warps) v.push_back(r.ops_per_cycle);
  if (v.empty()) return std::nullopt;
  return PooledRate{memtopo::analysis::median(v), int(v.size())};
}

namespace {

const Point* find_point(const std::vector<Point>& points, int warps, int ilp) {
  for (const Point& p : points)
    if (p.warps == warps && p.ilp == ilp) return &p;
  return nullptr;
}

double peak_of(const std::vector<Point>& points, double pool) {
  double most = 0;
  for (const Point& p : points) most = std::max(most, p.ops_per_cycle);
  double sum = 0;
  int n = 0;
  for (const Point& p : points)
    if (p.ops_per_cycle >= (1 - pool) * most) sum += p.ops_per_cycle, ++n;
  return n ? sum / n : 0.0;
}

// Fewest warps at which a point (of `ilp`, or any ILP when 0) reaches `floor`.
std::optional<int> fewest_warps_reaching(const std::vector<Point>& points, double floor, int ilp) {
  std::optional<int> w;
  for (const Point& p : points)
    if ((ilp == 0 || p.ilp == ilp) && p.ops_per_cycle >= floor && (!w || p.warps < *w)) w = p.warps;
  return w;
}

}  // namespace

namespace {

// One walk of the sweep over `measure` (which answers from the settled rates where it has them).
std::vector<Point> sweep_once(const Measure& measure, const SweepSettings& s) {
  std::vector<Point> points;
  auto get = [&](int warps, int ilp) -> std::optional<double> {
    if (const Point* p = find_point(points, warps, ilp)) return p->ops_per_cycle;
    const std::optional<double> v = measure(warps, ilp);
    if (v) points.push_back({warps, ilp, *v});
    return v;
  };
  for (int ilp : s.ilps)
    if (!get(1, ilp)) break;  // a larger ILP needs more registers: it does not fit either
  // The roofline climbs linearly in warps until the pipeline is full, then stays: a doubling
  // that gains little means the plateau, and more warps would only repeat it. Once at the lowest
  // ILP, once at the widest ILP that fits each warp count (wide chains need registers, so fewer
  // warps of them fit); the climb does not judge the step where the ILP narrows.
  const std::vector<int> counts = warp_counts(s.max_warps);
  for (const bool widest : {false, true}) {
    size_t k = widest ? s.ilps.size() - 1 : 0;
    std::optional<double> last;
    for (size_t c = 0; c < counts.size(); ++c) {
      std::optional<double> v = get(counts[c], s.ilps[k]);
      const size_t before = k;
      while (widest && !v && k > 0) v = get(counts[c], s.ilps[--k]);
      if (!v) break;
      if (last && k == before && *v < *last * (1 + s.plateau_gain)) break;
      last = v;
    }
  }
  const double floor = s.ridge_fraction * peak_of(points, s.peak_pool);
  if (const auto ridge = fewest_warps_reaching(points, floor, 0))
    for (int ilp : s.ilps) {
      const std::optional<double> v = get(*ridge, ilp);
      if (v && *v >= floor) break;
    }
  return points;
}

// The mean of two launches that agree, else the median of three (a launch that fails drops out).
Point settled(const Measure& measure, const Point& first, const SweepSettings& s) {
  Point p = first;
  const std::optional<double> second = measure(p.warps, p.ilp);
  if (!second) return p;
  p.launches = 2;
  if (std::abs(*second - first.ops_per_cycle) <= s.settle_agreement * first.ops_per_cycle) {
    p.ops_per_cycle = (first.ops_per_cycle + *second) / 2;
    return p;
  }
  const std::optional<double> third = measure(p.warps, p.ilp);
  if (!third) return p;
  p.launches = 3;
  p.ops_per_cycle = std::max(std::min(first.ops_per_cycle, *second),
                             std::min(std::max(first.ops_per_cycle, *second), *third));
  return p;
}

}  // namespace

std::vector<Point> sweep(const Measure& measure, const SweepSettings& s) {
  std::map<std::pair<int, int>, std::optional<Point>> known;  // every shape asked for
  const Measure cached = [&](int warps, int ilp) -> std::optional<double> {
    auto it = known.find({warps, ilp});
    if (it == known.end()) {
      const std::optional<double> v = measure(warps, ilp);
      std::optional<Point> point;
      if (v) point = Point{warps, ilp, *v};
      it = known.emplace(std::make_pair(warps, ilp), point).first;
    }
    if (!it->second) return std::nullopt;
    return it->second->ops_per_cycle;
  };
  // Each walk settles at least one more point or ends: the shapes are finite.
  std::set<std::pair<int, int>> tried;
  for (;;) {
    std::vector<Point> points = sweep_once(cached, s);
    const double floor = s.ridge_fraction * peak_of(points, s.peak_pool);
    bool settled_one = false;
    for (const Point& p : points) {
      if (floor <= 0) break;  // no rate: no mark to settle near
      if (tried.count({p.warps, p.ilp}) || std::abs(p.ops_per_cycle - floor) > s.settle_margin * floor) continue;
      tried.insert({p.warps, p.ilp});
      std::optional<Point>& entry = known.at({p.warps, p.ilp});
      entry = settled(measure, *entry, s);
      settled_one = true;
    }
    if (!settled_one) {
      for (Point& p : points) p.launches = known.at({p.warps, p.ilp})->launches;
      return points;
    }
  }
}

// The issue latency: one warp's fewest cycles per instruction over the ILPs measured (within
// 3 %, the widest ILP). It is at most that value while doubling the chains still halved the
// cycles (the chains only shared the completion latency out), while the chains together took
// no more than one completion, and when a wider ILP was slower
// (the warp's loads in flight, not the issue, bound it there: DRAM loads on an H100).
void set_issue_latency(const std::vector<Point>& points, const SweepSettings& s, const Point& first, Summary& out) {
  std::vector<const Point*> one_warp;
  for (int ilp : s.ilps)
    if (const Point* p = find_point(points, 1, ilp); p && p->ops_per_cycle > 0) one_warp.push_back(p);
  if (one_warp.empty()) one_warp.push_back(&first);
  double fewest = cycles_per_op(*one_warp.front());
  for (const Point* p : one_warp) fewest = std::min(fewest, cycles_per_op(*p));
  size_t chosen = 0;
  for (size_t i = 0; i < one_warp.size(); ++i)
    if (cycles_per_op(*one_warp[i]) <= fewest * 1.03) chosen = i;
  const Point& at = *one_warp[chosen];
  out.issue_ilp = at.ilp;
  out.issue_latency_cycles = cycles_per_op(at);
  const bool wider_was_slower = chosen + 1 < one_warp.size();
  out.issue_wider_ilp_slower = wider_was_slower;
  if (chosen == 0) {
    out.issue_latency_at_most = true;  // ILP 1 alone: the completion latency bounds it
  } else {
    const Point& before = *one_warp[chosen - 1];
    const double halving = double(before.ilp) / double(at.ilp);
    out.issue_latency_at_most = wider_was_slower || out.issue_latency_cycles / cycles_per_op(before) < halving * 1.1;
  }
  // Still latency-bound where the chains together take no more than one completion (within
  // 10 %): the warp waited for them, not for its issue slot.
  if (out.issue_latency_cycles * double(at.ilp) <= 1.1 * cycles_per_op(first)) out.issue_latency_at_most = true;
}

// The smallest ILP reaching the mark at the ridge warps, and where the rates cross it: the
// measured ILP just under the mark and the first at it, interpolated in log2 of the ILP.
void set_ridge_ilp(const std::vector<Point>& points, const SweepSettings& s, double floor, Summary& out) {
  const Point* below = nullptr;
  for (int ilp : s.ilps) {
    const Point* p = find_point(points, out.ridge_warps, ilp);
    if (!p || p->ops_per_cycle <= 0) continue;
    if (p->ops_per_cycle < floor) {
      below = p;
      continue;
    }
    out.ridge_ilp = ilp;
    out.ridge_ilp_crossing = ilp;
    out.ridge_at_fraction = p->ops_per_cycle / out.peak_ops_per_cycle;
    if (below && p->ops_per_cycle > below->ops_per_cycle) {
      const double t = (floor - below->ops_per_cycle) / (p->ops_per_cycle - below->ops_per_cycle);
      out.ridge_ilp_crossing = below->ilp * std::pow(double(ilp) / below->ilp, t);
      out.ridge_ilp_below = below->ilp;
      out.ridge_below_fraction = below->ops_per_cycle / out.peak_ops_per_cycle;
    }
    return;
  }
}

std::optional<Summary> summarize(const std::vector<Point>& points, const SweepSettings& s) {
  const Point* first = find_point(points, 1, 1);
  if (!first || first->ops_per_cycle <= 0) return std::nullopt;
  Summary out;
  out.peak_ops_per_cycle = peak_of(points, s.peak_pool);
  const double floor = s.ridge_fraction * out.peak_ops_per_cycle;
  out.ridge_warps = fewest_warps_reaching(points, floor, 0).value_or(0);
  set_ridge_ilp(points, s, floor, out);
  out.ilp1_ridge_warps = fewest_warps_reaching(points, floor, 1);
  out.completion_latency_cycles = cycles_per_op(*first);
  set_issue_latency(points, s, *first, out);
  return out;
}

std::vector<double> divergence_slowdowns(const std::vector<DivergencePoint>& points) {
  const auto one = std::find_if(points.begin(), points.end(), [](const DivergencePoint& p) { return p.paths == 1; });
  if (one == points.end() || one->ops_per_cycle <= 0) return {};
  std::vector<double> out;
  for (const DivergencePoint& p : points) out.push_back(p.ops_per_cycle > 0 ? one->ops_per_cycle / p.ops_per_cycle : 0.0);
  return out;
}

}  // namespace occupancy_roofline
