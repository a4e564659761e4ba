// The latency spectrum on the simulated GPU, through the memtopo executable: on every shipped
// device the levels of its description come back from one chase (the L1 hit, the L2 near and
// far, an L1 TLB miss, DRAM near and far), named and in order, within 5 %; also with noise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

const char* const kProbe = "global-throughput/latency-spectrum";

struct Expected {
  std::string name;
  double cycles;
};

double number(const toml::table& t, const char* element, const char* key) {
  const auto v = t[element][key].value<double>();
  INFO(element << "." << key);
  REQUIRE(v);
  return *v;
}

// The levels a .ca chase meets on the described device (docs/simulator.md, "Latency model"):
// L1 and L2 hits, L2 hits with an L1 TLB miss, DRAM; near and far where the L2 has two
// partitions, a far load adding the far partition's extra.
std::vector<Expected> expected_levels(const toml::table& dev) {
  const double l1 = number(dev, "l1d", "latency_cycles"), l2 = number(dev, "l2", "latency_cycles");
  const double tlb = number(dev, "tlb", "l1_miss_penalty_cycles"), dram = number(dev, "dram", "latency_cycles");
  std::vector<Expected> out = {{"l1", l1}};
  if (dev["l2"]["partitions"].value_or(int64_t(1)) > 1) {
    const double far = number(dev, "l2", "far_latency_cycles") - l2;
    out.insert(out.end(), {{"l2_near", l2}, {"l2_far", l2 + far}, {"tlb_miss_near", l2 + tlb},
                           {"tlb_miss_far", l2 + far + tlb}, {"dram_near", dram}, {"dram_far", dram + far}});
  } else {
    out.insert(out.end(), {{"l2", l2}, {"tlb_miss", l2 + tlb}, {"dram", dram}});
  }
  std::sort(out.begin(), out.end(), [](const Expected& a, const Expected& b) { return a.cycles < b.cycles; });
  return out;
}

template <class T>
std::vector<T> array(const toml::table& t, const char* key) {
  std::vector<T> out;
  const toml::array* a = t["spectrum"][key].as_array();
  INFO("spectrum." << key);
  REQUIRE(a);
  for (const auto& x : *a) out.push_back(*x.value<T>());
  return out;
}

void compare(const toml::table& dev, const toml::table& got) {
  CHECK(got["probes"][kProbe]["status"].value<std::string>() == "ok");
  const std::vector<Expected> want = expected_levels(dev);
  const auto names = array<std::string>(got, "level_names");
  const auto latency = array<double>(got, "level_latencies_cycles");
  const auto shares = array<double>(got, "level_shares");
  REQUIRE(names.size() == want.size());
  REQUIRE(latency.size() == want.size());
  REQUIRE(shares.size() == want.size());
  double total = got["spectrum"]["outlier_share"].value_or(-1.0);
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("level " << i << ": " << want[i].name << ", " << want[i].cycles << " cycles");
    CHECK(names[i] == want[i].name);
    CHECK(latency[i] == Approx(want[i].cycles).epsilon(0.05));
    CHECK(shares[i] > 0.02);
    total += shares[i];
  }
  CHECK(total == Approx(1.0).margin(1e-6));
  // The flat keys agree with the arrays, and the TLB penalty comes out of the L2 hits.
  CHECK(got["spectrum"]["l1_latency_cycles"].value_or(0.0) == Approx(want.front().cycles).epsilon(0.05));
  CHECK(got["spectrum"]["dram_latency_cycles"].value_or(0.0) == Approx(number(dev, "dram", "latency_cycles")).epsilon(0.05));
  CHECK(got["spectrum"]["tlb_miss_penalty_cycles"].value_or(0.0) ==
        Approx(number(dev, "tlb", "l1_miss_penalty_cycles")).epsilon(0.1));
  // The hot set is two loads in five; an L1 that keeps most of it shows that share.
  CHECK(shares[0] > 0.25);
  CHECK(shares[0] < 0.41);
  CHECK(got["spectrum"]["timing_cost_cycles"].value_or(-1.0) ==
        Approx(number(dev, "sim", "timing_overhead_cycles")).margin(1.5));
}

}  // namespace

TEST_CASE("spectrum: the levels of every shipped simulated device come back", "[spectrum][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "spectrum-" + name, kProbe);
  compare(toml::parse_file(probetest::device_file(name).string()), got);
  // The far keys exist exactly where the L2 has a far partition.
  const toml::table dev = toml::parse_file(probetest::device_file(name).string());
  const bool far = dev["l2"]["partitions"].value_or(int64_t(1)) > 1;
  CHECK(bool(got["spectrum"]["l2_far_latency_cycles"].value<double>()) == far);
  CHECK(bool(got["spectrum"]["dram_far_latency_cycles"].value<double>()) == far);
  CHECK(got["spectrum"]["loads"].value_or(int64_t(0)) == 5 * 512);
}

TEST_CASE("spectrum: the levels come back with measurement noise on", "[spectrum][sim][noise]") {
  // Two cycles of jitter and one load in 1000 interrupted by 2000 cycles: the interrupted
  // loads are outliers, not a level.
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev = probetest::write_variant(name, "spectrum-noisy", [](toml::table& t) { probetest::add_noise(t, 11); });
  const toml::table got = probetest::run_memtopo(dev, "spectrum-noisy-" + name, kProbe);
  compare(toml::parse_file(probetest::device_file(name).string()), got);
  CHECK(got["spectrum"]["outlier_share"].value_or(1.0) < 0.01);
}

TEST_CASE("spectrum: sized from the measured L1 and TLB, the levels come back", "[spectrum][sim]") {
  // With tlb/levels and the L1 probes run first, the sets follow their keys (`uses`): the TLB
  // set cycles through the L1 TLB's entries and a quarter (at least 4) more pages.
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(
      probetest::device_file(name), "spectrum-measured-" + name,
      std::string("tlb/levels,data-cache/l1d-size,data-cache/l1d-line,") + kProbe);
  const toml::table dev = toml::parse_file(probetest::device_file(name).string());
  compare(dev, got);
  const int64_t entries = got["tlb"]["l1_entries"].value_or(int64_t(0));
  CHECK(entries == dev["tlb"]["l1_entries"].value_or(int64_t(-1)));
  const int64_t pages = entries + std::max<int64_t>(entries / 4, 4);
  const auto note = got["provenance"]["spectrum"]["level_names"]["note"].value<std::string>();
  REQUIRE(note);
  CHECK(note->find("1 of " + std::to_string(pages) + " pages") != std::string::npos);
}
