// Reading device descriptions: errors name FILE:LINE and the key path; a measured topology
// (with [meta], [provenance], [probes]) is a valid device.
#include <catch2/catch.hpp>

#include <cmath>
#include <set>
#include <string>

#include "memtopo/probe.hpp"
#include "sim_helpers.hpp"

using namespace simtest;

namespace {

// The message open_sim throws for `text`, or "" when it opens.
std::string error_of(const std::string& text, const memtopo::engine::ReplayMap& replay = {}) {
  const std::string path = write_temp("bad", text);
  try {
    memtopo::engine::open_sim(path, replay);
  } catch (const memtopo::Error& e) {
    const std::string m = e.what();
    CHECK(m.rfind(path + ":", 0) == 0);  // starts with the file name
    return m.substr(path.size());
  }
  return "";
}

const std::string kDevice = "[device]\nsm_count = 4\nl2_bytes = 1048576\n";

}  // namespace

TEST_CASE("sim: description errors name file, line and key", "[sim][description]") {
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 2048\nsize_byte = 4\n"),
             Catch::StartsWith(":6: l1d.size_byte: unknown key"));
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = \"big\"\n"),
             Catch::StartsWith(":5: l1d.size_bytes: must be an integer, not a string"));
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 4096\nline_bytes = 128\nsets = 4\nways = 4\n"),
             Catch::StartsWith(":7: l1d.sets: 4 sets x 4 ways x 128 B = 2048 B, but size_bytes = 4096"));
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 4096\nreplacement_policy = \"plru\"\n"),
             Catch::Contains("l1d.replacement_policy: \"plru\" is not a replacement policy"));
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 4096\nline_bytes = 96\n"),
             Catch::Contains("l1d.line_bytes: must be a power of two"));
  CHECK_THAT(error_of(kDevice + "[sim]\nnoise = 3\n"), Catch::StartsWith(":5: sim.noise: unknown key"));
  CHECK_THAT(error_of(kDevice + "[sim]\nnoise_cycles = \"lots\"\n"), Catch::Contains("sim.noise_cycles: must be a number"));
  CHECK_THAT(error_of(kDevice + "constant_memory_bytes = 65536\nconstant_reach_bytes = 4096\n"),
             Catch::StartsWith(":5: device.constant_reach_bytes: must be at least constant_memory_bytes (65536)"));
  CHECK_THAT(error_of(kDevice + "[sim]\nstray_line_probability = 1.5\n"),
             Catch::StartsWith(":5: sim.stray_line_probability: must be within 0..1"));
  CHECK_THAT(error_of(kDevice + "[l1d]\nsize_bytes = 4096\nsets = 8\n[sim.l1d]\nset_hash = [7, 8]\n"),
             Catch::Contains("sim.l1d.set_hash: 2 index bits cannot address 8 sets"));
  CHECK_THAT(error_of(kDevice + "[sim.l1d]\npartitions = 2\n"), Catch::Contains("sim.l1d.partitions: unknown key"));
  CHECK_THAT(error_of(kDevice + "[l2]\nsize_bytes = 65536\n[sim.l2]\nforeign_lines_per_kcycle = -1\n"),
             Catch::StartsWith(":7: sim.l2.foreign_lines_per_kcycle: must be within 0..1000"));
  CHECK_THAT(error_of(kDevice + "[tlb]\nl2_entries = 65\nl2_sets = [17, 8, 8]\n"),
             Catch::Contains("tlb.l2_sets: the sets hold 33 lines, but l2_entries / line = 65"));
  CHECK_THAT(error_of(kDevice + "[l2]\npartitions = 2\nlatency_cycles = 300\nfar_latency_cycles = 200\n"),
             Catch::Contains("l2.far_latency_cycles: is below latency_cycles"));
  CHECK_THAT(error_of(kDevice + "[sim.texture]\nstorage = \"own\"\n"),
             Catch::Contains("sim.texture.storage: \"own\" needs a [texture] table"));
  CHECK_THAT(error_of("[device]\nname = \"x\"\n"), Catch::StartsWith(":1: device.sm_count: must be a positive integer"));
  CHECK_THAT(error_of("[l1d]\nsize_bytes = 1\n"), Catch::Contains("device: missing"));
  // Measured keys replay as the plugins declare: moved, their line kept, the message naming both.
  const memtopo::engine::ReplayMap replay{{"constant_l15.group_of_sm", "sim.constant_l15.group_of_sm"},
                                          {"constant_l15.sm_group_count", ""}, {"constant_l1.storage", ""}};
  CHECK_THAT(error_of(kDevice + "[constant_l15]\nsize_bytes = 32768\ngroup_of_sm = [0, 0, 1]\n", replay),
             Catch::StartsWith(":6: sim.constant_l15.group_of_sm: has 3 entries; it needs one per SM (device.sm_count 4)") &&
                 Catch::EndsWith("(measured as constant_l15.group_of_sm)"));
  CHECK_THAT(error_of(kDevice + "[sim.constant_l15]\ngroup_of_sm = [0, 0, 1, 4]\n"),
             Catch::Contains("sim.constant_l15.group_of_sm: holds 4; groups are numbered 0 .. sm_count - 1"));
  const std::string groups = kDevice + "[constant_l15]\nsize_bytes = 32768\ngroup_of_sm = [0, 1, 1, 0]\nsm_group_count = 2\n";
  CHECK(error_of(groups, replay) == "");
  CHECK_THAT(error_of(groups), Catch::Contains("constant_l15.group_of_sm: unknown key"));  // no plugin says what it is
  CHECK(error_of(kDevice + "[constant_l1]\nsize_bytes = 2048\nstorage = \"l1d\"\n", replay) == "");
  CHECK_THAT(error_of(kDevice + "[sim]\nshared_sizes_bytes = [8192, 0]\n"),
             Catch::StartsWith(":5: sim.shared_sizes_bytes: must be ascending"));
  CHECK_THAT(error_of(kDevice + "[sim]\nshared_sizes_bytes = [0, 8192]\ncarveout_l1d_size_bytes = [4096]\n"),
             Catch::Contains("sim.carveout_l1d_size_bytes: has 1 entries, shared_sizes_bytes 2"));
  CHECK_THAT(error_of(kDevice + "[l1d\n"), Catch::StartsWith(":4:"));  // TOML syntax error
  CHECK(error_of(kDevice) == "");
}

