// The replacement verdict of the eviction-set probes from per-position miss counts
// (eviction_analysis.cpp, policy_of): what each policy leaves and what is not made up.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "eviction_analysis.hpp"

TEST_CASE("eviction policy: E1 evicted in every trial is LRU, E0 is FIFO", "[eviction][policy]") {
  const auto lru = data_cache::policy_of({{0, 16, 0, 0}, {1, 15, 0, 0}}, 16);
  REQUIRE(lru.found);
  CHECK(lru.policy == "lru");
  CHECK(lru.victim_fractions[1] == Approx(31.0 / 32));
  CHECK(data_cache::policy_of({{16, 0, 0, 0}}, 16).policy == "fifo");
}

TEST_CASE("eviction policy: victims spread evenly are random, a fixed other one is non-uniform", "[eviction][policy]") {
  CHECK(data_cache::policy_of({{4, 4, 4, 4}, {4, 4, 4, 4}}, 16).policy == "random");
  CHECK(data_cache::policy_of({{0, 0, 16, 0}, {0, 0, 16, 0}}, 16).policy == "non_uniform");
}

TEST_CASE("eviction policy: a new line that evicts nothing names no victim", "[eviction][policy]") {
  CHECK_FALSE(data_cache::policy_of({{0, 1, 0, 0}}, 16).found);
  CHECK_FALSE(data_cache::policy_of({}, 16).found);
}
