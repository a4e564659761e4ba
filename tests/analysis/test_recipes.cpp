#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "memtopo/recipes.hpp"

using namespace memtopo;
using namespace memtopo::recipes;

namespace {
// Every element of the cycle visited exactly once and the walk returns to the start.
void check_single_cycle(const Chase& c) {
  const uint64_t len = cycle_length(c.array, c.start);
  REQUIRE(len == c.order.size());
  const auto w = walk(c.array, c.start, len + 1);
  REQUIRE(w.size() == len + 1);
  CHECK(w.back() == c.start);
  CHECK(std::vector<uint32_t>(w.begin(), w.end() - 1) == c.order);
  CHECK(std::set<uint32_t>(c.order.begin(), c.order.end()).size() == c.order.size());
  for (uint32_t e : c.array.next) CHECK(e < c.array.next.size());
  CHECK(c.array.footprint_bytes() == c.footprint_bytes);
}
}  // namespace

TEST_CASE("constant stride: explicit next[i] = (i + s) % n", "[analysis][recipes]") {
  const Chase c = constant_stride(4096, 128);
  REQUIRE(c.array.next.size() == 1024);
  CHECK(c.array.stride_elems == 0);  // explicit form
  for (uint32_t i = 0; i < 1024; ++i) CHECK(c.array.next[i] == (i + 32) % 1024);
  CHECK(c.start == 0);
  CHECK(c.stride_bytes == 128);
  CHECK(c.cycle_length() == 32);
  check_single_cycle(c);
  const Chase all = constant_stride(1000, 4);  // stride of one element: all 250
  CHECK(all.cycle_length() == 250);
  check_single_cycle(all);
  // The compact form visits the same elements.
  const ChaseArray compact = ChaseArray::stride(4096, 128);
  CHECK(walk(compact, 0, 32) == c.order);
  CHECK(cycle_length(compact, 0) == 32);
}

TEST_CASE("random lines (Sattolo): one cycle through every line, fixed by the seed", "[analysis][recipes]") {
  const Chase c = random_lines(64 * 1024, 128);
  REQUIRE(c.cycle_length() == 512);
  check_single_cycle(c);
  std::set<uint32_t> lines;
  for (uint32_t e : c.order) {
    CHECK(e % 32 == 0);  // first word of a line
    lines.insert(e / 32);
  }
  CHECK(lines.size() == 512);
  // Not the sequential order, and the same seed gives the same cycle.
  std::vector<uint32_t> sequential(512);
  for (uint32_t i = 0; i < 512; ++i) sequential[i] = i * 32;
  CHECK(c.order != sequential);
  CHECK(random_lines(64 * 1024, 128).order == c.order);
  CHECK(random_lines(64 * 1024, 128, 99).order != c.order);
  const Chase off = random_lines(4096, 32, 1, 8);
  for (uint32_t e : off.order) CHECK(e % 8 == 2);  // byte 8 of every 32-byte line
  check_single_cycle(off);
}

TEST_CASE("Sattolo always yields a single cycle, whatever the seed", "[analysis][recipes]") {
  for (uint64_t seed = 0; seed < 50; ++seed) {
    const Chase c = random_lines(2048, 32, seed);
    CHECK(cycle_length(c.array, c.start) == 64);
  }
  CHECK(random_lines(32, 32).cycle_length() == 1);  // one line: a self loop
}

TEST_CASE("non-uniform strides (Mei and Chu)", "[analysis][recipes]") {
  const Chase c = non_uniform_stride({{1024, 4}, {4, 3}});
  const std::vector<uint32_t> expect{0, 256, 512, 768, 1024, 1025, 1026, 1027};
  CHECK(c.order == expect);
  CHECK(c.footprint_bytes == 4112);
  CHECK(c.stride_bytes == 0);
  check_single_cycle(c);
  // Wrapping modulo the footprint: back to other words of lines visited before.
  const Chase w = non_uniform_stride({{4096, 3}, {4100, 3}}, 16384);
  CHECK(w.order == std::vector<uint32_t>{0, 1024, 2048, 3072, 1, 1026, 2051});  // +1025 elements per step, mod 4096
  check_single_cycle(w);
  // Step 4 wraps back to byte 0 and step 5 to byte 4096: positions repeat.
  CHECK_THROWS_AS(non_uniform_stride({{4096, 5}}, 16384), std::invalid_argument);
}

TEST_CASE("set-conflict arrays really share one set", "[analysis][recipes]") {
  const uint64_t sets = 32, line = 128;
  const Chase c = set_conflict(5, sets, line, 3);
  REQUIRE(c.cycle_length() == 5);
  check_single_cycle(c);
  std::set<uint64_t> distinct_lines;
  for (uint32_t e : c.order) {
    CHECK(set_of(4ULL * e, sets, line) == 3);
    distinct_lines.insert(4ULL * e / line);
  }
  CHECK(distinct_lines.size() == 5);
  CHECK(c.stride_bytes == sets * line);
  CHECK(c.footprint_bytes == 5 * sets * line);
  // A different line size or set count would not put them in one set.
  std::set<uint64_t> other;
  for (uint32_t e : c.order) other.insert(set_of(4ULL * e, 8, 32));
  CHECK(other.size() == 1);  // 32*128 is a multiple of 8*32: still one set there...
  std::set<uint64_t> more;
  for (uint32_t e : c.order) more.insert(set_of(4ULL * e, 64, 128));
  CHECK(more.size() == 2);  // ...but with 64 sets the lines spread over two
}

TEST_CASE("multi-set conflict: k lines per listed set, interleaved or grouped", "[analysis][recipes]") {
  const std::vector<uint64_t> which{0, 5, 9};
  for (bool interleave : {true, false}) {
    const Chase c = multi_set_conflict(4, 16, 64, which, interleave, 4);
    REQUIRE(c.cycle_length() == 12);
    check_single_cycle(c);
    std::map<uint64_t, int> per_set;
    for (uint32_t e : c.order) {
      CHECK((4ULL * e) % 64 == 4);
      ++per_set[set_of(4ULL * e, 16, 64)];
    }
    CHECK(per_set == std::map<uint64_t, int>{{0, 4}, {5, 4}, {9, 4}});
    const uint64_t second = set_of(4ULL * c.order[1], 16, 64);
    CHECK(second == (interleave ? 5u : 0u));
  }
}

TEST_CASE("from_byte_offsets and invalid arguments", "[analysis][recipes]") {
  // "A B C A' X A''": words of one line stand for repeated visits of that line.
  const Chase c = from_byte_offsets({0, 128, 256, 4, 384, 8});
  CHECK(c.start == 0);
  CHECK(c.footprint_bytes == 388);
  check_single_cycle(c);
  CHECK_THROWS_AS(from_byte_offsets({0, 128, 0}), std::invalid_argument);
  CHECK_THROWS_AS(from_byte_offsets({0, 6}), std::invalid_argument);
  CHECK_THROWS_AS(from_byte_offsets({0, 512}, 256), std::invalid_argument);
  CHECK_THROWS_AS(constant_stride(4096, 6), std::invalid_argument);
  CHECK_THROWS_AS(constant_stride(0, 4), std::invalid_argument);
  CHECK_THROWS_AS(random_lines(4096, 0), std::invalid_argument);
  CHECK_THROWS_AS(random_lines(64, 128), std::invalid_argument);
  CHECK_THROWS_AS(set_conflict(4, 16, 64, 16), std::invalid_argument);
  try {
    constant_stride(4096, 6);
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()).find("stride_bytes = 6") != std::string::npos);
  }
}
