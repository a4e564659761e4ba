// The occupancy roofline's analysis on modelled pipelines (pipeline_model.hpp): the adaptive
// sweep and its summary give back the model's peak, ridge point and latencies, with and
// without noise, measuring far fewer points than the full grid; the shapes, per-SM rates and
// divergence slowdowns.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "pipeline_model.hpp"

using namespace occupancy_roofline;
using roofline_model::ModelMeasure;
using roofline_model::Pipeline;

namespace {

struct Case {
  std::string name;
  Pipeline p;
  int max_warps = 64;
  double issue = 0;       // expected issue latency: one warp, ILP 8
  bool issue_at_most = false;
};

// H100-like figures for the shapes of the curves; the tests do not assume any GPU's values.
std::vector<Case> cases() {
  std::vector<Case> c;
  c.push_back({"fma: latency 4, one per cycle per partition", {4, 1, 1}, 64, 1, false});
  c.push_back({"dfma: latency 8, half rate", {8, 1, 2}, 64, 2, false});
  c.push_back({"sfu: latency 18, one per 8 cycles", {18, 1, 8}, 64, 8, false});
  Pipeline shared{30, 1, 1};
  shared.sm_cap = 32;  // one wavefront of 128 B per cycle per SM
  c.push_back({"shared load: latency 30, SM-wide cap", shared, 64, 30.0 / 8, true});
  Pipeline far{200, 1, 2};
  far.sm_cap = 16;
  far.max_warps_at_ilp8 = 16;  // eight chains need registers: fewer warps fit
  c.push_back({"far load: latency 200, 48 warps, ILP 8 fits 16", far, 48, 25, true});
  Pipeline issue_bound{12, 2, 1};  // the warp, not the pipe, limits one warp
  c.push_back({"issue-bound warp: latency 12, a warp issues every 2 cycles", issue_bound, 64, 2, false});
  return c;
}

struct Outcome {
  Summary summary;
  std::vector<Point> points;
  int calls = 0;
};

Outcome run(const Case& c, double noise, unsigned seed) {
  SweepSettings s;
  s.max_warps = c.max_warps;
  ModelMeasure m{c.p, noise, seed};
  Outcome o;
  o.points = sweep(std::ref(m), s);
  o.calls = m.calls;
  const auto summary = summarize(o.points, s);
  REQUIRE(summary.has_value());
  o.summary = *summary;
  return o;
}

void check_against_model(const Case& c, const Outcome& o, double tolerance) {
  SweepSettings s;
  s.max_warps = c.max_warps;
  const auto ridge = roofline_model::true_ridge(c.p, s);
  const auto ilp1 = roofline_model::true_ridge(c.p, s, 1);
  CHECK(o.summary.peak_ops_per_cycle == Approx(c.p.peak(s)).epsilon(tolerance));
  CHECK(o.summary.ridge_warps == ridge.warps);
  CHECK(o.summary.ridge_ilp == ridge.ilp);
  CHECK(o.summary.ridge_ilp_crossing <= ridge.ilp);
  CHECK(o.summary.ridge_ilp_crossing >= std::max(1, ridge.ilp / 2));
  if (ilp1.warps) {
    REQUIRE(o.summary.ilp1_ridge_warps.has_value());
    CHECK(*o.summary.ilp1_ridge_warps == ilp1.warps);
  } else {
    CHECK_FALSE(o.summary.ilp1_ridge_warps.has_value());
  }
  CHECK(o.summary.completion_latency_cycles == Approx(c.p.completion).epsilon(tolerance));
  CHECK(o.summary.issue_latency_cycles == Approx(c.issue).epsilon(tolerance));
  CHECK(o.summary.issue_ilp == 8);
  CHECK(o.summary.issue_latency_at_most == c.issue_at_most);
}

}  // namespace

