#include "gpc_map.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

namespace hopper_dsmem {
namespace {

struct DisjointSets {
  std::vector<int64_t> parent;
  explicit DisjointSets(int64_t n) : parent(size_t(n)) { std::iota(parent.begin(), parent.end(), 0); }
  int64_t find(int64_t x) {
    while (parent[size_t(x)] != x) x = parent[size_t(x)] = parent[size_t(parent[size_t(x)])];
    return x;
  }
  void join(int64_t a, int64_t b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[size_t(std::max(a, b))] = std::min(a, b);
  }
};

}  // namespace

std::vector<int64_t> GpcMap::sm_counts() const {
  std::vector<int64_t> counts;
  for (const auto& g : gpcs) counts.push_back(int64_t(g.size()));
  return counts;
}

std::vector<int64_t> GpcMap::gpc_of_sm(int64_t slots) const {
  std::vector<int64_t> of(size_t(std::max<int64_t>(slots, 0)), -1);
  for (size_t g = 0; g < gpcs.size(); ++g)
    for (int64_t sm : gpcs[g])
      if (sm >= 0 && sm < slots) of[size_t(sm)] = int64_t(g);
  return of;
}

std::vector<int64_t> GpcMap::unresolved_sms() const {
  std::vector<int64_t> sms = alone;
  for (const auto& g : small_groups) sms.insert(sms.end(), g.begin(), g.end());
  std::sort(sms.begin(), sms.end());
  return sms;
}

GpcMap gpc_map(const std::vector<Placement>& placements, int64_t sm_count) {
  DisjointSets sets(sm_count);
  std::vector<bool> seen(size_t(sm_count), false), paired(size_t(sm_count), false);
  std::vector<int64_t> largest(size_t(sm_count), 0);  // the largest cluster each SM ran in
  int64_t smallest = 0;                               // the smallest cluster size of 2 or more
  for (const Placement& p : placements)
    if (p.cluster_blocks >= 2 && (smallest == 0 || p.cluster_blocks < smallest)) smallest = p.cluster_blocks;
  std::map<std::pair<std::pair<int64_t, int64_t>, int64_t>, int64_t> first_sm;  // (size, launch), cluster -> SM
  for (const Placement& p : placements) {
    if (p.sm < 0 || p.sm >= sm_count) continue;
    seen[size_t(p.sm)] = true;
    if (p.cluster_blocks < 2) continue;
    largest[size_t(p.sm)] = std::max(largest[size_t(p.sm)], p.cluster_blocks);
    const auto key = std::make_pair(std::make_pair(p.cluster_blocks, p.launch), p.cluster);
    const auto [it, added] = first_sm.emplace(key, p.sm);
    if (!added && it->second != p.sm) {
      sets.join(it->second, p.sm);
      paired[size_t(it->second)] = paired[size_t(p.sm)] = true;
    }
  }
  GpcMap map;
  std::map<int64_t, std::vector<int64_t>> groups;
  for (int64_t sm = 0; sm < sm_count; ++sm) {
    if (!seen[size_t(sm)]) {
      map.unseen.push_back(sm);
    } else if (!paired[size_t(sm)]) {
      map.alone.push_back(sm);
    } else {
      groups[sets.find(sm)].push_back(sm);
    }
  }
  for (auto& [root, sms] : groups) {  // roots are the lowest SMs: ordered
    int64_t group_largest = 0;
    for (int64_t sm : sms) group_largest = std::max(group_largest, largest[size_t(sm)]);
    (group_largest > smallest ? map.gpcs : map.small_groups).push_back(std::move(sms));
  }
  return map;
}

int64_t clusters_that_fit(const GpcMap& map, int64_t cluster_blocks) {
  if (cluster_blocks < 1) return 0;
  int64_t n = 0;
  for (const auto* groups : {&map.gpcs, &map.small_groups})
    for (const auto& g : *groups) n += int64_t(g.size()) / cluster_blocks;
  return n + (cluster_blocks == 1 ? int64_t(map.alone.size()) : 0);
}

std::string check_against_residency(const GpcMap& map, const std::vector<int64_t>& resident_clusters) {
  std::string out;
  for (size_t i = 0; i < resident_clusters.size(); ++i) {
    const int64_t size = int64_t(i) + 1, fit = clusters_that_fit(map, size);
    if (resident_clusters[i] > 0 && fit != resident_clusters[i])
      out += (out.empty() ? "" : "; ") + std::string("clusters of ") + std::to_string(size) + ": the map fits " +
             std::to_string(fit) + ", " + std::to_string(resident_clusters[i]) + " were resident";
  }
  return out;
}

}  // namespace hopper_dsmem
