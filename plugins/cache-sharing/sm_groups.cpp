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

}  // namespace cache_sharing
