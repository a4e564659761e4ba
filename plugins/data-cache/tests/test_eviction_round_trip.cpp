// Eviction sets on the simulated GPU (data-cache/l1d-eviction-sets, docs/cache-probes.md):
// the ways of minimal eviction sets, the XOR set index recovered and tested where strides
// cannot see it, the geometry from them, and an honest "no linear function" where the index
// is a modulo by a non-power of two or a non-linear hash.
#include <catch2/catch.hpp>

#include <bit>
#include <fstream>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "memtopo_run.hpp"

namespace {

using probetest::write_variant;

const char* const kProbes = "data-cache/l1d-size,data-cache/l1d-line,data-cache/l1d-eviction-sets,data-cache/l1d-geometry";

// ["7^12", ...] as masks of address bits.
std::vector<uint64_t> masks_of(const toml::node_view<const toml::node>& v) {
  std::vector<uint64_t> out;
  if (const toml::array* a = v.as_array())
    for (const auto& s : *a) {
      uint64_t m = 0;
      std::string t = s.value_or<std::string>("");
      for (size_t at = 0; at <= t.size();) {
        const size_t end = std::min(t.find('^', at), t.size());
        m ^= uint64_t(1) << std::stoi(t.substr(at, end - at));
        at = end + 1;
      }
      out.push_back(m);
    }
  return out;
}

// Whether two sets of masks span the same space over GF(2) (by brute force over the small span).
bool same_span(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (a.size() != b.size() || a.size() > 16) return false;
  auto span = [](const std::vector<uint64_t>& m) {
    std::vector<uint64_t> all;
    for (uint32_t k = 0; k < (1u << m.size()); ++k) {
      uint64_t v = 0;
      for (size_t i = 0; i < m.size(); ++i)
        if (k >> i & 1) v ^= m[i];
      all.push_back(v);
    }
    std::sort(all.begin(), all.end());
    return all;
  };
  return span(a) == span(b);
}

}  // namespace

TEST_CASE("eviction sets name the ways and the XOR set index that strides cannot see", "[cache][sim][eviction]") {
  // Each index bit an XOR of three address bits: no power-of-two stride shows the sets.
  std::vector<uint64_t> truth;
  const std::string dev = write_variant("kepler-like.toml", "xor3", [&](toml::table& t) {
    toml::array hash;
    for (int i = 0; i < 5; ++i) {  // 32 sets of 128 B lines
      hash.push_back(toml::array{7 + i, 12 + i, 17 + i});
      truth.push_back((uint64_t(1) << (7 + i)) | (uint64_t(1) << (12 + i)) | (uint64_t(1) << (17 + i)));
    }
    t["sim"]["l1d"].as_table()->insert_or_assign("set_hash", hash);
  });
  const toml::table got = probetest::run_memtopo(dev, "xor3", kProbes);
  CHECK(got["l1d"]["eviction_set_ways"].value<int64_t>() == 12);
  CHECK(same_span(masks_of(got["l1d"]["set_hash"]), truth));
  // LRU within the sets: a new line evicts E1, E0 having been used again.
  CHECK(got["l1d"]["eviction_set_policy"].value<std::string>() == "lru");
  const auto victims = got["l1d"]["eviction_set_victim_fractions"].as_array();
  REQUIRE(victims);
  CHECK(victims->size() == 12);
  CHECK(victims->at(1).value_or(0.0) == Approx(1.0));
  // The geometry from the eviction sets, as strides cannot give it.
  CHECK(got["l1d"]["sets"].value<int64_t>() == 32);
  CHECK(got["l1d"]["ways"].value<int64_t>() == 12);
  CHECK(got["l1d"]["set_mapping"].value<std::string>() == "hashed");
}

TEST_CASE("eviction sets name a replacement that keeps re-used lines, as LRU's test cannot", "[cache][sim][eviction]") {
  // The XOR index above, SRRIP replacement: a line used twice outlives W new ones of its set.
  const std::string dev = write_variant("kepler-like.toml", "xor3-srrip", [&](toml::table& t) {
    toml::array hash;
    for (int i = 0; i < 5; ++i) hash.push_back(toml::array{7 + i, 12 + i, 17 + i});
    t["sim"]["l1d"].as_table()->insert_or_assign("set_hash", hash);
    t["l1d"].as_table()->insert_or_assign("replacement_policy", "srrip");
  });
  const toml::table got = probetest::run_memtopo(dev, "xor3-srrip", kProbes);
  CHECK(got["l1d"]["eviction_set_ways"].value<int64_t>() == 12);
  CHECK(got["l1d"]["eviction_set_policy"].value<std::string>() == "keeps_reused");
  const std::string note =
      got["provenance"]["l1d"]["eviction_set_policy"]["note"].value_or<std::string>("");
  CHECK(note.find("x missed in 0 of") != std::string::npos);
}

