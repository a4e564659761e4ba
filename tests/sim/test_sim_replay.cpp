// The replay rules of docs/simulator.md ("Replaying a measured topology"): how a table with
// [provenance.<element>] is read, checked on the model the description becomes. Expected
// values follow from the descriptions written here.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "memtopo/errors.hpp"
#include "sim/sim_gpu.hpp"
#include "sim/sim_model.hpp"
#include "sim_helpers.hpp"

using namespace simtest;
using memtopo::sim::load_model;
using memtopo::sim::Model;

namespace {

const std::string kDevice = "[device]\nsm_count = 8\nl2_bytes = 1048576\n";

// `table` measured: a [provenance.<element>] entry for its size, with `bound`.
std::string measured(const std::string& element, const std::string& table, const std::string& bound = "exact") {
  return "[" + element + "]\n" + table + "\n[provenance." + element + "]\nsize_bytes = { probe = \"x\", bound = \"" +
         bound + "\" }\n";
}

Model model(const std::string& text, const std::map<std::string, std::string>& replay = {}) {
  return load_model(text, "t.toml", "sim:t.toml", replay);
}

std::string error_of(const std::string& text, const std::map<std::string, std::string>& replay = {}) {
  try {
    model(text, replay);
  } catch (const memtopo::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("sim: keys probes report beside the model's replay as they declare, typos still refused", "[sim][replay]") {
  const std::string l2 = "size_bytes = 1048576\nfirst_miss_bytes = 1048576\nfull_miss_bytes = 1179648\n"
                         "api_size_bytes = 1048576\nlevel_latencies_cycles = [200.5, 480]\nlevel_start_bytes = [65536, 1179648]\n";
  const std::map<std::string, std::string> replay{{"l2.full_miss_bytes", ""}, {"l2.api_size_bytes", ""},
                                                  {"l2.level_latencies_cycles", ""}, {"l2.level_start_bytes", ""}};
  CHECK(error_of(kDevice + measured("l2", l2), replay) == "");
  // Without the plugins' word, a key the model does not know is a mistake.
  CHECK_THAT(error_of(kDevice + "[l2]\n" + l2), Catch::Contains(": unknown key"));
  CHECK_THAT(error_of(kDevice + "[l2]\nsize_bytes = 1048576\nfirst_miss_bytes = \"1 MiB\"\n"),
             Catch::StartsWith("t.toml:6: l2.first_miss_bytes: must be an integer, not a string"));
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096\nfull_miss_byte = 8192")),
             Catch::StartsWith("t.toml:6: l1d.full_miss_byte: unknown key"));
  // The L2 sweep's keys belong to [l2] only.
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096\nlevel_start_bytes = [1]")),
             Catch::Contains("l1d.level_start_bytes: unknown key"));
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096\nset_mapping = \"xor\"")),
             Catch::Contains("l1d.set_mapping: \"xor\" is not a set mapping"));
  CHECK_THAT(error_of(kDevice + measured("l1d", "size_bytes = 4096", "about")),
             Catch::Contains("provenance.l1d.size_bytes.bound: \"about\" is not a bound"));
}

TEST_CASE("sim: a measured size is taken in whole lines, and a bound is replayed at the bound", "[sim][replay]") {
  // 246752 B: a 32 B step below 1928 lines of 128 B (a stray miss stopped the size probe).
  const Model m = model(kDevice + measured("l1d", "size_bytes = 246752\nline_bytes = 128"));
  CHECK(m.l1d.geometry.size_bytes == 1928 * 128);
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 246752\nline_bytes = 128\n"),
             Catch::Contains("l1d.size_bytes: 246752 is not a multiple of the line size 128"));
  // at_least: no miss up to the largest footprint the path reaches; the cache is that large.
  const Model big = model(kDevice + measured("constant_l15", "size_bytes = 97280", "at_least"));
  CHECK(big.constant_l15.geometry.size_bytes == 97280);
  // at_most: misses already at the smallest footprint tried; the largest cache below it.
  const Model small = model(kDevice + measured("l1d", "size_bytes = 1024\nline_bytes = 128", "at_most"));
  CHECK(small.l1d.geometry.size_bytes == 896);
}

