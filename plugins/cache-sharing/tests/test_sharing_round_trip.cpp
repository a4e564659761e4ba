// The cache-sharing probes on the simulated GPU: on every shipped device the storages of the
// texture and read-only paths ([sim.texture], [sim.readonly] storage) and the instances per SM
// of each cache (partitions_per_sm, by warp) come back, also with measurement noise on.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace fs = std::filesystem;

namespace {

void compare_storage(const toml::table& ref, const toml::table& got) {
  const std::string tex = ref["sim"]["texture"]["storage"].value_or(std::string()),
                    ro = ref["sim"]["readonly"]["storage"].value_or(std::string());
  CHECK(got["texture"]["storage"].value<std::string>() == tex);
  CHECK(got["readonly"]["storage"].value<std::string>() == ro);
  CHECK(got["constant_l1"]["storage"].value<std::string>() == "own");  // the simulator's is always its own
  // Instances: those of the storage each path uses.
  const int64_t l1 = ref["sim"]["l1d"]["partitions_per_sm"].value_or<int64_t>(1);
  const int64_t t = tex == "l1d" ? l1 : ref["sim"]["texture"]["partitions_per_sm"].value_or<int64_t>(1);
  const int64_t r = ro == "l1d" ? l1 : ro == "texture" ? t : ref["sim"]["readonly"]["partitions_per_sm"].value_or<int64_t>(1);
  CHECK(got["l1d"]["instances_per_sm"].value<int64_t>() == l1);
  CHECK(got["texture"]["instances_per_sm"].value<int64_t>() == t);
  CHECK(got["readonly"]["instances_per_sm"].value<int64_t>() == r);
  const toml::array* warps = got["texture"]["instance_of_warp"].as_array();
  REQUIRE(warps);
  CHECK(warps->size() == 8);
}

}  // namespace

TEST_CASE("cache-sharing storage and instances recover every shipped simulated device", "[sharing][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const toml::table got = probetest::run_memtopo(probetest::device_file(name), "storage-" + name,
                                                   "cache-sharing/storage,cache-sharing/instances");
  CHECK(got["probes"]["cache-sharing/storage"]["status"].value<std::string>() == "ok");
  CHECK(got["probes"]["cache-sharing/instances"]["status"].value<std::string>() == "ok");
  compare_storage(toml::parse_file(probetest::device_file(name).string()), got);
}

TEST_CASE("cache-sharing storage and instances with measurement noise on", "[sharing][sim][noise]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  INFO(name);
  const std::string dev =
      probetest::write_variant(name, "storage-noisy", [](toml::table& t) { probetest::add_noise(t, 13); });
  const toml::table got = probetest::run_memtopo(dev, "storage-noisy-" + name,
                                                   "cache-sharing/storage,cache-sharing/instances");
  compare_storage(toml::parse_file(probetest::device_file(name).string()), got);
}

TEST_CASE("cache-sharing storage on a device without constant caches", "[sharing][sim]") {
  // Constant loads go to the L2: no constant L1 within the 64 KiB the constant path reaches,
  // whose size is then that bound. The constant path's own fill once asked four times it, more
  // than the path reaches, and the probe failed with the texture and read-only storages.
  const std::string dev = probetest::write_variant("pascal-like.toml", "storage-no-constant", [](toml::table& t) {
    t.erase("constant_l1");
    t.erase("constant_l15");
  });
  const toml::table got = probetest::run_memtopo(dev, "storage-no-constant", "cache-sharing/storage");
  CHECK(got["probes"]["cache-sharing/storage"]["status"].value<std::string>() == "ok");
  CHECK(got["texture"]["storage"].value<std::string>() == "l1d");
  CHECK(got["readonly"]["storage"].value<std::string>() == "l1d");
  CHECK_FALSE(got["constant_l1"]["storage"]);
}

