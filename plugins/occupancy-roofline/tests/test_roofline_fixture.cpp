// The hook for series recorded on a GPU: `memtopo run --only occupancy-roofline --raw-dir raw`
// writes raw/occupancy-roofline__instructions/{instructions,device}.csv and
// raw/occupancy-roofline__divergence/divergence.csv; copied to fixtures/h100/, they are replayed
// here. The sweep, fed the recorded rates, must ask for exactly the points the live run measured
// (it is deterministic in the rates), and the summary must hold together with the recording. The
// same replay runs on a modelled recording, so the hook is tested before any fixture exists.
#include <catch2/catch.hpp>

#include <filesystem>
#include <functional>
#include <map>
#include <utility>

#include "hopper/fixture_csv.hpp"
#include "pipeline_model.hpp"

using namespace occupancy_roofline;

namespace {

const std::filesystem::path kFixtures =
    std::filesystem::path(MEMTOPO_SOURCE_DIR) / "plugins" / "occupancy-roofline" / "tests" / "fixtures" / "h100";

// hopper_fixture::read takes a name under tests/hopper/fixtures/.
hopper_fixture::Table read_fixture(const std::string& file) {
  return hopper_fixture::read("../../../plugins/occupancy-roofline/tests/fixtures/h100/" + file);
}

using Rates = std::map<std::pair<int, int>, double>;  // (warps, ilp) -> ops per cycle per SM

// The rows of one op in the columns the probe writes.
std::map<int, Rates> rates_by_op(const hopper_fixture::Table& t) {
  std::map<int, Rates> out;
  for (const auto& r : t.rows)
    out[int(r[t.column("op")])][{int(r[t.column("warps")]), int(r[t.column("ilp")])}] = r[t.column("ops_per_cycle_per_sm")];
  return out;
}

void check_replay(const Rates& recorded, int max_warps) {
  SweepSettings s;
  s.max_warps = max_warps;
  const Measure replay = [&](int warps, int ilp) -> std::optional<double> {
    const auto it = recorded.find({warps, ilp});
    if (it == recorded.end()) return std::nullopt;  // as live: the shape did not fit
    return it->second;
  };
  const std::vector<Point> points = sweep(replay, s);
  CHECK(points.size() == recorded.size());
  const auto summary = summarize(points, s);
  REQUIRE(summary.has_value());
  double most = 0;
  for (const auto& [shape, rate] : recorded) most = std::max(most, rate);
  CHECK(summary->peak_ops_per_cycle <= most);
  CHECK(summary->peak_ops_per_cycle >= (1 - s.peak_pool) * most);
  const double floor = s.ridge_fraction * summary->peak_ops_per_cycle;
  REQUIRE(recorded.count({summary->ridge_warps, summary->ridge_ilp}) == 1);
  CHECK(recorded.at({summary->ridge_warps, summary->ridge_ilp}) >= floor);
  for (const auto& [shape, rate] : recorded) {
    if (shape.first < summary->ridge_warps) CHECK(rate < floor);
    if (shape.first == summary->ridge_warps && shape.second < summary->ridge_ilp) CHECK(rate < floor);
  }
  CHECK(summary->ridge_ilp_crossing <= summary->ridge_ilp);
  if (summary->ridge_ilp_below) {
    CHECK(summary->ridge_ilp_crossing > summary->ridge_ilp_below);
    CHECK(recorded.at({summary->ridge_warps, summary->ridge_ilp_below}) < floor);
  } else {
    CHECK(summary->ridge_ilp_crossing == summary->ridge_ilp);
  }
  CHECK(summary->completion_latency_cycles == Approx(cycles_per_op({1, 1, recorded.at({1, 1})})));
  CHECK(summary->issue_latency_cycles <= summary->completion_latency_cycles * 1.05);
}

// A recording as the probe writes it, from a modelled pipeline's sweep.
hopper_fixture::Table modelled_recording(const roofline_model::Pipeline& p, int op, int max_warps) {
  hopper_fixture::Table t;
  t.columns = {"op", "warps", "ilp", "ops_per_cycle_per_sm", "cycles_per_op", "sms"};
  roofline_model::ModelMeasure m{p, 0.02, 7};
  SweepSettings s;
  s.max_warps = max_warps;
  for (const Point& q : sweep(std::ref(m), s))
    t.rows.push_back({double(op), double(q.warps), double(q.ilp), q.ops_per_cycle, cycles_per_op(q), 132.0});
  return t;
}

}  // namespace

