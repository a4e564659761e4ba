// Sets and ways on simulated devices unlike the shipped ones: a constant L1.5 larger than
// half of what the constant path reaches, with ways that are not a power of two.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

using probetest::run_memtopo;
using probetest::write_variant;

struct Geometry {
  int64_t sets, ways, line_bytes;
};

}  // namespace

TEST_CASE("the constant L1.5's sets and ways past half the constant reach", "[cache][sim][constant]") {
  // 64 KiB and 48 KiB: W + 1 lines two set-strides apart span twice the size, past the 95 KiB
  // that constant memory and kernel parameters reach; 12 and 20 ways are no power of two.
  const Geometry g = GENERATE(Geometry{16, 16, 256}, Geometry{16, 12, 256}, Geometry{32, 12, 128}, Geometry{16, 20, 256});
  const int64_t size = g.sets * g.ways * g.line_bytes;
  const std::string tag = "l15-geometry-" + std::to_string(g.sets) + "x" + std::to_string(g.ways);
  INFO(tag);
  const std::string dev = write_variant("hopper-like.toml", tag, [&](toml::table& t) {
    toml::table& c = *t["constant_l15"].as_table();
    c.insert_or_assign("size_bytes", size);
    c.insert_or_assign("line_bytes", g.line_bytes);
    c.insert_or_assign("sets", g.sets);
    c.insert_or_assign("ways", g.ways);
  });
  const toml::table got = run_memtopo(dev, tag, "constant");
  CHECK(got["constant_l15"]["size_bytes"].value<int64_t>() == size);
  CHECK(got["constant_l15"]["line_bytes"].value<int64_t>() == g.line_bytes);
  CHECK(got["constant_l15"]["sets"].value<int64_t>() == g.sets);
  CHECK(got["constant_l15"]["ways"].value<int64_t>() == g.ways);
  CHECK(got["constant_l15"]["set_mapping"].value<std::string>() == "modulo");
  CHECK(got["constant_l15"]["replacement_policy"].value<std::string>() == "lru");
}

TEST_CASE("a constant L1.5 whose size window reaches past the constant reach", "[cache][sim][constant]") {
  // 64 KiB of random replacement (a random device of scripts/random-devices, seed 8): the
  // footprints past the size that tell a sharp change from a gradual one would pass the
  // 95 KiB the constant path reaches; they stop there and the size stands (to the window's
  // grid of 1/64 of the size: a random victim lets a footprint a line or two past it hit).
  const std::string dev = write_variant("hopper-like.toml", "l15-random-64k", [&](toml::table& t) {
    toml::table& c = *t["constant_l15"].as_table();
    c.insert_or_assign("size_bytes", 65536);
    c.insert_or_assign("sets", 32);
    c.insert_or_assign("ways", 8);
    c.insert_or_assign("replacement_policy", "random");
  });
  const toml::table got = run_memtopo(dev, "l15-random-64k", "constant/constant_l15-size");
  CHECK(got["probes"]["constant/constant_l15-size"]["status"].value_or<std::string>("") == "ok");
  const int64_t size = got["constant_l15"]["size_bytes"].value_or<int64_t>(0);
  CHECK(size >= 65536);
  CHECK(size <= 65536 + 65536 / 64);
}

namespace {
// A constant L1.5 and the constant L1 in front of it (random devices of scripts/random-devices:
// seeds 2, 16 and 36).
struct BehindL1 {
  const char* tag;
  int64_t l15_sets, l15_ways;
  const char* l15_policy;
  int64_t l1_sets, l1_ways;
  const char* l1_policy;
};

// The hopper-like device with that L1.5 (lines of 256 B) behind that L1 (lines of 64 B).
std::string behind_l1_device(const BehindL1& d) {
  return write_variant("hopper-like.toml", d.tag, [&](toml::table& t) {
    toml::table& c = *t["constant_l15"].as_table();
    c.insert_or_assign("size_bytes", d.l15_sets * d.l15_ways * 256);
    c.insert_or_assign("sets", d.l15_sets);
    c.insert_or_assign("ways", d.l15_ways);
    c.insert_or_assign("replacement_policy", d.l15_policy);
    toml::table& l1 = *t["constant_l1"].as_table();
    l1.insert_or_assign("size_bytes", d.l1_sets * d.l1_ways * 64);
    l1.insert_or_assign("sets", d.l1_sets);
    l1.insert_or_assign("ways", d.l1_ways);
    l1.insert_or_assign("replacement_policy", d.l1_policy);
  });
}
}  // namespace