TEST_CASE("roofline: block shapes and warp counts", "[roofline]") {
  CHECK(warp_counts(64) == std::vector<int>{1, 2, 4, 8, 16, 32, 64});
  CHECK(warp_counts(48) == std::vector<int>{1, 2, 4, 8, 16, 32, 48});
  CHECK(warp_counts(32) == std::vector<int>{1, 2, 4, 8, 16, 32});
  CHECK(warp_counts(50).back() == 50);  // 2 blocks of 25
  CHECK(warp_counts(65).back() == 64);  // 65 has no even split in blocks of up to 32
  CHECK(block_shape(16).blocks_per_sm == 1);
  CHECK(block_shape(16).warps_per_block == 16);
  CHECK(block_shape(32).blocks_per_sm == 1);
  CHECK(block_shape(48).blocks_per_sm == 2);
  CHECK(block_shape(48).warps_per_block == 24);
  CHECK(block_shape(64).warps_per_block == 32);
  CHECK(block_shape(64, 16).blocks_per_sm == 4);
}

TEST_CASE("roofline: per-SM rates take each SM's span and pool the SMs that held the asked warps",
          "[roofline]") {
  // SM 3: two warps over 1000 cycles (one starts late). SM 5: the same. SM 7 got two blocks (four
  // warps) and SM 9 a single warp: neither counts for two warps.
  const std::vector<WarpRecord> warps = {{3, 100, 1000}, {3, 120, 1100}, {5, 0, 900}, {5, 10, 1000},
                                         {7, 0, 2000},   {7, 0, 2000},   {7, 0, 2000}, {7, 0, 2000},
                                         {9, 0, 500}};
  const auto rates = rates_per_sm(warps, 1000);
  REQUIRE(rates.size() == 4);
  CHECK(rates[0].sm == 3);
  CHECK(rates[0].warps == 2);
  CHECK(rates[0].ops_per_cycle == Approx(2.0));
  CHECK(rates[2].warps == 4);
  const auto two = pooled_rate(rates, 2);
  REQUIRE(two.has_value());
  CHECK(two->sms == 2);
  CHECK(two->ops_per_cycle == Approx(2.0));
  CHECK_FALSE(pooled_rate(rates, 8).has_value());
  CHECK(rates_per_sm({{1, 5, 5}}, 10).empty());  // no span: no rate
}

TEST_CASE("roofline: cycles per op are a warp's cycles between its instructions", "[roofline]") {
  CHECK(cycles_per_op({1, 1, 8.0}) == Approx(4.0));    // 32 ops per 4 cycles: one every 4
  CHECK(cycles_per_op({8, 4, 128.0}) == Approx(2.0));  // 8 warps share 4 warp instructions per cycle
  CHECK(cycles_per_op({1, 1, 0.0}) == 0.0);
}

TEST_CASE("roofline: without noise the sweep gives back the model's peak, ridge and latencies", "[roofline]") {
  for (const Case& c : cases()) {
    INFO(c.name);
    const Outcome o = run(c, 0, 1);
    check_against_model(c, o, 1e-9);
    // Each point once, and far fewer than every warp count at every ILP.
    CHECK(o.calls == int(o.points.size()));
    CHECK(o.points.size() < warp_counts(c.max_warps).size() * 4 * 3 / 4);
    std::set<std::pair<int, int>> distinct;
    for (const Point& p : o.points) distinct.insert({p.warps, p.ilp});
    CHECK(distinct.size() == o.points.size());
  }
}

TEST_CASE("roofline: with 2 % noise the peak and latencies come back within 5 %, the ridge exactly",
          "[roofline]") {
  for (const Case& c : cases())
    for (unsigned seed = 1; seed <= 25; ++seed) {
      INFO(c.name << ", seed " << seed);
      check_against_model(c, run(c, 0.02, seed), 0.05);
    }
}

TEST_CASE("roofline: the FMA-like pipeline's ridge is four warps of four chains, sixteen of one", "[roofline]") {
  // Written out for one case, so that the brute-force ridge above is itself checked.
  const Outcome o = run(cases()[0], 0, 1);
  CHECK(o.summary.peak_ops_per_cycle == Approx(128));
  CHECK(o.summary.ridge_warps == 4);
  CHECK(o.summary.ridge_ilp == 4);
  CHECK(o.summary.ilp1_ridge_warps == 16);
  CHECK(o.summary.completion_latency_cycles == Approx(4));
  CHECK(o.summary.issue_latency_cycles == Approx(1));
}

