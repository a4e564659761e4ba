#include "sm_groups.hpp"

#include <algorithm>

namespace cache_sharing {

std::vector<std::vector<int64_t>> group_sms(int64_t sm_count, const std::function<bool(int64_t, int64_t)>& shares,
                                            int64_t* tests) {
  std::vector<std::vector<int64_t>> groups;
  int64_t calls = 0;
  for (int64_t sm = 0; sm < sm_count; ++sm) {
    bool placed = false;
    for (auto& g : groups) {
      ++calls;
      if (shares(g.front(), sm)) {
        g.push_back(sm);
        placed = true;
        break;
      }
    }
    if (!placed) groups.push_back({sm});
  }
  if (tests) *tests = calls;
  return groups;  // SMs were added in ascending order: every group and the list are ordered
}

std::vector<int64_t> group_of_sm(const std::vector<std::vector<int64_t>>& groups, int64_t sm_count) {
  std::vector<int64_t> of(size_t(sm_count > 0 ? sm_count : 0), -1);
  for (size_t g = 0; g < groups.size(); ++g)
    for (int64_t sm : groups[g])
      if (sm >= 0 && sm < sm_count) of[size_t(sm)] = int64_t(g);
  return of;
}

std::string compare_groupings(const std::vector<int64_t>& mine, const std::vector<int64_t>& other) {
  const size_t n = std::min(mine.size(), other.size());
  size_t unknown = 0;
  for (size_t a = 0; a < n; ++a) {
    if (other[a] < 0) {
      ++unknown;
      continue;
    }
    for (size_t b = a + 1; b < n; ++b) {
      if (other[b] < 0) continue;
      if ((mine[a] == mine[b]) != (other[a] == other[b]))
        return "differ: SMs " + std::to_string(a) + " and " + std::to_string(b) + " are " +
               (mine[a] == mine[b] ? "together" : "apart") + " here and " + (other[a] == other[b] ? "together" : "apart") +
               " there";
    }
  }
  return "the same groups" + (unknown ? " (" + std::to_string(unknown) + " SMs unknown there left out)" : std::string());
}

}  // namespace cache_sharing
