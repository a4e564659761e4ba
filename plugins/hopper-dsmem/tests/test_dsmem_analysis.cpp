// hopper-dsmem analysis on series recorded on an H100 (fixtures/h100/placements.csv,
// resident-clusters.csv, constant-l15-groups.csv, chases.csv): the GPC map, its check against
// the resident clusters, the SMs the constant L1.5 groups place, and the latency per rank
// distance.
#include <catch2/catch.hpp>

#include <algorithm>

#include "hopper/fixture_csv.hpp"
#include "hopper-dsmem/dsmem_analysis.hpp"
#include "hopper-dsmem/gpc_map.hpp"

using namespace hopper_dsmem;

namespace {

std::vector<Placement> recorded_placements() {
  const auto t = hopper_fixture::read("h100/placements.csv");
  std::vector<Placement> p;
  for (const auto& r : t.rows)
    p.push_back({int64_t(r[t.column("cluster_blocks")]), int64_t(r[t.column("launch")]), int64_t(r[t.column("cluster")]),
                 int64_t(r[t.column("sm")])});
  return p;
}

std::vector<int64_t> recorded_resident() {
  const auto t = hopper_fixture::read("h100/resident-clusters.csv");
  std::vector<int64_t> n;
  for (const auto& r : t.rows) n.push_back(int64_t(r[t.column("measured")]));
  return n;
}

std::vector<int64_t> recorded_l15_groups() {
  const auto t = hopper_fixture::read("h100/constant-l15-groups.csv");
  std::vector<int64_t> g;
  for (const auto& r : t.rows) g.push_back(int64_t(r[t.column("group")]));
  return g;
}

}  // namespace

TEST_CASE("the constant L1.5 groups place the SMs that only ran one-TPC clusters", "[hopper][dsmem]") {
  const GpcMap placed = gpc_map(recorded_placements(), 132);
  REQUIRE(placed.unresolved_sms().size() == 8);
  const GroupResolution r = resolve_with_groups(placed, recorded_l15_groups());
  CHECK(r.disagreement.empty());
  CHECK(r.placed_sms == placed.unresolved_sms());
  CHECK(r.map.unresolved_sms().empty());
  CHECK(r.map.gpcs.size() == placed.gpcs.size());
  int64_t placed_total = 0;
  for (int64_t n : r.map.sm_counts()) placed_total += n;
  CHECK(placed_total == 132);
  // Every SM's GPC is its L1.5 group's, one GPC per group.
  const auto of = r.map.gpc_of_sm(132);
  const auto groups = recorded_l15_groups();
  for (int64_t a = 0; a < 132; ++a)
    for (int64_t b = a + 1; b < 132; ++b) CHECK((of[size_t(a)] == of[size_t(b)]) == (groups[size_t(a)] == groups[size_t(b)]));
  // The cluster domains keep the placements: the one-TPC SMs apart from their GPC's placed SMs.
  const auto domain = cluster_domain_of_sm(placed, 132);
  for (int64_t sm : placed.unresolved_sms()) CHECK(domain[size_t(sm)] >= int64_t(placed.gpcs.size()));
  CHECK(*std::min_element(domain.begin(), domain.end()) >= 0);
}

TEST_CASE("groups that split a placed GPC or join two place nothing", "[hopper][dsmem]") {
  const GpcMap placed = gpc_map(recorded_placements(), 132);
  std::vector<int64_t> one(132, 0);  // every SM in one group: it would hold every GPC
  const GroupResolution joined = resolve_with_groups(placed, one);
  CHECK_FALSE(joined.disagreement.empty());
  CHECK(joined.placed_sms.empty());
  std::vector<int64_t> each(132);  // every SM a group of its own: each GPC spans many
  for (size_t i = 0; i < each.size(); ++i) each[i] = int64_t(i);
  CHECK(resolve_with_groups(placed, each).disagreement.find("spans") != std::string::npos);
  // Unknown groups (-1) place nothing and leave the SMs unresolved.
  const GroupResolution unknown = resolve_with_groups(placed, std::vector<int64_t>(132, -1));
  CHECK(unknown.disagreement.empty());
  CHECK(unknown.placed_sms.empty());
  CHECK(unknown.map.unresolved_sms() == placed.unresolved_sms());
}

