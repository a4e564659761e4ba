// Linear algebra over GF(2) for set-index functions (memtopo/analysis/gf2.hpp).
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <random>
#include <vector>

#include "memtopo/analysis.hpp"

namespace an = memtopo::analysis;

namespace {

uint32_t index_of(uint64_t addr, const std::vector<uint64_t>& masks) {
  uint32_t s = 0;
  for (size_t i = 0; i < masks.size(); ++i) s |= uint32_t(std::popcount(addr & masks[i]) & 1) << i;
  return s;
}

// Differences of line pairs that share a set under `set_of`, within [lo, hi) address bits.
template <class F>
std::vector<uint64_t> congruent_differences(F set_of, int lo, int hi, size_t pairs, uint32_t seed) {
  std::mt19937_64 rng(seed);
  const uint64_t span = (uint64_t(1) << hi) - (uint64_t(1) << lo);
  std::vector<uint64_t> out;
  while (out.size() < pairs) {
    const uint64_t x = rng() & span, y = rng() & span;
    if (x != y && set_of(x) == set_of(y)) out.push_back(x ^ y);
  }
  return out;
}

}  // namespace

TEST_CASE("gf2: a basis keeps one row per leading bit and knows its span", "[analysis][gf2]") {
  an::Gf2Basis b;
  CHECK(b.add(0b1100));
  CHECK(b.add(0b0110));
  CHECK_FALSE(b.add(0b1010));  // the sum of the first two
  CHECK(b.rank() == 2);
  CHECK(b.contains(0b1010));
  CHECK_FALSE(b.contains(0b0001));
  for (uint64_t r : b.rows())
    for (uint64_t o : b.rows())
      if (r != o) CHECK((o & std::bit_floor(r)) == 0);
  CHECK(an::xor_text(0) == "0");
  CHECK(an::xor_text((uint64_t(1) << 7) | (uint64_t(1) << 12)) == "7^12");
}

TEST_CASE("gf2: the parities constant on congruent pairs are the XOR index function", "[analysis][gf2]") {
  // Five index bits, each an XOR of two to four address bits among 7..22.
  const std::vector<uint64_t> truth = {(1u << 7) | (1u << 12) | (1u << 19), (1u << 8) | (1u << 13),
                                       (1u << 9) | (1u << 14) | (1u << 20) | (1u << 21), (1u << 10) | (1u << 15),
                                       (1u << 11) | (1u << 16) | (1u << 22)};
  const uint64_t domain = ((uint64_t(1) << 23) - 1) & ~((uint64_t(1) << 7) - 1);
  const auto diffs = congruent_differences([&](uint64_t a) { return index_of(a, truth); }, 7, 23, 60, 3);
  const auto found = an::constant_parities(diffs, domain);
  REQUIRE(found.size() == truth.size());
  an::Gf2Basis span;
  for (uint64_t m : found) span.add(m);
  for (uint64_t m : truth) CHECK(span.contains(m));
  CHECK(an::difference_rank(diffs, domain) == 16 - 5);
  // Too few pairs leave parities that are not the function's: more of them than index bits.
  const auto few = an::constant_parities(std::vector<uint64_t>(diffs.begin(), diffs.begin() + 4), domain);
  CHECK(few.size() > truth.size());
}

TEST_CASE("gf2: a modulo index by a non-power of two leaves no parity", "[analysis][gf2]") {
  const uint64_t domain = ((uint64_t(1) << 23) - 1) & ~((uint64_t(1) << 7) - 1);
  const auto diffs = congruent_differences([](uint64_t a) { return (a >> 7) % 482; }, 7, 23, 200, 5);
  CHECK(an::constant_parities(diffs, domain).size() <= 1);  // 482 = 2 x 241: at most the low bit
}