TEST_CASE("roofline: a rate at the mark moves the ridge ILP a little where the smallest ILP jumps", "[roofline]") {
  // 32 warps: ILP 1, 2 under the mark, ILP 4 swept across it, ILP 8 above; the peak 99.5.
  SweepSettings s;
  const auto points_with = [](double ilp4) {
    return std::vector<Point>{{1, 1, 5.0},  {16, 1, 30.0}, {16, 8, 80.0}, {32, 1, 50.0},  {32, 2, 80.0},
                              {32, 4, ilp4}, {32, 8, 99.0}, {64, 1, 90.0}, {64, 8, 100.0}};
  };
  std::optional<double> last;
  std::set<int> smallest;
  for (double ilp4 = 94.0; ilp4 <= 95.0; ilp4 += 0.05) {
    INFO("ILP 4 at " << ilp4);
    const auto summary = summarize(points_with(ilp4), s);
    REQUIRE(summary.has_value());
    REQUIRE(summary->ridge_warps == 32);
    smallest.insert(summary->ridge_ilp);
    CHECK(summary->ridge_ilp_crossing > 3.8);
    CHECK(summary->ridge_ilp_crossing < 4.4);
    if (last) CHECK(std::abs(summary->ridge_ilp_crossing - *last) < 0.01 * *last);
    last = summary->ridge_ilp_crossing;
  }
  CHECK(smallest == std::set<int>{4, 8});  // what the smallest ILP at the mark does
  const auto below = summarize(points_with(94.3), s);
  CHECK(below->ridge_ilp_below == 4);
  CHECK(below->ridge_ilp_crossing == Approx(4 * std::pow(2.0, (0.95 * 99.5 - 94.3) / (99.0 - 94.3))));
  CHECK(below->ridge_below_fraction == Approx(94.3 / 99.5));
}

namespace {

// The FMA-like pipeline (ridge: four warps of four chains, at 128 a cycle), where four warps of
// four chains answer `launches` in turn: the sweep's points, and how often that shape was asked.
struct Scripted {
  std::vector<double> launches;
  std::vector<Point> points;
  int asked = 0;
};
Scripted run_scripted(std::vector<double> launches) {
  Scripted out{std::move(launches), {}, 0};
  ModelMeasure model{Pipeline{4, 1, 1}, 0, 1};
  SweepSettings s;
  const Measure measure = [&](int warps, int ilp) -> std::optional<double> {
    if (warps != 4 || ilp != 4) return model(warps, ilp);
    REQUIRE(size_t(out.asked) < out.launches.size());
    return out.launches[size_t(out.asked++)];
  };
  out.points = sweep(measure, s);
  return out;
}

}  // namespace

TEST_CASE("roofline: a point near the mark is measured again: three launches that disagree, their median",
          "[roofline]") {
  // One launch at 120 of 128 misses the mark (121.6) and would make the ridge ILP 8.
  const Scripted r = run_scripted({120.0, 125.0, 124.0});
  CHECK(r.asked == 3);
  const Point* p = nullptr;
  for (const Point& q : r.points)
    if (q.warps == 4 && q.ilp == 4) p = &q;
  REQUIRE(p != nullptr);
  CHECK(p->launches == 3);
  CHECK(p->ops_per_cycle == Approx(124.0));
  const auto summary = summarize(r.points, SweepSettings{});
  REQUIRE(summary.has_value());
  CHECK(summary->ridge_warps == 4);
  CHECK(summary->ridge_ilp == 4);
  for (const Point& q : r.points)
    if (!(q.warps == 4 && q.ilp == 4)) CHECK(q.launches == 1);  // none of the others is near the mark
}