TEST_CASE("the GPC map of the recorded placements: groups of SMs that clusters never leave", "[hopper][dsmem]") {
  const GpcMap map = gpc_map(recorded_placements(), 132);
  CHECK(map.complete());
  int64_t placed = 0;
  for (int64_t n : map.sm_counts()) placed += n;
  CHECK(placed + int64_t(map.unresolved_sms().size()) == 132);
  // Every SM is in exactly one group, and groups are ordered by their lowest SM.
  const auto of = map.gpc_of_sm(132);
  for (size_t g = 0; g < map.gpcs.size(); ++g) {
    CHECK(std::is_sorted(map.gpcs[g].begin(), map.gpcs[g].end()));
    if (g > 0) CHECK(map.gpcs[g].front() > map.gpcs[g - 1].front());
    for (int64_t sm : map.gpcs[g]) CHECK(of[size_t(sm)] == int64_t(g));
  }
  for (int64_t sm : map.unresolved_sms()) CHECK(of[size_t(sm)] == -1);
  // The largest cluster (16 blocks) ran in some group: that group holds at least 16 SMs.
  const std::vector<int64_t> counts = map.sm_counts();
  CHECK(*std::max_element(counts.begin(), counts.end()) >= 16);
}

TEST_CASE("the map predicts the recorded number of resident clusters of every size", "[hopper][dsmem]") {
  const GpcMap map = gpc_map(recorded_placements(), 132);
  const auto resident = recorded_resident();
  REQUIRE(resident.size() == 16);
  CHECK(check_against_residency(map, resident).empty());
  for (size_t i = 0; i < resident.size(); ++i) CHECK(clusters_that_fit(map, int64_t(i) + 1) == resident[i]);
  // A map that merged two groups would predict more clusters of 16 than were resident.
  GpcMap merged = map;
  merged.gpcs[0].insert(merged.gpcs[0].end(), merged.gpcs[1].begin(), merged.gpcs[1].end());
  merged.gpcs.erase(merged.gpcs.begin() + 1);
  CHECK_FALSE(check_against_residency(merged, resident).empty());
}

TEST_CASE("placements of one-TPC clusters only say nothing about GPCs", "[hopper][dsmem]") {
  // The shape is absent: only clusters of 2 blocks, so every group is one TPC and no GPC is
  // resolved; the probe reports it not determinable instead of inventing groups.
  std::vector<Placement> pairs;
  for (const Placement& p : recorded_placements())
    if (p.cluster_blocks == 2) pairs.push_back(p);
  REQUIRE_FALSE(pairs.empty());
  const GpcMap map = gpc_map(pairs, 132);
  CHECK(map.gpcs.empty());
  CHECK_FALSE(map.small_groups.empty());
  for (const auto& g : map.small_groups) CHECK(g.size() < 16);  // clusters of 2 may join a few TPCs
  // And SMs on which nothing ran are not placed anywhere.
  const GpcMap none = gpc_map({}, 4);
  CHECK_FALSE(none.complete());
  CHECK(none.unseen.size() == 4);
}

TEST_CASE("the latency per rank distance of the recorded chases", "[hopper][dsmem]") {
  const auto t = hopper_fixture::read("h100/chases.csv");
  std::vector<ChaseSample> remote, own;
  for (const auto& r : t.rows) {
    const ChaseSample s{int64_t(r[t.column("cluster")]), int64_t(r[t.column("distance")]), r[t.column("cycles_per_load")]};
    (s.distance >= 0 ? remote : own).push_back(s);
  }
  const auto by = latency_by_distance(remote);
  REQUIRE(by.size() == 16);
  CHECK(by.front().distance == 0);
  const auto peer = peer_latency(by);
  REQUIRE(peer.has_value());
  // Another block's shared memory is several times farther than the block's own.
  CHECK(peer->median_cycles > 3 * by.front().median_cycles);
  CHECK(latency_by_distance(own).at(0).median_cycles < by.front().median_cycles);
  CHECK(peer->spread_cycles >= 0);
  for (const auto& d : by) CHECK(d.samples > 0);
}

TEST_CASE("no peer distance measured gives no peer latency", "[hopper][dsmem]") {
  CHECK_FALSE(peer_latency(latency_by_distance({{0, 0, 30.0}})).has_value());
  CHECK(latency_by_distance({{0, 1, std::nan("")}, {0, 1, -2.0}}).empty());
  const auto p = peer_latency(latency_by_distance({{0, 1, 200.0}, {0, 2, 220.0}}));
  REQUIRE(p.has_value());
  CHECK(p->depends_on_distance);
  CHECK(p->spread_cycles == Approx(20.0));
}