TEST_CASE("roofline: a modelled recording replays through the sweep and its summary holds together",
          "[roofline][fixture]") {
  roofline_model::Pipeline shared{30, 1, 1};
  shared.sm_cap = 32;
  roofline_model::Pipeline far{200, 1, 2};
  far.sm_cap = 16;
  far.max_warps_at_ilp8 = 16;
  int op = 0;
  for (const auto& p : {roofline_model::Pipeline{4, 1, 1}, roofline_model::Pipeline{18, 1, 8}, shared, far}) {
    INFO("modelled op " << op);
    const auto by_op = rates_by_op(modelled_recording(p, op, 48));
    REQUIRE(by_op.size() == 1);
    check_replay(by_op.begin()->second, 48);
    ++op;
  }
}

TEST_CASE("roofline: recorded GPU series replay through the sweep (fixtures/h100/)", "[roofline][fixture]") {
  if (!std::filesystem::exists(kFixtures / "instructions.csv")) {
    WARN("no recorded series in " << kFixtures.string() << " yet (docs/occupancy-roofline.md, \"Fixtures\")");
    return;
  }
  const auto device = read_fixture("device.csv");
  REQUIRE(device.rows.size() == 1);
  const int max_warps = int(device.rows[0][device.column("max_warps_per_sm")]);
  const auto by_op = rates_by_op(read_fixture("instructions.csv"));
  CHECK(by_op.count(int(Op::Ffma)) == 1);
  for (const auto& [op, recorded] : by_op) {
    INFO("op " << op << " (" << ops().at(size_t(op)).name << ")");
    check_replay(recorded, max_warps);
  }
  if (!std::filesystem::exists(kFixtures / "divergence.csv")) return;
  const auto t = read_fixture("divergence.csv");
  std::vector<DivergencePoint> points;
  for (const auto& r : t.rows) points.push_back({int(r[t.column("paths")]), r[t.column("ops_per_cycle_per_sm")]});
  const auto slowdown = divergence_slowdowns(points);
  REQUIRE(slowdown.size() == t.rows.size());
  for (size_t i = 0; i < slowdown.size(); ++i) CHECK(slowdown[i] == Approx(t.rows[i][t.column("slowdown")]));
}

TEST_CASE("roofline: the recorded H100 series give their ridge points, the half-precision FMAs none at ILP 1",
          "[roofline][fixture]") {
  if (!std::filesystem::exists(kFixtures / "instructions.csv")) return;  // warned above
  const auto by_op = rates_by_op(read_fixture("instructions.csv"));
  SweepSettings s;
  auto summary_of = [&](Op op) {
    std::vector<Point> points;
    for (const auto& [shape, rate] : by_op.at(int(op))) points.push_back({shape.first, shape.second, rate});
    const auto summary = summarize(points, s);
    REQUIRE(summary.has_value());
    return *summary;
  };
  const Summary ffma = summary_of(Op::Ffma);
  CHECK(ffma.ridge_warps == 8);
  CHECK(ffma.ridge_ilp == 2);
  CHECK(ffma.ilp1_ridge_warps == 16);
  CHECK_FALSE(ffma.issue_latency_at_most);
  // One chain per thread plateaus at half the peak: no ILP-1 ridge, ILP 8 at 16 warps instead.
  const Summary hfma2 = summary_of(Op::Hfma2);
  CHECK_FALSE(hfma2.ilp1_ridge_warps.has_value());
  CHECK(hfma2.ridge_warps == 16);
  CHECK(hfma2.ridge_ilp == 8);
  // The load chains need ILP 8 at four warps, or 32 warps of one chain.
  for (Op op : {Op::SharedLoad, Op::GlobalLoadL1}) {
    const Summary load = summary_of(op);
    CHECK(load.ridge_warps == 4);
    CHECK(load.ridge_ilp == 8);
    CHECK(load.ilp1_ridge_warps == 32);
  }
  // DRAM loads: one warp keeps no more than 4 chains usefully in flight (ILP 8 is slower), so the
  // issue latency is a bound; a warp per SM is far from the peak, which 64 warps of one chain
  // reach.
  const Summary dram = summary_of(Op::GlobalLoadDram);
  CHECK(dram.issue_ilp == 4);
  CHECK(dram.issue_latency_at_most);
  CHECK(dram.issue_wider_ilp_slower);
  CHECK(dram.completion_latency_cycles > summary_of(Op::GlobalLoadL2).completion_latency_cycles * 2);
  CHECK(dram.ridge_ilp == 1);
}