TEST_CASE("eviction sets of a modulo or non-linear index give the ways and no made-up function", "[cache][sim][eviction]") {
  // 24 sets: modulo (strides see them) or a multiplicative hash (nothing linear in it).
  const std::string mapping = GENERATE(as<std::string>{}, "modulo", "mixed");
  INFO(mapping);
  const std::string dev = write_variant("kepler-like.toml", "nonlinear-" + mapping, [&](toml::table& t) {
    t["l1d"].as_table()->insert_or_assign("sets", 24);
    t["l1d"].as_table()->insert_or_assign("ways", 16);
    t["l1d"].as_table()->insert_or_assign("set_mapping", mapping);
    t["sim"].as_table()->erase("l1d");
  });
  const toml::table got = probetest::run_memtopo(dev, "nonlinear-" + mapping, kProbes);
  CHECK(got["l1d"]["eviction_set_ways"].value<int64_t>() == 16);
  CHECK(!got["l1d"]["set_hash"]);
  const std::string reason = got["probes"]["data-cache/l1d-eviction-sets"]["reason"].value_or<std::string>("");
  CHECK(reason.find("no linear function") != std::string::npos);
  // 24 = 8 x 3: modulo keeps the three lowest line bits as parities; the hash keeps none.
  CHECK(masks_of(got["l1d"]["set_index_parities"]).size() == (mapping == "modulo" ? 3u : 0u));
  CHECK(got["l1d"]["sets"].value<int64_t>() == 24);
  CHECK(got["l1d"]["ways"].value<int64_t>() == 16);
  CHECK(got["l1d"]["set_mapping"].value<std::string>() == (mapping == "modulo" ? "modulo" : "hashed"));
}

TEST_CASE("eviction sets of a FIFO cache on a hashed index", "[cache][sim][eviction]") {
  // FIFO inserts on misses alone: a pool's lines cached from the trial before left x in place,
  // and no reduction ended (random devices 4, 38). Each trial then runs after a flush.
  const std::string dev = write_variant("kepler-like.toml", "fifo-mixed", [&](toml::table& t) {
    t["l1d"].as_table()->insert_or_assign("sets", 24);
    t["l1d"].as_table()->insert_or_assign("ways", 16);
    t["l1d"].as_table()->insert_or_assign("set_mapping", "mixed");
    t["l1d"].as_table()->insert_or_assign("replacement_policy", "fifo");
    t["sim"].as_table()->erase("l1d");
  });
  const toml::table got = probetest::run_memtopo(dev, "fifo-mixed", std::string(kProbes) + ",data-cache/l1d-policy");
  CHECK(got["l1d"]["eviction_set_ways"].value<int64_t>() == 16);
  CHECK(got["l1d"]["eviction_set_policy"].value<std::string>() == "fifo");
  CHECK(got["l1d"]["sets"].value<int64_t>() == 24);
  CHECK(got["l1d"]["set_mapping"].value<std::string>() == "hashed");
  CHECK(got["l1d"]["replacement_policy"].value<std::string>() == "fifo");
}

TEST_CASE("eviction sets under random replacement report no ways and no function", "[cache][sim][eviction]") {
  // The Pascal-like L1: 48 sets of 4 ways, non-uniform random victims. Minimal sets come out of
  // many sizes, and two of one size are chance, not the ways.
  const toml::table got = probetest::run_memtopo(probetest::device_file("pascal-like.toml"), "random-eviction", kProbes);
  CHECK(!got["l1d"]["eviction_set_ways"]);
  CHECK(!got["l1d"]["set_hash"]);
  CHECK(got["probes"]["data-cache/l1d-eviction-sets"]["status"].value_or<std::string>("") == "not_determinable");
}

