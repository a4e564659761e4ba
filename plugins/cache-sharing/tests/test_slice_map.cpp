// The slice-map analysis (slice_map.cpp) on synthetic SM x line matrices shaped like the H100's
// (docs/results/log/h100.md, "L2 latency by SM and line"): an SM term, a line term, and an SM sign
// times a line sign over 256 B units, with noise.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "cache-sharing/slice_map.hpp"

using namespace cache_sharing;

namespace {

// A deterministic noise source (a linear congruential generator), uniform in [-1, 1).
struct Noise {
  uint64_t state = 12345;
  double next() {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return double(state >> 11) / double(1ull << 52) - 1.0;
  }
};

struct Synthetic {
  std::vector<int64_t> sm_class, line_class;
  std::vector<std::vector<double>> cycles;
};

// `sms` SMs, `lines` lines 128 B apart; a line's class flips with bits of its 256 B unit index,
// an SM's by pairs; `half_gap` cycles either way, noise of `noise` cycles either way.
Synthetic synthetic(size_t sms, size_t lines, double half_gap, double noise, bool per_line = false) {
  Synthetic s;
  Noise n;
  for (size_t i = 0; i < sms; ++i) s.sm_class.push_back(int64_t(((i / 2) * 7 + 3) % 5 < 2 ? 1 : 0));
  for (size_t l = 0; l < lines; ++l) {
    const uint64_t unit = per_line ? l : l / 2;
    s.line_class.push_back(int64_t(__builtin_parityll(unit & 0x35)));
  }
  for (size_t i = 0; i < sms; ++i) {
    std::vector<double> row;
    for (size_t l = 0; l < lines; ++l) {
      const double sign = s.sm_class[i] == s.line_class[l] ? -1 : 1;  // faster within a class
      row.push_back(280 + 3.0 * double(i % 5) + 4.0 * double(l % 7) + half_gap * sign + noise * n.next());
    }
    s.cycles.push_back(row);
  }
  return s;
}

std::vector<int64_t> canonical(std::vector<int64_t> c) {
  const int64_t first = c[0];
  for (int64_t& x : c) x ^= first;
  return c;
}

}  // namespace

TEST_CASE("the slice map: the SM and line classes, the gap and the granule of an H100-like matrix", "[sharing][slices]") {
  const Synthetic s = synthetic(24, 512, 14, 6);
  const SliceMap m = slice_map(s.cycles, 128);
  REQUIRE(m.why_not.empty());
  CHECK(m.class_of_sm == canonical(s.sm_class));
  CHECK(m.class_of_sm[0] == 0);
  // Line class 0: the lines SM 0's class reads faster.
  std::vector<int64_t> lines = s.line_class;
  for (int64_t& c : lines) c ^= s.sm_class[0];
  CHECK(m.class_of_line == lines);
  CHECK(m.gap_cycles == Approx(28).margin(2));
  CHECK(m.variance_fraction > 0.8);
  CHECK(m.factor_residual_sd < m.additive_residual_sd);
  CHECK(m.granule_bytes == 256);
  CHECK(m.granule_exact);
  CHECK(m.sm_counts[0] + m.sm_counts[1] == 24);
  CHECK(m.line_counts[0] + m.line_counts[1] == 512);
  CHECK(m.sms_agreeing_fraction == 1.0);
  for (size_t i = 0; i < 24; ++i) CHECK(m.other_class_cycles[i] - m.same_class_cycles[i] == Approx(28).margin(3));
  CHECK(m.fingerprint == class_fingerprint(m.class_of_sm));
}

TEST_CASE("the slice map: a class that changes every line has a granule of at most the stride", "[sharing][slices]") {
  const SliceMap m = slice_map(synthetic(16, 256, 14, 2, true).cycles, 128);
  REQUIRE(m.why_not.empty());
  CHECK(m.granule_bytes == 128);
  CHECK_FALSE(m.granule_exact);
}

TEST_CASE("the slice map: no factor in additive or noisy matrices", "[sharing][slices]") {
  // An SM term plus a line term, exactly: nothing is left.
  const SliceMap additive = slice_map(synthetic(16, 256, 0, 0).cycles, 128);
  CHECK_FALSE(additive.why_not.empty());
  CHECK(additive.additive_residual_sd == Approx(0).margin(1e-9));
  // Noise alone: the first factor takes a small share.
  const SliceMap noise = slice_map(synthetic(16, 256, 0, 8).cycles, 128);
  CHECK_FALSE(noise.why_not.empty());
  CHECK(noise.variance_fraction < 0.3);
  // Too small a matrix.
  CHECK_FALSE(slice_map({{1.0, 2.0}}, 128).why_not.empty());
}

TEST_CASE("the slice map's fingerprint is the class vector in hex, four SMs a digit", "[sharing][slices]") {
  CHECK(class_fingerprint({0, 0, 1, 1, 1}) == "38");
  CHECK(class_fingerprint({1, 0, 0, 0, 0, 0, 0, 1}) == "81");
  CHECK(class_fingerprint({0, 0, 1, 1}) != class_fingerprint({0, 1, 0, 1}));
  CHECK(class_fingerprint({}).empty());
}
