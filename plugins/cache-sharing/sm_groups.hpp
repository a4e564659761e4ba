// Groups of SMs that share one cache instance, from a pairwise test: "SM b hits what SM a
// just loaded". Each SM is tested against one member of every group found so far and joins the
// first it shares with; the test is assumed to be an equivalence (one instance per group).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace cache_sharing {

// `shares(a, b)`: does SM b find in its instance what SM a loaded? Returns the groups, each
// ascending, ordered by their lowest SM; `tests` counts the calls.
std::vector<std::vector<int64_t>> group_sms(int64_t sm_count, const std::function<bool(int64_t, int64_t)>& shares,
                                            int64_t* tests = nullptr);

// The group index of every SM 0 .. sm_count-1.
std::vector<int64_t> group_of_sm(const std::vector<std::vector<int64_t>>& groups, int64_t sm_count);

}  // namespace cache_sharing