TEST_CASE("sim: measured sets and ways within 1 % of the size are the cache", "[sim][replay]") {
  // The Kepler-like L2 measured one 32 B line long; the geometry probe rounded to 3072 sets.
  const std::string l2 = "size_bytes = 1572896\nline_bytes = 32\nsets = 3072\nways = 16\npartitions = 1";
  const Model m = model(kDevice + measured("l2", l2));
  CHECK(m.l2.geometry.size_bytes == 1572864);
  CHECK(m.l2.geometry.sets() == 3072);
  CHECK(m.l2.geometry.max_ways() == 16);
  CHECK_THAT(error_of(kDevice + "[l2]\n" + l2 + "\n"), Catch::Contains("l2.sets: 3072 sets x 16 ways x 32 B = 1572864 B"));
  CHECK_THAT(error_of(kDevice + measured("l2", "size_bytes = 1638400\nline_bytes = 32\nsets = 3072\nways = 16")),
             Catch::Contains("l2.sets: 3072 sets x 16 ways x 32 B = 1572864 B, more than 1 % from the measured"));
  // One of them: the other from the size, rounded.
  CHECK(model(kDevice + measured("l1d", "size_bytes = 49184\nsets = 32")).l1d.geometry.max_ways() == 12);
  // Sets and ways that fit an early first miss, not the size (other traffic): the size wins.
  const Model early = model(kDevice + measured("l2", "size_bytes = 8373888\nfirst_miss_bytes = 7802880\n"
                                                     "sets = 3810\nways = 16\npartitions = 2"));
  CHECK(early.l2.geometry.size_bytes * 2 == 8372224);  // rounded for equal sets (below)
}

TEST_CASE("sim: a measured L2 that copies far lines near holds its size in each partition", "[sim][replay]") {
  // One SM fills only its near partition when far reads leave copies there: the size it
  // measured is one partition's. Without copies its lines spread over both: the whole L2.
  const std::string l2 = "size_bytes = 1048576\nfirst_miss_bytes = 983040\nline_bytes = 128\npartitions = 2";
  const std::map<std::string, std::string> replay{{"l2.far_copy_bytes", "sim.l2.far_copy_bytes"}};
  const Model copies = model(kDevice + measured("l2", l2 + "\nfar_copy_bytes = 64"), replay);
  CHECK(copies.l2.geometry.size_bytes == 1048576);  // per partition
  CHECK(copies.l2_far_copies_near);
  const Model spread = model(kDevice + measured("l2", l2 + "\nfar_copy_bytes = 0"), replay);
  CHECK(spread.l2.geometry.size_bytes == 524288);
  CHECK_FALSE(spread.l2_far_copies_near);
  // A described (not measured) L2 gives its whole size either way.
  const Model described = model(kDevice + "[l2]\nsize_bytes = 1048576\npartitions = 2\n[sim.l2]\nfar_copies_near = true\n");
  CHECK(described.l2.geometry.size_bytes == 524288);
}

