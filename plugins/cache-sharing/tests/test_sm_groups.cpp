// Grouping SMs by a pairwise sharing test, and comparing two groupings.
#include <catch2/catch.hpp>

#include "cache-sharing/sm_groups.hpp"

using namespace cache_sharing;

TEST_CASE("SMs are grouped by whom they share with, one test per group found so far", "[sharing]") {
  // Unequal groups that are not runs of consecutive SMs: {0, 2, 5}, {1, 3}, {4}.
  const std::vector<int64_t> truth = {0, 1, 0, 1, 2, 0};
  int64_t tests = 0;
  const auto groups = group_sms(6, [&](int64_t a, int64_t b) { return truth[size_t(a)] == truth[size_t(b)]; }, &tests);
  REQUIRE(groups == std::vector<std::vector<int64_t>>{{0, 2, 5}, {1, 3}, {4}});
  CHECK(group_of_sm(groups, 6) == truth);
  CHECK(tests == 1 + 1 + 2 + 2 + 1);  // SMs 1 to 5: until their group answers, or against all
  // Nobody shares: every SM alone, each tested against every earlier one.
  const auto alone = group_sms(4, [](int64_t, int64_t) { return false; }, &tests);
  CHECK(alone.size() == 4);
  CHECK(tests == 0 + 1 + 2 + 3);
  CHECK(group_sms(0, [](int64_t, int64_t) { return true; }).empty());
}
