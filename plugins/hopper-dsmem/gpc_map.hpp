// The GPC map from cluster placements: the blocks of one thread-block cluster always run in
// one GPC, so SMs that ever share a cluster share a GPC. The union over many placements of
// clusters of several sizes gives the GPCs once every SM has shared a cluster with another.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hopper_dsmem {

// One block of one launch: the cluster it belonged to and the SM it ran on.
struct Placement {
  int64_t cluster_blocks = 0;  // the launch's cluster size
  int64_t launch = 0;          // which launch
  int64_t cluster = 0;         // the cluster's index in that launch
  int64_t sm = 0;              // %smid of the block
};

struct GpcMap {
  std::vector<std::vector<int64_t>> gpcs;  // the SMs of each GPC, ascending; GPCs by lowest SM
  // Groups that only ever ran clusters of the smallest size tried (2 blocks: one TPC): no
  // larger cluster was placed on them, so placement cannot say which GPC they belong to.
  std::vector<std::vector<int64_t>> small_groups;
  std::vector<int64_t> alone;   // SMs that never shared a cluster with another SM
  std::vector<int64_t> unseen;  // SMs below sm_count on which no block ran
  bool complete() const { return alone.empty() && unseen.empty(); }
  std::vector<int64_t> unresolved_sms() const;  // the SMs of small_groups and alone, ascending
  std::vector<int64_t> sm_counts() const;              // SMs per GPC, in the order of `gpcs`
  std::vector<int64_t> gpc_of_sm(int64_t slots) const;  // GPC index per SM (-1: not placed)
};

// Groups the SMs 0 .. sm_count-1 by the clusters they shared. Only clusters of 2 or more
// blocks say anything; an SM seen only in clusters of 1 is in `alone`.
GpcMap gpc_map(const std::vector<Placement>& placements, int64_t sm_count);

// Where placement left SMs without a GPC (`small_groups`, `alone`), another grouping of the
// SMs that agrees with the placed GPCs (each GPC inside one group, no group holding two GPCs:
// the constant L1.5's groups on Hopper) places them: an SM joins the GPC of its group, and the
// unplaced SMs of a group without a GPC become one. `group_of_sm`: the group per SM, -1 unknown.
struct GroupResolution {
  GpcMap map;                        // the GPCs with the SMs placed by the groups
  std::vector<int64_t> placed_sms;   // the SMs the groups placed, ascending
  std::string disagreement;          // why the groups place nothing (empty: they agree)
};
GroupResolution resolve_with_groups(const GpcMap& placed, const std::vector<int64_t>& group_of_sm);

// Each SM's cluster domain: its GPC's index for the SMs of `gpcs`, then one domain per small
// group and per SM alone (numbered after the GPCs), -1 for SMs on which nothing ran. Clusters
// are placed within a domain: the measured placement groups, which is what a simulated GPU
// needs to place clusters as this GPU does.
std::vector<int64_t> cluster_domain_of_sm(const GpcMap& map, int64_t slots);

// How many clusters of `cluster_blocks` the map holds at once with one block per SM: the sum
// over GPCs and small groups of floor(SMs / cluster_blocks). Compared with the measured count it checks the map.
int64_t clusters_that_fit(const GpcMap& map, int64_t cluster_blocks);

// Empty when the map predicts every measured count of resident clusters (one per cluster
// size, sizes 1 .. counts.size()); otherwise one line per size that differs.
std::string check_against_residency(const GpcMap& map, const std::vector<int64_t>& resident_clusters);

}  // namespace hopper_dsmem
