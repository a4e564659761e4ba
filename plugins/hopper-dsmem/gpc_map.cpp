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

namespace {

int64_t group_at(const std::vector<int64_t>& group_of_sm, int64_t sm) {
  return sm >= 0 && size_t(sm) < group_of_sm.size() ? group_of_sm[size_t(sm)] : -1;
}

// The group of every GPC, or why there is none: a GPC across two groups, a group with two GPCs.
std::string gpc_groups(const GpcMap& placed, const std::vector<int64_t>& group_of_sm, std::map<int64_t, size_t>& gpc_of_group) {
  for (size_t g = 0; g < placed.gpcs.size(); ++g) {
    int64_t group = -1;
    for (int64_t sm : placed.gpcs[g]) {
      const int64_t k = group_at(group_of_sm, sm);
      if (k < 0) continue;
      if (group >= 0 && k != group)
        return "GPC " + std::to_string(g) + " spans groups " + std::to_string(group) + " and " + std::to_string(k);
      group = k;
    }
    if (group < 0) continue;
    const auto [it, added] = gpc_of_group.emplace(group, g);
    if (!added)
      return "group " + std::to_string(group) + " holds GPCs " + std::to_string(it->second) + " and " + std::to_string(g);
  }
  return "";
}

}  // namespace

GroupResolution resolve_with_groups(const GpcMap& placed, const std::vector<int64_t>& group_of_sm) {
  GroupResolution r{placed, {}, ""};
  std::map<int64_t, size_t> gpc_of_group;
  r.disagreement = gpc_groups(placed, group_of_sm, gpc_of_group);
  // The SMs of one small group ran clusters together: they share a GPC, so they share a group.
  for (const auto& g : placed.small_groups)
    for (int64_t sm : g)
      if (r.disagreement.empty() && group_at(group_of_sm, sm) != group_at(group_of_sm, g.front()))
        r.disagreement = "SMs " + std::to_string(g.front()) + " and " + std::to_string(sm) +
                         " ran one cluster but are in different groups";
  if (!r.disagreement.empty()) return r;
  std::vector<int64_t> left;  // SMs the groups could not place
  std::map<int64_t, std::vector<int64_t>> new_gpcs;
  for (int64_t sm : placed.unresolved_sms()) {
    const int64_t k = group_at(group_of_sm, sm);
    if (k < 0) {
      left.push_back(sm);
      continue;
    }
    r.placed_sms.push_back(sm);
    if (const auto it = gpc_of_group.find(k); it != gpc_of_group.end()) r.map.gpcs[it->second].push_back(sm);
    else new_gpcs[k].push_back(sm);
  }
  for (auto& [group, sms] : new_gpcs) r.map.gpcs.push_back(std::move(sms));
  for (auto& g : r.map.gpcs) std::sort(g.begin(), g.end());
  std::sort(r.map.gpcs.begin(), r.map.gpcs.end(), [](const auto& a, const auto& b) { return a.front() < b.front(); });
  // What stays unplaced: whole small groups where none of their SMs was placed, and alone SMs.
  r.map.small_groups.clear();
  r.map.alone.clear();
  for (const auto& g : placed.small_groups)
    if (std::find(left.begin(), left.end(), g.front()) != left.end()) r.map.small_groups.push_back(g);
  for (int64_t sm : placed.alone)
    if (std::find(left.begin(), left.end(), sm) != left.end()) r.map.alone.push_back(sm);
  return r;
}

std::vector<int64_t> cluster_domain_of_sm(const GpcMap& map, int64_t slots) {
  std::vector<int64_t> of = map.gpc_of_sm(slots);
  int64_t next = int64_t(map.gpcs.size());
  for (const auto& g : map.small_groups) {
    for (int64_t sm : g)
      if (sm >= 0 && sm < slots) of[size_t(sm)] = next;
    ++next;
  }
  for (int64_t sm : map.alone)
    if (sm >= 0 && sm < slots) of[size_t(sm)] = next++;
  return of;
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