TEST_CASE("L2 eviction sets of one SM's .cg loads give the ways, the sets and the index", "[cache][sim][eviction]") {
  // Two partitions of 512 sets (4 KiB chunks alternate); each set index bit an XOR of three bits
  // of the address within its partition, whose bits 12 and up are the address's 13 and up.
  const uint64_t domain = (uint64_t(1) << 26) - 128;  // the probe's 64 MiB buffer: 32 times the L2
  auto address_bit = [](int local_bit) { return uint64_t(1) << (local_bit < 12 ? local_bit : local_bit + 1); };
  std::vector<uint64_t> truth{uint64_t(1) << 12};  // the partition
  const std::string dev = write_variant("hopper-like.toml", "l2-xor3", [&](toml::table& t) {
    toml::array hash;
    for (int i = 0; i < 9; ++i) {
      hash.push_back(toml::array{8 + i, 13 + i, 19 + i});
      truth.push_back((address_bit(8 + i) | address_bit(13 + i) | address_bit(19 + i)) & domain);
    }
    t["sim"]["l2"].as_table()->insert_or_assign("set_hash", hash);
  });
  const auto config = probetest::scratch("l2-eviction.toml");
  std::ofstream(config) << "[probes.\"data-cache/l2-eviction-sets\"]\ntargets = 8\n";
  const toml::table got =
      probetest::run_memtopo(dev, "l2-xor3", "data-cache/l2-eviction-sets", "", "--config " + config.string());
  CHECK(got["l2"]["eviction_set_ways"].value<int64_t>() == 16);
  CHECK(got["l2"]["total_sets"].value<int64_t>() == 1024);
  CHECK(same_span(masks_of(got["l2"]["set_hash"]), truth));
  CHECK(got["l2"]["eviction_set_policy"].value<std::string>() == "lru");
  // The counters: x with its 16 lines hit nowhere, x with 15 of them everywhere.
  const auto ways_provenance = got["provenance"]["l2"]["eviction_set_ways"];
  CHECK(ways_provenance["verified"].value_or<std::string>("") == "counters");
  INFO(ways_provenance["verify_note"].value_or<std::string>(""));
  CHECK(ways_provenance["verify_note"].value_or<std::string>("").find("(0 %), believed at most 5 %") != std::string::npos);
}

// An opt-in probe (left out of a default run and of --only data-cache: tests/host/test_plan.cpp)
// that runs with its own defaults when named.
TEST_CASE("L2 eviction sets run with their default targets when named", "[cache][sim][eviction]") {
  const toml::table got = probetest::run_memtopo(probetest::device_file("hopper-like.toml"), "l2-eviction-default",
                                                 "data-cache/l2-eviction-sets");
  CHECK(got["probes"]["data-cache/l2-eviction-sets"]["status"].value_or<std::string>("") == "ok");
  CHECK(got["l2"]["eviction_set_ways"].value<int64_t>() == 16);
}

TEST_CASE("the L2's geometry takes the eviction sets' ways over the strides' reading of a hash", "[cache][sim][eviction]") {
  // A 1 MiB Hopper-like L2 of 2 x 256 sets whose index bits XOR three address bits each: strides
  // see a plateau that is no set (on this device, 2 "sets" of 4096 lines).
  const std::string dev = write_variant("hopper-like.toml", "l2-xor3-small", [&](toml::table& t) {
    toml::array hash;
    for (int i = 0; i < 8; ++i) hash.push_back(toml::array{8 + i, 13 + i, 19 + i});
    t["device"].as_table()->insert_or_assign("l2_bytes", 1048576);
    t["l2"].as_table()->insert_or_assign("size_bytes", 1048576);
    t["l2"].as_table()->insert_or_assign("sets", 512);
    t["sim"]["l2"].as_table()->insert_or_assign("set_hash", hash);
  });
  const auto config = probetest::scratch("l2-eviction-small.toml");
  std::ofstream(config) << "[probes.\"data-cache/l2-eviction-sets\"]\ntargets = 8\n";
  const toml::table got = probetest::run_memtopo(dev, "l2-xor3-small", "data-cache/l2-eviction-sets,data-cache/l2-geometry",
                                                 "", "--config " + config.string());
  CHECK(got["l2"]["eviction_set_ways"].value<int64_t>() == 16);
  CHECK(got["l2"]["ways"].value<int64_t>() == 16);
  CHECK(got["l2"]["sets"].value<int64_t>() == 512);
  CHECK(got["l2"]["set_mapping"].value<std::string>() == "hashed");
  const std::string how = got["provenance"]["l2"]["sets"]["note"].value_or<std::string>("");
  CHECK(how.find("which the eviction sets refute") != std::string::npos);
}

TEST_CASE("the replacement policy of a hashed L1 comes from its eviction sets", "[cache][sim][eviction]") {
  // 24 sets on a multiplicative hash: no power-of-two stride puts lines into one set, so the
  // policy step's own patterns cannot run; the eviction sets' LRU stands, with the reason.
  const std::string dev = write_variant("kepler-like.toml", "policy-mixed", [&](toml::table& t) {
    t["l1d"].as_table()->insert_or_assign("sets", 24);
    t["l1d"].as_table()->insert_or_assign("ways", 16);
    t["l1d"].as_table()->insert_or_assign("set_mapping", "mixed");
    t["l1d"].as_table()->insert_or_assign("replacement_policy", "lru");
    t["sim"].as_table()->erase("l1d");
  });
  const toml::table got = probetest::run_memtopo(dev, "policy-mixed", std::string(kProbes) + ",data-cache/l1d-policy");
  CHECK(got["l1d"]["replacement_policy"].value<std::string>() == "lru");
  const std::string note = got["provenance"]["l1d"]["replacement_policy"]["note"].value_or<std::string>("");
  CHECK(note.find("l1d.eviction_set_policy") != std::string::npos);
  CHECK(note.find("found no stride") != std::string::npos);
}
