// The L2 slice map on the simulated GPU (issue 54, item 2): on a device with a known map
// (devices/hashed-slices.toml) the probe gives back every SM's class, the line granule and the
// cycles across classes, also with measurement noise on; runs agree, and another map gives
// another fingerprint. Without a slice term the probe says so instead of reporting noise.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

using probetest::ints;

const char* const kProbe = "cache-sharing/l2-slice-map";

std::string slice_device(const std::string& tag, const std::vector<int64_t>& classes, bool noisy) {
  return probetest::write_variant_of(probetest::test_device_file("hashed-slices.toml"), tag, [&](toml::table& t) {
    if (!classes.empty()) {
      toml::array a;
      for (int64_t c : classes) a.push_back(c);
      t["sim"]["l2"].as_table()->insert_or_assign("slice_class_of_sm", a);
    }
    if (noisy) probetest::add_noise(t, 31);
  });
}

// The classes the description sets, renumbered so that SM 0's is 0 (the probe's convention).
std::vector<int64_t> canonical(std::vector<int64_t> c) {
  const int64_t first = c.empty() ? 0 : c[0];
  for (int64_t& x : c) x ^= first;
  return c;
}

std::vector<double> doubles(const toml::node_view<const toml::node>& v) {
  std::vector<double> out;
  if (const toml::array* a = v.as_array())
    for (const auto& e : *a) out.push_back(e.value_or(-1.0));
  return out;
}

std::vector<int64_t> described_classes(const std::string& dev) {
  const toml::table t = toml::parse_file(dev);
  return canonical(ints(t["sim"]["l2"]["slice_class_of_sm"]));
}

}  // namespace

TEST_CASE("the L2 slice map of a simulated device comes back exactly, with noise too", "[sharing][sim][slices]") {
  const bool noisy = GENERATE(false, true);
  INFO((noisy ? "noisy" : "quiet"));
  const std::string tag = std::string("slices-") + (noisy ? "noisy" : "quiet");
  const std::string dev = slice_device(tag, {}, noisy);
  const toml::table got = probetest::run_memtopo(dev, tag, kProbe);
  REQUIRE(got["probes"][kProbe]["status"].value<std::string>() == "ok");
  const auto l2 = got["l2"];
  const std::vector<int64_t> want = described_classes(dev);
  CHECK(ints(l2["slice_class_of_sm"]) == want);
  const int64_t ones = std::count(want.begin(), want.end(), 1);
  CHECK(ints(l2["slice_class_sm_counts"]) == std::vector<int64_t>{int64_t(want.size()) - ones, ones});
  CHECK(l2["slice_line_granule_bytes"].value<int64_t>() == 256);
  CHECK(got["provenance"]["l2"]["slice_line_granule_bytes"]["bound"].value<std::string>() == "exact");
  // The description's 28 cycles across classes; noise of two cycles either way moves the
  // medians by less than two.
  CHECK(std::fabs(l2["slice_class_gap_cycles"].value_or(0.0) - 28) <= (noisy ? 2.0 : 0.01));
  CHECK(l2["slice_factor_variance_fraction"].value_or(0.0) >= (noisy ? 0.8 : 0.999));
  // Per SM: the same-class hit is the near hit, the other class's 28 cycles more.
  const toml::array* same = l2["slice_same_class_hit_latency_cycles"].as_array();
  const toml::array* other = l2["slice_other_class_hit_latency_cycles"].as_array();
  REQUIRE(same);
  REQUIRE(other);
  REQUIRE(same->size() == want.size());
  for (size_t s = 0; s < want.size(); ++s)
    CHECK(std::fabs(other->get(s)->value_or(0.0) - same->get(s)->value_or(0.0) - 28) <= (noisy ? 3.0 : 0.01));
  // Half the lines of either class: the mask's parity splits the 256 B units evenly.
  const toml::array* fractions = l2["slice_line_class_fractions"].as_array();
  REQUIRE(fractions);
  CHECK(std::fabs(fractions->get(0)->value_or(0.0) - 0.5) < 0.05);
}

