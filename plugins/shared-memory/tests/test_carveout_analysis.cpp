// The carveout levels found in a sweep of modelled L1 sizes, and the table derived from them.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "shared-memory/carveout_analysis.hpp"

namespace {

constexpr double KiB = 1024;

// L1 left at p% when a carveout takes the smallest of `sizes` holding p% of `max_shared`,
// from one array of `total`; `wobble` alternates in sign, a stand-in for sampling error.
std::vector<shmem::CarveoutPoint> sweep(const std::vector<double>& sizes, double max_shared, double total,
                                        double wobble, double se) {
  std::vector<shmem::CarveoutPoint> s;
  for (int p = 0; p <= 100; ++p) {
    const double asked = max_shared * p / 100;
    double shared = sizes.back();
    for (double z : sizes)
      if (z >= asked) {
        shared = z;
        break;
      }
    s.push_back({p, total - shared + (p % 2 ? wobble : -wobble), se});
  }
  return s;
}

}  // namespace

TEST_CASE("carveout: the levels of a Hopper-like sweep start at the first percent of each size", "[shared][carveout]") {
  const std::vector<double> sizes{0, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB, 100 * KiB,
                                  132 * KiB, 164 * KiB, 196 * KiB, 228 * KiB};
  const auto levels = shmem::group_levels(sweep(sizes, 228 * KiB, 256 * KiB, 900, 700));
  REQUIRE(levels.size() == 10);
  const std::vector<int> first{0, 1, 4, 8, 15, 29, 44, 58, 72, 86};
  for (size_t i = 0; i < levels.size(); ++i) {
    INFO("level " << i);
    CHECK(levels[i].first_percent == first[i]);
    CHECK(std::fabs(levels[i].l1d_bytes - (256 * KiB - sizes[i])) < 1000);
  }
  CHECK(levels.back().last_percent == 100);
  // Each level measured again to a fifth of a KiB, rounded, anchored at the largest carveout's
  // 228 KiB, less 1 KiB reserved per block.
  const auto refined = shmem::group_levels(sweep(sizes, 228 * KiB, 256 * KiB, 200, 100));
  const auto rows = shmem::carveout_table(refined, 228 * 1024, 1024, 227 * 1024);
  REQUIRE(rows.size() == 10);
  for (size_t i = 0; i < rows.size(); ++i) {
    INFO("row " << i);
    CHECK(rows[i].l1d_bytes == int64_t(256 * KiB - sizes[i]));
    CHECK(rows[i].sm_shared_bytes == int64_t(sizes[i]));
    CHECK(rows[i].block_shared_bytes == std::max<int64_t>(0, int64_t(sizes[i]) - 1024));
  }
}

TEST_CASE("carveout: sampling error alone starts no level, one KiB apart is no level", "[shared][carveout]") {
  // Constant L1 (no unified array) with errors of 2 standard errors: one level.
  const auto flat = shmem::group_levels(sweep({96 * KiB}, 96 * KiB, 120 * KiB, 1400, 700));
  REQUIRE(flat.size() == 1);
  CHECK(flat[0].first_percent == 0);
  CHECK(flat[0].last_percent == 100);
  // Levels closer than min_step_bytes stay one, however precise.
  const auto close = shmem::group_levels(sweep({0, 512}, 1024, 64 * KiB, 0, 1));
  CHECK(close.size() == 1);
  // Levels the sweep told apart but that round to the same KiB merge in the table.
  std::vector<shmem::CarveoutLevel> near{{0, 10, 48 * KiB + 100, 50}, {11, 100, 48 * KiB - 300, 50}};
  const auto rows = shmem::carveout_table(near, 49152, 0, 49152);
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].last_percent == 100);
  CHECK(rows[0].sm_shared_bytes == 49152);
}

TEST_CASE("carveout: a level's long run over-fills every set and reaches its error", "[shared][carveout]") {
  const auto r = shmem::refine_run(256 * KiB, 128, 128, uint64_t(1) << 23);
  CHECK(r.footprint_bytes == 512 * 1024);
  // 0.5 x footprint / sqrt(loads) <= 128 B
  CHECK(0.5 * double(r.footprint_bytes) / std::sqrt(double(r.loads)) <= 128.0);
  CHECK(shmem::refine_run(1 * KiB, 128, 128, 1 << 23).loads == (1u << 16));       // at least 64 Ki loads
  CHECK(shmem::refine_run(64 * 1024 * KiB, 128, 128, 1 << 20).loads == (1u << 20));  // the cap holds
}

TEST_CASE("carveout: lines held short of a whole KiB round up to it, noise above stays", "[shared][carveout]") {
  // An H100's level 7 read 52.49 to 52.82 KiB over twelve runs (capacity 53 KiB): every run 53.
  for (double kib : {52.30, 52.49, 52.82, 53.0, 53.2}) {
    INFO(kib << " KiB held");
    const std::vector<shmem::CarveoutLevel> one{{0, 100, kib * KiB, 100}};
    CHECK(shmem::carveout_table(one, 0, 0, 0)[0].l1d_bytes == 53 * 1024);
  }
  const std::vector<shmem::CarveoutLevel> below{{0, 100, 52.2 * KiB, 100}};
  CHECK(shmem::carveout_table(below, 0, 0, 0)[0].l1d_bytes == 52 * 1024);
}