TEST_CASE("sim: a missing file is a clear error", "[sim][description]") {
  CHECK_THROWS_WITH(memtopo::engine::open_sim("/nonexistent/device.toml"),
                    Catch::StartsWith("/nonexistent/device.toml: no such file; name a simulated device description"));
}

TEST_CASE("sim: a measured topology file is a valid device", "[sim][description]") {
  // What the real binary wrote for the hopper-like device (tests/sim/measured/README.md):
  // [meta], [provenance] and [probes] besides the element tables, every key the probes write.
  const std::string path = measured_path("hopper-like-sim.toml");
  const toml::table t = toml::parse_file(path);
  auto d = memtopo::engine::open_sim(path, plugins_replay_map());
  CHECK(std::string(d->info().name) == t["device"]["name"].value_or(std::string()));
  CHECK(d->info().sm_count == key(t, "device", "sm_count"));
  CHECK(d->info().cc_major == 9);
  CHECK(timing_overhead(*d) == 0);  // no [sim]: the default
  auto cycles = [&](const char* element, const char* k) { return uint32_t(std::lround(*t[element][k].value<double>())); };
  const uint32_t l1 = cycles("l1d", "latency_cycles");
  CHECK(fine(*d, MT_SPACE_GLOBAL_CA, 65536, 128, 512, 512).latency == std::vector<uint32_t>(512, l1));
  // Past the L1, near and far L2 partitions alike cost the measured miss penalty: the probe
  // took it over both (docs/simulator.md, "Replaying a measured topology").
  const uint64_t l1_size = uint64_t(key(t, "l1d", "size_bytes"));
  auto miss = fine(*d, MT_SPACE_GLOBAL_CA, 2 * l1_size, 128, 4 * l1_size / 128, 512);
  CHECK(miss.latency == std::vector<uint32_t>(512, l1 + cycles("l1d", "miss_penalty_cycles")));
  // .cg loads spread over both partitions: the near and the far latency.
  auto cg = fine(*d, MT_SPACE_GLOBAL_CG, 65536, 128, 512, 512);
  CHECK(std::set<uint32_t>(cg.latency.begin(), cg.latency.end()) ==
        std::set<uint32_t>{cycles("l2", "latency_cycles"), cycles("l2", "far_latency_cycles")});
  // One line past the capacity at a stride of sets x line overflows one set of the L1.
  const uint64_t sets = uint64_t(key(t, "l1d", "sets")), ways = uint64_t(key(t, "l1d", "ways"));
  auto set = fine(*d, MT_SPACE_GLOBAL_CA, (ways + 1) * sets * 128, sets * 128, 2 * (ways + 1), 2 * (ways + 1));
  CHECK(misses(set.latency, l1) == 2 * (ways + 1));
}

TEST_CASE("sim: a description with only [device] uses the documented defaults", "[sim][description]") {
  auto d = memtopo::engine::open_sim(write_temp("minimal", kDevice));
  // no L1: .ca loads go to the L2 (200 cycles by default); DRAM 500; shared 30
  CHECK(fine(*d, MT_SPACE_GLOBAL_CA, 4096, 128, 32, 32).latency == std::vector<uint32_t>(32, 200));
  CHECK(fine(*d, MT_SPACE_GLOBAL_CA, 4096, 128, 0, 1).latency.front() == 500);
  CHECK(fine(*d, MT_SPACE_SHARED, 4096, 128, 0, 4).latency.front() == 30);
}
