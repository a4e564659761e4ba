// memtopo/verify.hpp: what a probe believes its work moved, against what the counters counted.
#include <catch2/catch.hpp>

#include <cmath>

#include "memtopo/verify.hpp"

using memtopo::Believed;
using memtopo::CountedLevel;
using memtopo::Counts;

namespace {

Counts l2_stream(double l2_read, double dram_read) {
  Counts c;
  c.l2_read_bytes = l2_read;
  c.dram_read_bytes = dram_read;
  return c;
}

}  // namespace

TEST_CASE("verify: counts within 5 % of every claim agree, the level's count is the counted bytes", "[verify]") {
  Believed b;
  b.l2_read_bytes = 1e9;
  b.dram_read_bytes = 0;  // checked against the stream's bytes, not against zero
  const auto v = memtopo::compare_counts(l2_stream(1.03e9, 2e7), b, CountedLevel::L2Read);
  CHECK(v.agrees);
  CHECK(v.counted_bytes == 1.03e9);
  CHECK_THAT(v.note, Catch::Contains("L2 reads 1.03 GB counted, 1 GB believed (+3.0 % of 1 GB)"));
  CHECK_THAT(v.note, Catch::Contains("DRAM reads 0.02 GB counted, 0 GB believed"));
}

TEST_CASE("verify: a count off by more than 5 % refutes the claim and names it", "[verify]") {
  Believed b;
  b.l2_read_bytes = 2e9;  // twice what was read
  const auto v = memtopo::compare_counts(l2_stream(1e9, 0), b, CountedLevel::L2Read);
  CHECK_FALSE(v.agrees);
  CHECK_THAT(v.disagreement, Catch::Contains("L2 reads 1 GB counted, 2 GB believed (-50.0 % of 2 GB)"));
  // A claim of no DRAM traffic refuted by a stream that missed the L2.
  Believed l2;
  l2.l2_read_bytes = 1e9;
  l2.dram_read_bytes = 0;
  CHECK_FALSE(memtopo::compare_counts(l2_stream(1e9, 2e8), l2, CountedLevel::L2Read).agrees);
}

TEST_CASE("verify: nothing believed is nothing verified", "[verify]") {
  const auto v = memtopo::compare_counts(l2_stream(1e9, 0), Believed{}, CountedLevel::L2Read);
  CHECK_FALSE(v.agrees);
  CHECK(v.disagreement == "nothing believed to compare");
}

TEST_CASE("verify: marking a result says how, or why not", "[verify]") {
  memtopo::ResultInfo info;
  Believed b;
  b.l1_hit_bytes = 100;
  memtopo::Counts c;
  c.l1_load_hit_bytes = 99;
  memtopo::mark_verified(info, memtopo::compare_counts(c, b, CountedLevel::L1Hit), "a chase");
  CHECK(info.verified == "counters");
  CHECK(info.counted_bytes == 99);
  CHECK_THAT(info.verify_note, Catch::StartsWith("a chase: L1 load hits"));
  memtopo::mark_unverified(info, "the counters are refused here");
  CHECK(info.verified == "unverified");
  CHECK(info.counted_bytes == 0);
}

TEST_CASE("verify: counts of a longer run less a shorter one's leave what the extra work did", "[verify]") {
  Counts a, b;
  a.l1_load_bytes = 100, a.l1_load_hit_bytes = 40;
  b.l1_load_bytes = 300, b.l1_load_hit_bytes = 200;
  const Counts d = b - a;
  CHECK(d.l1_load_bytes == 200);
  CHECK(d.l1_load_hit_bytes == 160);
}

TEST_CASE("verify: a claim whose level was not counted verifies nothing", "[verify]") {
  Believed b;
  b.l2_read_bytes = 1e9;
  b.dram_read_bytes = 0;
  Counts c = l2_stream(1e9, 0);
  c.dram_read_bytes = -1;  // the count asked for the L2 only
  const auto v = memtopo::compare_counts(c, b, CountedLevel::L2Read);
  CHECK_FALSE(v.agrees);
  CHECK(v.disagreement == "DRAM reads not counted");
  // A difference of two counts keeps what was not counted as not counted.
  CHECK((c - c).dram_read_bytes == -1);
  CHECK((c - c).l2_read_bytes == 0);
}

TEST_CASE("verify: an uncounted level leaves the value unverified, not refuted", "[verify]") {
  Believed b;
  b.l2_read_bytes = 1e9;
  Counts c = l2_stream(-1, 0);
  const auto v = memtopo::compare_counts(c, b, CountedLevel::L2Read);
  CHECK_FALSE(v.agrees);
  CHECK_FALSE(v.complete);
  Counts nan = l2_stream(std::nan(""), 0);
  CHECK_FALSE(memtopo::compare_counts(nan, b, CountedLevel::L2Read).complete);
  CHECK(memtopo::compare_counts(l2_stream(1e9, 0), b, CountedLevel::L2Read).complete);
}