TEST_CASE("a constant L1.5 behind a constant L1", "[cache][sim][constant]") {
  // Random replacement in the L1.5: its line (a full-miss ratio between two lines, or a
  // footprint past the reach at three lines a load) comes from loads 5/4 of a line apart, its
  // size from several passes a footprint. An L1.5 four times a random L1 (the reference).
  const BehindL1 d = GENERATE(BehindL1{"l15-behind-l1-random-32x4", 32, 4, "random", 8, 4, "lru"},
                              BehindL1{"l15-behind-l1-random-8x8", 8, 8, "random", 8, 4, "lru"},
                              BehindL1{"l15-behind-l1-quarter", 16, 8, "random", 16, 8, "random"});
  INFO(d.tag);
  const int64_t size = d.l15_sets * d.l15_ways * 256;
  const std::string dev = behind_l1_device(d);
  const toml::table got = run_memtopo(dev, d.tag, "constant");
  const int64_t measured = got["constant_l15"]["size_bytes"].value_or<int64_t>(0);
  CHECK(measured >= size);
  CHECK(measured <= size + 256);
  CHECK(got["constant_l15"]["line_bytes"].value<int64_t>() == 256);
  CHECK(got["provenance"]["constant_l15"]["line_bytes"]["bound"].value_or<std::string>("") == "exact");
  if (const auto sets = got["constant_l15"]["sets"].value<int64_t>()) CHECK(*sets == d.l15_sets);
  if (const auto policy = got["constant_l15"]["replacement_policy"].value<std::string>()) CHECK(*policy == d.l15_policy);
}

TEST_CASE("an LRU constant L1.5 behind a constant L1 that replaces at random", "[cache][sim][constant]") {
  // Random device 34: the L1 serves some loads of the L1.5's cyclic overflow (15 of 16 miss),
  // and a set filled in order loses its first line: LRU, at less confidence, not "non_uniform".
  const toml::table got = run_memtopo(probetest::test_device_file("random-34.toml"), "l15-behind-random-l1",
                                      "constant/constant_l15-policy");
  CHECK(got["constant_l15"]["replacement_policy"].value<std::string>() == "lru");
  const double confidence = got["provenance"]["constant_l15"]["replacement_policy"]["confidence"].value_or(1.0);
  CHECK(confidence < 0.8);
}

TEST_CASE("the constant L1.5's sets and policy behind an L1 that holds the scanned lines", "[cache][sim][constant]") {
  // Lines one L1.5 set apart share one L1 set too, and an L1 of more ways than the L1.5 held
  // them all: the plateau read its 8 ways (random devices 5, 27); a random L1 hid the L1.5's
  // misses (random device 50). The scans add lines of that L1 set in other L1.5 sets.
  const BehindL1 d = GENERATE(BehindL1{"l15-fill-lru-16x4", 16, 4, "lru", 4, 8, "lru"},
                              BehindL1{"l15-fill-random-32x4", 32, 4, "random", 4, 8, "lru"},
                              BehindL1{"l15-fill-behind-random-32x4", 32, 4, "lru", 8, 8, "random"});
  INFO(d.tag);
  const std::string dev = behind_l1_device(d);
  const toml::table got = run_memtopo(dev, d.tag, "constant");
  CHECK(got["constant_l1"]["ways"].value<int64_t>() == d.l1_ways);
  CHECK(got["constant_l15"]["sets"].value<int64_t>() == d.l15_sets);
  CHECK(got["constant_l15"]["ways"].value<int64_t>() == d.l15_ways);
  CHECK(got["constant_l15"]["set_mapping"].value<std::string>() == "modulo");
  CHECK(got["constant_l15"]["replacement_policy"].value<std::string>() == d.l15_policy);
}