TEST_CASE("the slice map's fingerprint: equal across runs, different for another map", "[sharing][sim][slices]") {
  const std::string dev = slice_device("slices-fp", {}, false);
  const toml::table a = probetest::run_memtopo(dev, "slices-fp-a", kProbe);
  const toml::table b = probetest::run_memtopo(dev, "slices-fp-b", kProbe);
  const auto fa = a["l2"]["slice_map_fingerprint"].value<std::string>();
  REQUIRE(fa);
  CHECK(fa == b["l2"]["slice_map_fingerprint"].value<std::string>());
  // A simulated run is deterministic: the same cycles to the last digit.
  CHECK(doubles(a["l2"]["slice_same_class_hit_latency_cycles"]) == doubles(b["l2"]["slice_same_class_hit_latency_cycles"]));
  // SMs 4 and 5 change class: another map, another fingerprint, and the new map comes back.
  const std::vector<int64_t> moved{0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0};
  const std::string other = slice_device("slices-fp-moved", moved, false);
  const toml::table c = probetest::run_memtopo(other, "slices-fp-c", kProbe);
  CHECK(ints(c["l2"]["slice_class_of_sm"]) == moved);
  const auto fc = c["l2"]["slice_map_fingerprint"].value<std::string>();
  REQUIRE(fc);
  CHECK(*fc != *fa);
}

TEST_CASE("without a slice term the slice map is not determinable, with the reason", "[sharing][sim][slices]") {
  // The same device without slice_ keys: the reads are an SM term plus a line term.
  const std::string dev = probetest::write_variant_of(probetest::test_device_file("hashed-slices.toml"), "slices-none",
                                                      [](toml::table& t) {
                                                        toml::table* l2 = t["sim"]["l2"].as_table();
                                                        for (const char* k : {"slice_class_of_sm", "slice_granule_bytes",
                                                                              "slice_line_mask", "slice_cycles"})
                                                          l2->erase(k);
                                                      });
  const toml::table got = probetest::run_memtopo(dev, "slices-none", kProbe);
  CHECK(got["probes"][kProbe]["status"].value<std::string>() == "not_determinable");
  CHECK_FALSE(got["l2"]["slice_class_of_sm"]);
  // hopper-like keeps far lines far: the only factor is the partition map, which is no slice map.
  const toml::table hopper = probetest::run_memtopo(probetest::device_file("hopper-like.toml"), "slices-hopper",
                                                    std::string(kProbe) + ",cache-sharing/l2-partitions");
  CHECK(hopper["probes"][kProbe]["status"].value<std::string>() == "not_determinable");
  CHECK_FALSE(hopper["l2"]["slice_map_fingerprint"]);
}

namespace {

// `memtopo <args>`, its standard output as text.
std::string memtopo_output(const std::string& args, const std::string& tag) {
  const std::filesystem::path out = probetest::scratch(tag + ".out");
  const std::string cmd = std::string(MEMTOPO_BINARY_DIR) + "/bin/memtopo " + args + " >" + out.string() + " 2>" +
                          probetest::scratch(tag + ".err").string();
  INFO(cmd);
  (void)std::system(cmd.c_str());
  std::ifstream in(out);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("memtopo fleet: a moved slice map is configuration, shown and never flagged", "[sharing][sim][slices][fleet]") {
  // Healthy GPUs of one model differ in it (floor sweeping moves the GPCs: two H100s and an
  // H200 shared one map, a third H100 had another; docs/results/log/h100.md).
  const std::string same = slice_device("slices-fleet", {}, false);
  const std::string moved =
      slice_device("slices-fleet-moved", {0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0}, false);
  const std::filesystem::path dir = probetest::scratch("slices-fleet-out");
  std::filesystem::remove_all(dir);
  const std::string run = "run -q --only " + std::string(kProbe) + " -o " + dir.string() + "/ --device ";
  memtopo_output(run + "sim:" + same + ",sim:" + same + ",sim:" + moved, "slices-fleet-run");
  const std::string odd = memtopo_output("fleet --format json " + dir.string(), "slices-fleet-odd");
  INFO(odd);
  CHECK(odd.find("\"flagged\": 0") != std::string::npos);
  // Under the group's configuration, each map with the GPUs that have it.
  const size_t config = odd.find("\"configuration\"");
  REQUIRE(config != std::string::npos);
  CHECK(odd.find("\"key\": \"l2.slice_map_fingerprint\"", config) != std::string::npos);
}
