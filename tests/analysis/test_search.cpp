#include <catch2/catch.hpp>

#include "memtopo/analysis.hpp"

using namespace memtopo::analysis;

namespace {
// A cache of 25.5 KiB: footprints above it "have misses".
constexpr uint64_t kSize = 26112;
bool has_misses(uint64_t footprint) { return footprint > kSize; }
}  // namespace

TEST_CASE("doubling + bisection brackets the threshold to one granule", "[analysis][search]") {
  size_t calls = 0;
  SearchOptions o;
  o.start = 1024;
  o.granularity = 128;
  const Bracket b = find_transition(
      [&](uint64_t s) {
        ++calls;
        CHECK(s % 128 == 0);
        return has_misses(s);
      },
      o);
  INFO(b.reason);
  REQUIRE(b.found);
  CHECK(b.low == kSize);
  CHECK(b.high == kSize + 128);
  CHECK(b.evaluations == calls);
  CHECK(calls <= 6 + 8);  // 1 KiB .. 32 KiB doubling, then log2(8 KiB / 128) bisections
}

TEST_CASE("batched search: k points per round, same answer in fewer rounds", "[analysis][search]") {
  SearchOptions o;
  o.start = 1024;
  o.granularity = 32;
  o.points_per_round = 16;
  size_t rounds = 0;
  const Bracket b = find_transition(
      BatchPredicate([&](const std::vector<uint64_t>& sizes) {
        ++rounds;
        CHECK(sizes.size() <= 16);
        std::vector<bool> out;
        for (uint64_t s : sizes) out.push_back(has_misses(s));
        return out;
      }),
      o);
  INFO(b.reason);
  REQUIRE(b.found);
  CHECK(b.low == kSize);
  CHECK(b.high == kSize + 32);
  CHECK(b.rounds == rounds);
  CHECK(rounds <= 5);
}

TEST_CASE("search: no transition is reported, not invented", "[analysis][search]") {
  SearchOptions o;
  o.start = 1024;
  o.limit = 1 << 20;
  const Bracket never = find_transition([](uint64_t) { return false; }, o);
  CHECK_FALSE(never.found);
  CHECK(never.low == (1u << 20));
  CHECK(never.reason.find("still false") != std::string::npos);
  const Bracket always = find_transition([](uint64_t) { return true; }, o);
  CHECK_FALSE(always.found);
  CHECK(always.reason.find("already true") != std::string::npos);
}

TEST_CASE("search: doubling ends at the limit itself", "[analysis][search]") {
  // The constant path reaches 95 KiB: doubling from 16 KiB must look at 95 KiB, not stop at 64.
  SearchOptions o;
  o.start = 16384;
  o.granularity = 256;
  o.limit = 97280;
  std::vector<uint64_t> seen;
  const Bracket never = find_transition(
      [&](uint64_t s) {
        seen.push_back(s);
        return false;
      },
      o);
  CHECK_FALSE(never.found);
  CHECK(never.low == 97280);
  CHECK(seen == std::vector<uint64_t>{16384, 32768, 65536, 97280});
  // A transition between the last power of two and the limit is found.
  const Bracket b = find_transition([](uint64_t s) { return s > 81920; }, o);
  REQUIRE(b.found);
  CHECK(b.low == 81920);
  CHECK(b.high == 81920 + 256);
}

TEST_CASE("search: the iteration cap stops bisection with a valid wider bracket", "[analysis][search]") {
  SearchOptions o;
  o.granularity = 4;
  o.max_rounds = 3;
  const Bracket b = bisect(BatchPredicate([](const std::vector<uint64_t>& s) {
                             std::vector<bool> r;
                             for (uint64_t v : s) r.push_back(has_misses(v));
                             return r;
                           }),
                           16384, 32768, o);
  CHECK(b.found);
  CHECK(b.rounds == 3);
  CHECK(b.low <= kSize);
  CHECK(b.high > kSize);
  CHECK(b.high - b.low == 2048);
  CHECK(b.reason.find("stopped after 3 rounds") != std::string::npos);
}

TEST_CASE("fine sweep: aligned steps, values for change-point detection", "[analysis][search]") {
  SweepOptions o;
  o.step = 128;
  // Past the size misses appear at once and then grow with the footprint (a ramp).
  const Sweep s = fine_sweep([](uint64_t f) { return has_misses(f) ? 34.0 + static_cast<double>(f - kSize) / 64 : 30.0; },
                             24000, 28672, o);
  CHECK(s.complete);
  REQUIRE(s.sizes.size() == 37);  // 24064 .. 28672 step 128, both ends included
  CHECK(s.sizes.front() == 24064);
  CHECK(s.sizes.back() == 28672);
  for (uint64_t v : s.sizes) CHECK(v % 128 == 0);
  SingleChangeOptions co;
  co.cost = Cost::Linear;  // flat then ramp: the mean-shift cost would split mid-ramp
  const SingleChange c = single_change_point(s.values, co);
  REQUIRE(c.found);
  CHECK(s.sizes[c.index - 1] == kSize);  // the last size without misses
}

TEST_CASE("fine sweep: stop hook and point cap", "[analysis][search]") {
  SweepOptions o;
  o.step = 128;
  o.points_per_round = 4;
  o.stop = stop_when_change_confirmed(0.01, 4);
  size_t calls = 0;
  const Sweep s = fine_sweep(BatchMeasure([&](const std::vector<uint64_t>& sizes) {
                               ++calls;
                               std::vector<double> v;
                               for (uint64_t f : sizes) v.push_back(has_misses(f) ? 300.0 : 30.0);
                               return v;
                             }),
                             20480, 65536, o);
  INFO(s.reason);
  CHECK_FALSE(s.complete);
  CHECK(s.reason.find("clear") != std::string::npos);
  CHECK(s.sizes.back() < 32768);  // far short of the 64 KiB end
  CHECK(calls * 4 >= s.sizes.size());
  SweepOptions capped;
  capped.step = 4;
  capped.max_points = 10;
  const Sweep c = fine_sweep([](uint64_t) { return 1.0; }, 0, 4096, capped);
  CHECK(c.sizes.size() == 10);
  CHECK_FALSE(c.complete);
  CHECK(c.reason.find("cap") != std::string::npos);
}

TEST_CASE("lasting_onset: where misses that come and go begin for good", "[analysis][search]") {
  // The H100's L2 near its capacity (build 010f75e, runs 1 and 3): mean miss fractions of
  // three measurements at footprints 1/64 of the size apart. Misses of other traffic and
  // footprints that miss only now and then come before the lasting rise.
  const std::vector<double> run1{1.73e-05, 0.00406, 2.54e-06, 7.7e-05, 0.00546, 0.00129, 0.01,
                                 0.00931,  0.027,   0.0181,   0.0225,  0.0324,  0.0387,  0.0521};
  CHECK(lasting_onset(run1) == 6);
  const std::vector<double> run3{7.4e-05, 0, 0, 2.59e-06, 0.000119, 0, 5.72e-05,
                                 9.2e-05, 2.68e-05, 0.00138, 0.00519, 0.0204, 0.00791, 0.037};
  CHECK(lasting_onset(run3) == 10);
  // A single spike in the clean part does not move it; nothing to find in all zeros.
  CHECK(lasting_onset({0, 0, 0.05, 0, 0, 0, 0.01, 0.02, 0.03, 0.04}) == 6);
  CHECK(lasting_onset({0, 0, 0, 0}) == 4);
  // A ramp that falls back at the end has no lasting onset.
  CHECK(lasting_onset({0, 0, 0.02, 0.03, 0.04, 0, 0, 0}) == 8);
}