namespace {

using probetest::ints;

// The partition map the description implies: [sim.l2] near_partition, or SM s near partition
// s x partitions / sm_count; the address chunk of interleave_bytes, [sim.l2] interleave (default
// alternating). The partitions, the SMs near each and the map are one decision: they agree.
void compare_partitions(const toml::table& ref, const toml::table& got) {
  const int64_t sms = ref["device"]["sm_count"].value_or(int64_t(0));
  const int64_t parts = ref["l2"]["partitions"].value_or(int64_t(1));
  std::vector<int64_t> want, counts(size_t(parts), 0);
  for (int64_t s = 0; s < sms; ++s) {
    want.push_back(s * parts / sms);
    ++counts[size_t(s * parts / sms)];
  }
  const toml::node_view<const toml::node> l2 = got["l2"];
  CHECK(ints(l2["near_partition_of_sm"]) == want);
  CHECK(l2["partitions"].value<int64_t>() == parts);
  CHECK(ints(l2["partition_sm_counts"]) == counts);
  if (parts >= 2) {
    CHECK(l2["partition_granule_bytes"].value<int64_t>() == ref["sim"]["l2"]["interleave_bytes"].value_or(int64_t(4096)));
    CHECK(l2["partition_interleave"].value<std::string>() ==
          ref["sim"]["l2"]["interleave"].value_or(std::string("alternating")));
  } else {
    CHECK(!l2["partition_granule_bytes"]);
  }
}

}  // namespace

TEST_CASE("the L2 partition map of every shipped simulated device, with noise and with near copies", "[sharing][sim]") {
  const std::string name = GENERATE("hopper-like.toml", "kepler-like.toml", "pascal-like.toml");
  const bool noisy = GENERATE(false, true);
  INFO(name << (noisy ? ", noisy" : ""));
  const std::string dev = probetest::write_variant(name, noisy ? "partitions-noisy" : "partitions", [&](toml::table& t) {
    if (noisy) probetest::add_noise(t, 17);
  });
  const toml::table ref = toml::parse_file(probetest::device_file(name).string());
  const std::string probes = "cache-sharing/l2-partitions,cache-sharing/l2-far-copies";
  const toml::table got = probetest::run_memtopo(dev, std::string(noisy ? "partitions-noisy-" : "partitions-") + name, probes);
  CHECK(got["probes"]["cache-sharing/l2-partitions"]["status"].value<std::string>() == "ok");
  compare_partitions(ref, got);
  const bool two = ref["l2"]["partitions"].value_or(int64_t(1)) == 2;
  CHECK(got["probes"]["cache-sharing/l2-far-copies"]["status"].value<std::string>() == (two ? "ok" : "skipped"));
  if (two) CHECK(got["l2"]["far_copy_bytes"].value<int64_t>() == 0);  // no copies: a far line stays far
  // The H100 keeps a copy of a far line near the SM that read it (far_copies_near): the lines
  // SM 0 read are then near for its side, homed ones as before for the other.
  const std::string copies = probetest::write_variant(name, "partitions-copies", [](toml::table& t) {
    t["sim"].as_table()->insert_or_assign("l2", toml::table{{"far_copies_near", true}});
  });
  const toml::table with_copies = probetest::run_memtopo(copies, "partitions-copies-" + name, probes);
  compare_partitions(ref, with_copies);
  // The simulated copy holds the sector read (the L2's fetch granularity).
  if (two) CHECK(with_copies["l2"]["far_copy_bytes"].value<int64_t>() == ref["l2"]["fetch_granularity_bytes"].value<int64_t>());
}

