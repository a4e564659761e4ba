// The quality bars of the shared-memory plugin on the simulated GPU: on every shipped device
// the banks, their width and a conflict's cost come back (exactly, and within 5 %), and so does
// the carveout table, also with measurement noise on.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

using probetest::ints;

void compare_shared(const toml::table& ref, const toml::table& got) {
  CHECK(got["shared"]["banks"].value<int64_t>() == ref["shared"]["banks"].value<int64_t>());
  CHECK(got["shared"]["bank_bytes"].value<int64_t>() == ref["shared"]["bank_bytes"].value<int64_t>());
  CHECK(got["shared"]["broadcast"].value<bool>() == true);
  const double conflict = ref["shared"]["conflict_cycles"].value_or(0.0);
  CHECK(std::fabs(got["shared"]["conflict_cycles"].value_or(0.0) - conflict) <= 0.05 * conflict);
  const double latency = ref["shared"]["latency_cycles"].value_or(0.0);
  CHECK(std::fabs(got["shared"]["latency_cycles"].value_or(0.0) - latency) <= 0.05 * latency);
  const toml::array* degrees = got["shared"]["latency_by_conflict_degree_cycles"].as_array();
  REQUIRE(degrees);
  REQUIRE(degrees->size() == 32);
  const double d32 = (*degrees)[31].value_or(0.0);
  CHECK(std::fabs(d32 - (latency + 31 * conflict)) <= 0.05 * (latency + 31 * conflict));
  // Vector loads: a warp's 32 x width bytes take one turn per bank row they fill.
  const int64_t row = ref["shared"]["banks"].value_or(int64_t(32)) * ref["shared"]["bank_bytes"].value_or(int64_t(4));
  const std::vector<int64_t> turns = ints(got["shared"]["wide_load_turns"]);
  const toml::array* wide = got["shared"]["wide_load_latency_cycles"].as_array();
  REQUIRE(turns.size() == 3);
  REQUIRE(wide);
  for (int64_t k = 0; k < 3; ++k) {
    const int64_t expect = std::max<int64_t>(1, 32 * (4 << k) / row);
    CHECK(turns[size_t(k)] == expect);
    const double l = (*wide)[0].value_or(0.0) + double(expect - 1) * conflict;  // over a 4-byte warp load
    CHECK(std::fabs((*wide)[size_t(k)].value_or(0.0) - l) <= 0.05 * l);
  }
}

// The table the description implies: at p % a carveout takes the smallest listed size holding
// p % of the device's shared memory, and the L1 keeps what is left of the array, at most its size.
void compare_carveout(const toml::table& ref, const toml::table& got) {
  const int64_t max_shared = ref["device"]["shared_per_sm_bytes"].value_or(int64_t(0));
  const int64_t total = ref["sim"]["l1_shared_total_bytes"].value_or(int64_t(0));
  const int64_t l1 = ref["l1d"]["size_bytes"].value_or(int64_t(0));
  const std::vector<int64_t> sizes = ints(ref["sim"]["shared_sizes_bytes"]);
  std::vector<int64_t> percent, left;
  for (int64_t p = 0; p <= 100; ++p) {
    const int64_t asked = max_shared * p / 100;
    int64_t shared = sizes.empty() ? asked : sizes.back();
    for (auto it = sizes.rbegin(); it != sizes.rend(); ++it)
      if (*it >= asked) shared = *it;
    const int64_t l1_left = total ? std::min(total - shared, l1) : l1;
    if (left.empty() || left.back() != l1_left) {
      percent.push_back(p);
      left.push_back(l1_left);
    }
  }
  CHECK(ints(got["shared"]["carveout_percent"]) == percent);
  CHECK(ints(got["shared"]["carveout_l1d_size_bytes"]) == left);
  std::vector<int64_t> sm;
  for (int64_t b : left) sm.push_back(max_shared - (b - left.back()));
  CHECK(ints(got["shared"]["carveout_sm_shared_bytes"]) == sm);
  CHECK(ints(got["shared"]["carveout_block_shared_bytes"]).size() == sm.size());
  CHECK(got["l1d"]["size_carveout_percent"].value<int64_t>() == 0);
}

}  // namespace

TEST_CASE("shared-memory probe recovers the banks of every shipped simulated device", "[shared][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "shared-" + name, "shared-memory");
  CHECK(got["probes"]["shared-memory/banks"]["status"].value<std::string>() == "ok");
  CHECK(got["probes"]["shared-memory/carveout"]["status"].value<std::string>() == "ok");
  const toml::table ref = toml::parse_file(probetest::device_file(name).string());
  compare_shared(ref, got);
  compare_carveout(ref, got);
}

TEST_CASE("shared-memory probe with measurement noise on", "[shared][sim][noise]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev =
      probetest::write_variant(name, "shared-noisy", [](toml::table& t) { probetest::add_noise(t, 9); });
  const toml::table got = probetest::run_memtopo(dev, "shared-noisy-" + name, "shared-memory");
  const toml::table ref = toml::parse_file(probetest::device_file(name).string());
  compare_shared(ref, got);
  compare_carveout(ref, got);
}

// Interruptions shorter than the fixed ceiling (devices/ beside this file): each point leaves
// out its loads above twice its median, so the banks come back where the ceiling alone kept
// the interruptions and no structure fitted.
TEST_CASE("shared-memory probe: interruptions below the ceiling", "[shared][sim][noise]") {
  const auto dev = probetest::test_device_file("short-interruptions.toml");
  const toml::table got = probetest::run_memtopo(dev, "shared-short-interruptions", "shared-memory/banks");
  CHECK(got["probes"]["shared-memory/banks"]["status"].value<std::string>() == "ok");
  compare_shared(toml::parse_file(dev.string()), got);
}

// Random device 60: about one window of 384 loads in six held no interruption, and the 10th
// percentile of all windows read the one-lane latency 4 % slow (24.96 cycles for 24).
TEST_CASE("shared-memory probe: the one-lane latency under frequent interruptions", "[shared][sim][noise]") {
  const auto dev = probetest::test_device_file("random-60.toml");
  const toml::table got = probetest::run_memtopo(dev, "shared-random-60", "shared.latency_cycles");
  const double truth = toml::parse_file(dev.string())["shared"]["latency_cycles"].value_or(0.0);
  CHECK(got["shared"]["latency_cycles"].value_or(0.0) == Approx(truth).margin(0.03 * truth));
}
