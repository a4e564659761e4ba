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