namespace {

// plugins/cache-sharing/tests/devices/three-partitions.toml, changed by `edit`, written to scratch().
template <class Edit>
std::string three_partitions(const std::string& tag, Edit edit) {
  toml::table t = toml::parse_file(probetest::test_device_file("three-partitions.toml").string());
  edit(t);
  const fs::path p = probetest::scratch(tag + "-three-partitions.toml");
  std::ofstream(p) << t;
  return p.string();
}

std::string log_of(const std::string& tag) {
  std::ifstream in(probetest::scratch(tag + ".log"));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

// Issue 49, 7.4: one far latency for two far partitions made the latency levels count two
// partitions, and SM 0's near chunks, one in three, read as a hashed home. The groups of SMs
// near each partition count three, and one near chunk every three chunks is alternating.
TEST_CASE("an L2 of three partitions: three groups of SMs, homes alternating with period 3, hashed ones hashed",
          "[sharing][sim][partitions]") {
  const std::string interleave = GENERATE("alternating", "hashed");
  const bool noisy = GENERATE(false, true);
  INFO(interleave << (noisy ? ", noisy" : ""));
  const std::string tag = "three-" + interleave + (noisy ? "-noisy" : "");
  const std::string dev = three_partitions(tag, [&](toml::table& t) {
    t["sim"]["l2"].as_table()->insert_or_assign("interleave", interleave);
    if (noisy) probetest::add_noise(t, 29);
  });
  const toml::table got = probetest::run_memtopo(dev, tag, "cache-sharing/l2-partitions,l2.partitions,l2.far_latency_cycles");
  CHECK(got["probes"]["cache-sharing/l2-partitions"]["status"].value<std::string>() == "ok");
  compare_partitions(toml::parse_file(dev), got);
  // Two hit levels (near, and both far partitions at one latency) are no partition count.
  const double far = got["l2"]["far_latency_cycles"].value_or(0.0);
  CHECK(std::fabs(far - 390) <= 0.03 * 390);
  CHECK(log_of(tag).find("contradiction") == std::string::npos);
}

// Issue 49, 3: on an L2 that copies far lines near the reading SM (the H100), one SM's warm
// footprints show one hit level, and `--only l2.partitions` read 1 where the default run read
// 2 (from the footprint sweep, which --only does not run), beside 2 groups of SMs.
TEST_CASE("run --only l2.partitions on an L2 that copies far lines near: the groups of SMs, as in a default run",
          "[sharing][sim][partitions]") {
  const std::string name = "hopper-like.toml";
  const std::string dev = probetest::write_variant(name, "partitions-only-copies", [](toml::table& t) {
    t["sim"]["l2"].as_table()->insert_or_assign("far_copies_near", true);
  });
  const toml::table got = probetest::run_memtopo(dev, "partitions-only-copies", "l2.partitions");
  CHECK(got["l2"]["partitions"].value<int64_t>() == 2);
  CHECK(got["l2"]["partition_sm_counts"].as_array()->size() == 2);
  const toml::table far = probetest::run_memtopo(dev, "partitions-only-copies-far", "l2.far_latency_cycles");
  CHECK(std::fabs(far["l2"]["far_latency_cycles"].value_or(0.0) - 420) <= 0.03 * 420);
  CHECK(log_of("partitions-only-copies").find("contradiction") == std::string::npos);
}

// SMs near the lines SM 0 loaded miss the L1.5 faster than the rest (194 and 320 cycles against
// a 94-cycle hit): sharing is judged half way to the fastest miss, not to the slowest.
TEST_CASE("constant L1.5 groups in front of an L2 of near and far partitions", "[sharing][sim]") {
  const toml::table got = probetest::run_memtopo(probetest::test_device_file("l15-near-far.toml").string(),
                                                 "l15-near-far", "cache-sharing/constant-l15-groups");
  CHECK(got["constant_l15"]["sm_group_count"].value<int64_t>() == 3);
  const toml::array* counts = got["constant_l15"]["group_sm_counts"].as_array();
  REQUIRE(counts);
  REQUIRE(counts->size() == 3);
  CHECK((*counts)[0].value<int64_t>() == 4);
  CHECK((*counts)[1].value<int64_t>() == 2);
  CHECK((*counts)[2].value<int64_t>() == 5);
}