TEST_CASE("roofline: two launches near the mark that agree give their mean, and the sweep goes on from it",
          "[roofline]") {
  const Scripted r = run_scripted({120.0, 120.4});
  CHECK(r.asked == 2);
  const auto summary = summarize(r.points, SweepSettings{});
  REQUIRE(summary.has_value());
  CHECK(summary->ridge_ilp == 8);  // still under the mark: the ILP above it
  bool found = false;
  for (const Point& q : r.points)
    if (q.warps == 4 && q.ilp == 4) {
      found = true;
      CHECK(q.ops_per_cycle == Approx(120.2));
      CHECK(q.launches == 2);
    }
  CHECK(found);
  // One launch over the mark, settled under it: the ridge ILP moves up, no shape twice.
  const Scripted down = run_scripted({122.0, 119.0, 119.5});
  const auto moved = summarize(down.points, SweepSettings{});
  REQUIRE(moved.has_value());
  CHECK(moved->ridge_ilp == 8);
  CHECK(std::count_if(down.points.begin(), down.points.end(),
                      [](const Point& q) { return q.warps == 4 && q.ilp == 8; }) == 1);
}

TEST_CASE("roofline: a sweep stops at the first warp count that does not fit", "[roofline]") {
  Pipeline p{4, 1, 1};
  p.max_warps_at_ilp8 = 2;
  ModelMeasure m{p, 0, 1};
  SweepSettings s;
  const auto points = sweep(std::ref(m), s);
  for (const Point& q : points) CHECK((q.ilp < 8 || q.warps <= 2));
  const auto summary = summarize(points, s);
  REQUIRE(summary.has_value());
  CHECK(summary->peak_ops_per_cycle == Approx(128));
  CHECK(summary->ridge_warps == 4);  // ILP 4 at four warps, ILP 8 never above two
  CHECK(summary->ridge_ilp == 4);
}

TEST_CASE("roofline: ILP 1 alone bounds the issue latency by the completion latency", "[roofline]") {
  SweepSettings s;
  s.ilps = {1};
  ModelMeasure m{Pipeline{6, 1, 1}, 0, 1};
  const auto summary = summarize(sweep(std::ref(m), s), s);
  REQUIRE(summary.has_value());
  CHECK(summary->issue_latency_at_most);
  CHECK(summary->issue_latency_cycles == Approx(6));
  CHECK(summary->ridge_ilp == 1);
  CHECK(summary->ridge_ilp_crossing == 1);
}

TEST_CASE("roofline: no summary without one warp of one chain", "[roofline]") {
  SweepSettings s;
  CHECK_FALSE(summarize({}, s).has_value());
  CHECK_FALSE(summarize({{2, 1, 10.0}, {1, 2, 10.0}}, s).has_value());
  CHECK_FALSE(summarize({{1, 1, 0.0}}, s).has_value());
}

TEST_CASE("roofline: divergence slowdowns are one path's rate over each path count's", "[roofline]") {
  std::vector<DivergencePoint> points;
  for (int paths = 1; paths <= 32; paths *= 2) points.push_back({paths, 128.0 / paths});
  const auto slow = divergence_slowdowns(points);
  REQUIRE(slow.size() == points.size());
  for (size_t i = 0; i < points.size(); ++i) CHECK(slow[i] == Approx(points[i].paths));
  CHECK(divergence_slowdowns({{2, 64.0}, {4, 32.0}}).empty());
  CHECK(divergence_slowdowns({}).empty());
}

TEST_CASE("roofline: every instruction type has a key name and its PTX", "[roofline]") {
  std::set<std::string> names;
  for (const OpInfo& o : ops()) {
    CHECK(int(o.op) == int(names.size()));  // the raw series' op column is the position
    names.insert(o.name);
    CHECK(find_op(o.name) == &o);
  }
  CHECK(names.size() == 11);
  CHECK(find_op("fp8") == nullptr);
}

TEST_CASE("roofline: the load types are the four pointer chains, the rest compute types", "[roofline]") {
  // occupancy-roofline/loads measures these (on the simulated GPU too); /instructions the rest.
  std::set<std::string> loads;
  for (const OpInfo& o : ops())
    if (is_load(o.op)) loads.insert(o.name);
  CHECK(loads == std::set<std::string>{"shared_load", "global_load_l1", "global_load_l2", "global_load_dram"});
}

TEST_CASE("roofline: the ops are listed in the order of the op column", "[roofline]") {
  // The plot hint names the op column's values 0, 1, ... by ops()' names in this order.
  for (size_t i = 0; i < ops().size(); ++i) CHECK(int(ops()[i].op) == int(i));
}
