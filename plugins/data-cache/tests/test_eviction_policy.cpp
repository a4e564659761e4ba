// The replacement verdict of the eviction-set probes from per-position miss counts and the scan
// trials (eviction_analysis.cpp, policy_of): what each policy leaves and what is not made up.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "eviction_analysis.hpp"

TEST_CASE("eviction policy: E1 evicted in every trial is LRU, E0 is FIFO", "[eviction][policy]") {
  const auto lru = data_cache::policy_of({{0, 16, 0, 0}, {1, 15, 0, 0}}, {16, 16}, 16);
  REQUIRE(lru.found);
  CHECK(lru.policy == "lru");
  CHECK(lru.victim_fractions[1] == Approx(31.0 / 32));
  CHECK(data_cache::policy_of({{16, 0, 0, 0}}, {16}, 16).policy == "fifo");
  CHECK(data_cache::policy_of({{0, 16, 0, 0}}, {}, 16).policy == "lru");  // no scan trials: the positions decide
}

TEST_CASE("eviction policy: victims spread evenly are random, a fixed other one is non-uniform", "[eviction][policy]") {
  CHECK(data_cache::policy_of({{4, 4, 4, 4}, {4, 4, 4, 4}}, {11, 10}, 16).policy == "random");
  CHECK(data_cache::policy_of({{0, 0, 16, 0}, {0, 0, 16, 0}}, {16, 16}, 16).policy == "non_uniform");
}

TEST_CASE("eviction policy: a re-used line that outlives W new ones is kept, whatever the positions say",
          "[eviction][policy]") {
  // The H100 L1's pattern: hardly a victim among E0 .. E3, x kept in every scan trial.
  const auto kept = data_cache::policy_of({{0, 1, 1, 1}, {0, 1, 1, 1}}, {0, 1}, 16);
  REQUIRE(kept.found);
  CHECK(kept.policy == "keeps_reused");
  CHECK(kept.note.find("x missed in 1 of 32 trials") != std::string::npos);
  // x evicted in a third of the scan trials: neither kept nor a named victim.
  CHECK_FALSE(data_cache::policy_of({{0, 1, 1, 1}}, {5}, 16).found);
}

TEST_CASE("eviction policy: a new line that evicts nothing names no victim", "[eviction][policy]") {
  const auto none = data_cache::policy_of({{0, 1, 0, 0}}, {16}, 16);
  CHECK_FALSE(none.found);
  CHECK(none.victim_fractions.size() == 4);  // measured all the same
  CHECK_FALSE(data_cache::policy_of({}, {}, 16).found);
}