TEST_CASE("sim: undetermined sets and ways replay behind a folded hash of the same size", "[sim][replay]") {
  // 1928 lines = 8 x 241: 8 sets of 241 ways, each index bit the XOR of every third line bit.
  const Model m = model(kDevice + measured("l1d", "size_bytes = 246784\nline_bytes = 128"));
  REQUIRE(m.l1d.geometry.sets() == 8);
  CHECK(m.l1d.geometry.max_ways() == 241);
  REQUIRE(m.l1d.geometry.set_hash_masks.size() == 3);
  uint64_t bits7 = 0;
  for (int b = 7; b < 48; b += 3) bits7 |= uint64_t(1) << b;
  CHECK(m.l1d.geometry.set_hash_masks[0] == bits7);
  // Each partition of an L2 gets its own sets: 204800 lines = 2 x 4096 sets x 25 ways.
  const Model l2 = model(kDevice + measured("l2", "size_bytes = 26214400\npartitions = 2"));
  CHECK(l2.l2.geometry.sets() == 4096);
  CHECK(l2.l2.geometry.max_ways() == 25);
  // 2047 lines have no factor of two: 2048 (the nearest count with one), 128 sets x 16 ways.
  const Model odd = model(kDevice + measured("l1d", "size_bytes = 262016\nline_bytes = 128"));
  CHECK(odd.l1d.geometry.size_bytes == 262144);
  CHECK(odd.l1d.geometry.sets() == 128);
  // A footprint of exactly the size holds without misses; one line more does not.
  const std::string path = write_temp("folded", kDevice + measured("l1d", "size_bytes = 246784\nline_bytes = 128"));
  auto d = memtopo::engine::open_sim(path);
  const uint64_t lines = 1928;
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, lines * 128, 128, lines, lines).latency, 33) == 0);
  CHECK(misses(fine(*d, MT_SPACE_GLOBAL_CA, (lines + 1) * 128, 128, lines + 1, lines + 1).latency, 33) > 0);
}

TEST_CASE("sim: set_mapping = \"hashed\" without set_hash pairs each index bit with the one above", "[sim][replay]") {
  // As the Kepler-like L1's hand-written hash: bit 7+i XOR bit 12+i for 32 sets of 128 B lines.
  const Model kepler = load_model(toml_text_of(device_path("kepler-like.toml")), "k.toml", "sim:k.toml");
  const Model m = model(kDevice + measured("l1d", "size_bytes = 49152\nline_bytes = 128\nsets = 32\nways = 12\n"
                                                   "set_mapping = \"hashed\""));
  CHECK(m.l1d.geometry.set_hash_masks == kepler.l1d.geometry.set_hash_masks);
  // A hand-written hashed table needs a power-of-two set count (a measured one keeps modulo).
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 24576\nsets = 48\nset_mapping = \"hashed\"\n"),
             Catch::Contains("l1d.set_mapping: \"hashed\" derives a hash for a power-of-two number of sets"));
  CHECK(model(kDevice + measured("l1d", "size_bytes = 24576\nsets = 48\nset_mapping = \"hashed\""))
            .l1d.geometry.set_hash_masks.empty());
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 4096\nsets = 8\nset_mapping = \"modulo\"\n[sim.l1d]\nset_hash = [7, 8, 9]\n"),
             Catch::Contains("sim.l1d.set_hash: contradicts l1d.set_mapping = \"modulo\""));
}

TEST_CASE("sim: victim probabilities per bin of the fill order are split over the bin's ways", "[sim][replay]") {
  std::string probs = "[0.3";
  for (int i = 1; i < 16; ++i) probs += ", " + std::to_string(0.7 / 15);
  const Model m = model(kDevice + measured("l1d", "size_bytes = 24576\nsets = 2\nways = 96\n"
                                                   "replacement_policy = \"non_uniform\"\nvictim_probabilities = " +
                                                       probs + "]"));
  const auto& v = m.l1d.geometry.victim_probabilities;
  REQUIRE(v.size() == 96);
  CHECK(v[0] == Approx(0.05));  // 0.3 over the six ways of the first bin
  CHECK(v[5] == Approx(0.05));
  CHECK(v[6] == Approx(0.7 / 15 / 6));
}

