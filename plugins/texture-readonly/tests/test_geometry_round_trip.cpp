// Sets and ways on simulated devices unlike the shipped ones: texture and read-only loads in
// one storage under random replacement, where one SM's cache now and then holds another
// user's line, and in the storage of an L1 with a hashed set index.
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

TEST_CASE("texture and read-only loads in one randomly replaced storage agree on its sets and ways", "[cache][sim][sharing]") {
  // A texture cache of its own, which read-only loads share, with random replacement, and
  // each SM's copy losing a way of one set to another user's line in 15 % of calls: W lines
  // at random places in each set then miss on that SM now and then, which once made one path
  // "not determinable" while the other, on the same storage, gave its sets and ways.
  const Geometry g = GENERATE(Geometry{32, 16, 128}, Geometry{16, 32, 128});
  const int seed = GENERATE(10, 13, 14, 15);
  const std::string tag = "shared-random-" + std::to_string(g.sets) + "x" + std::to_string(g.ways) + "-" + std::to_string(seed);
  INFO(tag);
  const std::string dev = write_variant("hopper-like.toml", tag, [&](toml::table& t) {
    for (const char* e : {"texture", "readonly"}) {
      toml::table& c = *t[e].as_table();
      c.insert_or_assign("size_bytes", g.sets * g.ways * g.line_bytes);
      c.insert_or_assign("line_bytes", g.line_bytes);
      c.insert_or_assign("sets", g.sets);
      c.insert_or_assign("ways", g.ways);
      c.insert_or_assign("replacement_policy", "random");
    }
    t["sim"]["texture"].as_table()->insert_or_assign("storage", "own");
    t["sim"]["readonly"].as_table()->insert_or_assign("storage", "texture");
    t["sim"].as_table()->insert_or_assign("stray_line_probability", 0.15);
    t["sim"].as_table()->insert_or_assign("seed", seed);
  });
  const toml::table got = run_memtopo(dev, tag, "texture-readonly,cache-sharing/storage");
  CHECK(got["readonly"]["storage"].value<std::string>() == "texture");
  for (const char* e : {"texture", "readonly"}) {
    INFO(e);
    CHECK(got[e]["size_bytes"].value<int64_t>() == g.sets * g.ways * g.line_bytes);
    CHECK(got[e]["sets"].value<int64_t>() == g.sets);
    CHECK(got[e]["ways"].value<int64_t>() == g.ways);
    CHECK(got[e]["set_mapping"].value<std::string>() == "modulo");
    CHECK(got[e]["replacement_policy"].value<std::string>() == "random");
  }
}

TEST_CASE("texture and read-only paths in a hashed L1's storage take its sets and ways", "[cache][sim][sharing]") {
  // And its replacement policy: no stride puts lines into one of its sets, so the L1's policy
  // comes from its eviction sets, and the paths' from the L1.
  // The L1's eviction sets give 64 sets of 6 ways behind a non-linear hash, which no stride
  // sees; cache-sharing/storage finds the texture and read-only paths in that storage. A
  // texture path of 256 B lines in it (as the H100's) does not hold them at its own line.
  const bool long_texture_lines = GENERATE(false, true);
  INFO("texture lines of 256 B: " << long_texture_lines);
  const auto file = probetest::test_device_file("hashed-shared-l1.toml");
  const std::string tag = long_texture_lines ? "hashed-shared-l1-256" : "hashed-shared-l1";
  const std::string dev = !long_texture_lines ? file.string() : probetest::write_variant_of(file, tag, [](toml::table& t) {
    t["texture"].as_table()->insert_or_assign("line_bytes", 256);
    t["texture"].as_table()->insert_or_assign("sets", 32);
  });
  const toml::table got = run_memtopo(dev, tag,
                                      "data-cache/l1d-size,data-cache/l1d-line,data-cache/l1d-eviction-sets,"
                                      "data-cache/l1d-geometry,data-cache/l1d-policy,texture-readonly,cache-sharing/storage");
  CHECK(got["l1d"]["sets"].value<int64_t>() == 64);
  CHECK(got["l1d"]["ways"].value<int64_t>() == 6);
  CHECK(got["l1d"]["replacement_policy"].value<std::string>() == "lru");
  for (const char* e : {"texture", "readonly"}) {
    INFO(e);
    CHECK(got[e]["storage"].value<std::string>() == "l1d");
    if (long_texture_lines && std::string(e) == "texture") {
      CHECK_FALSE(got[e]["sets"]);
      CHECK(got["probes"]["texture-readonly/texture-geometry"]["status"].value<std::string>() == "not_determinable");
      continue;
    }
    CHECK(got[e]["sets"].value<int64_t>() == 64);
    CHECK(got[e]["ways"].value<int64_t>() == 6);
    CHECK(got[e]["set_mapping"].value<std::string>() == "hashed");
    CHECK_THAT(got["provenance"][e]["sets"]["note"].value_or<std::string>(""),
               Catch::Contains(std::string(e) + ".storage = \"l1d\""));
    CHECK(got[e]["replacement_policy"].value<std::string>() == "lru");
    CHECK_THAT(got["provenance"][e]["replacement_policy"]["note"].value_or<std::string>(""),
               Catch::Contains(std::string(e) + ".storage = \"l1d\""));
  }
}