TEST_CASE("sim: what a measured table changes beyond its own structure", "[sim][replay]") {
  const std::string l2 = "[l2]\nsize_bytes = 1048576\npartitions = 2\nlatency_cycles = 260\nfar_latency_cycles = 420\n";
  const std::string l1 = "size_bytes = 4096\nlatency_cycles = 30\nmiss_penalty_cycles = 300";
  // A measured L1 penalty covers near and far L2 hits alike; a hand-written one the near.
  memtopo::sim::Gpu pooled(model(kDevice + l2 + measured("l1d", l1)));
  CHECK(pooled.path(MT_SPACE_GLOBAL_CA).l2_near == 330);
  CHECK(pooled.path(MT_SPACE_GLOBAL_CA).l2_far == 330);
  memtopo::sim::Gpu near(model(kDevice + l2 + "[l1d]\n" + l1 + "\n"));
  CHECK(near.path(MT_SPACE_GLOBAL_CA).l2_far == 330 + 160);
  // A measured L1.5 gets one per SM unless [sim] says otherwise.
  CHECK(model(kDevice + measured("constant_l15", "size_bytes = 32768")).sm_per_gpc == 1);
  CHECK(model(kDevice + "[constant_l15]\nsize_bytes = 32768\n").sm_per_gpc == 8);
  // A [readonly] table is a cache of its own, whatever the texture path uses.
  const Model ro = model(kDevice + measured("texture", "size_bytes = 8192\nline_bytes = 256") +
                         measured("readonly", "size_bytes = 8192\nline_bytes = 128"));
  CHECK(ro.readonly_storage == memtopo::sim::Storage::Readonly);
}

// The H100's driver maps a carveout to a level by its own table (docs/simulator.md): the
// measured smallest percent of each level replays as it, and nothing else changes the map.
TEST_CASE("sim: measured carveout percents map a carveout to its level", "[sim][replay]") {
  const std::string sizes = "[sim]\nshared_sizes_bytes = [0, 8192, 16384, 32768]\n";
  const Model m = model(kDevice + sizes + "carveout_percents = [0, 4, 6, 12]\n");
  CHECK(m.carveout_shared_bytes(3) == 0);
  CHECK(m.carveout_shared_bytes(4) == 8192);
  CHECK(m.carveout_shared_bytes(5) == 8192);
  CHECK(m.carveout_shared_bytes(6) == 16384);
  CHECK(m.carveout_shared_bytes(100) == 32768);
  CHECK_THAT(error_of(kDevice + sizes + "carveout_percents = [0, 4, 6]\n"),
             Catch::Contains("sim.carveout_percents: has 3 entries, shared_sizes_bytes 4"));
  CHECK_THAT(error_of(kDevice + sizes + "carveout_percents = [0, 6, 4, 12]\n"),
             Catch::Contains("sim.carveout_percents: must be ascending"));
}

// DRAM reads of lines homed far add what was measured for DRAM, not the L2's far extra.
TEST_CASE("sim: a measured far DRAM latency is kept apart from the far L2 hit", "[sim][replay]") {
  const std::string l2 = "[l2]\nsize_bytes = 1048576\npartitions = 2\nlatency_cycles = 280\nfar_latency_cycles = 460\n";
  const Model m = model(kDevice + l2 + "[dram]\nlatency_cycles = 565\nfar_latency_cycles = 753\n");
  CHECK(m.dram_latency_cycles == 565);
  CHECK(m.dram_far_extra_cycles == 188);
  CHECK(model(kDevice + l2 + "[dram]\nlatency_cycles = 565\n").dram_far_extra_cycles == -1);
  CHECK_THAT(error_of(kDevice + l2 + "[dram]\nlatency_cycles = 565\nfar_latency_cycles = 500\n"),
             Catch::Contains("dram.far_latency_cycles: is below latency_cycles"));
}

// A simulator-only build lacks the CUDA-only probes (tlb/mapped-levels): the keys they wrote
// into a GPU's topology are measured, not mistakes, and replay as nothing; a key no probe
// wrote is still refused.
TEST_CASE("sim: keys of a probe this build lacks replay as nothing, unmeasured ones are refused", "[sim][replay]") {
  const std::string tlb = "[tlb]\nmapped_level_count = 0\n";
  CHECK(error_of(kDevice + tlb + "[provenance.tlb]\nmapped_level_count = { probe = \"tlb/mapped-levels\" }\n") == "");
  CHECK_THAT(error_of(kDevice + tlb), Catch::Contains("tlb.mapped_level_count: unknown key"));
  CHECK_THAT(error_of(kDevice + tlb + "[provenance.tlb]\nmapped_level_count = { note = \"no probe\" }\n"),
             Catch::Contains("tlb.mapped_level_count: unknown key"));
}
