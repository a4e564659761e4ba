// Reading device descriptions: errors name FILE:LINE and the key path; a measured topology
// (with [meta], [provenance], [probes]) is a valid device.
#include <catch2/catch.hpp>

#include <string>

#include "memtopo/probe.hpp"
#include "sim_helpers.hpp"

using namespace simtest;

namespace {

// The message open_sim throws for `text`, or "" when it opens.
std::string error_of(const std::string& text) {
  const std::string path = write_temp("bad", text);
  try {
    memtopo::engine::open_sim(path);
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
  CHECK_THAT(error_of(kDevice + "[l1d\n"), Catch::StartsWith(":4:"));  // TOML syntax error
  CHECK(error_of(kDevice) == "");
}

TEST_CASE("sim: a missing file is a clear error", "[sim][description]") {
  CHECK_THROWS_WITH(memtopo::engine::open_sim("/nonexistent/device.toml"), Catch::Contains("cannot open"));
}

TEST_CASE("sim: a measured topology file is a valid device", "[sim][description]") {
  const std::string measured = R"([meta]
schema_version = 1
tool_version = "0.1.0"
backend = "cuda"
created_utc = 2026-11-21T16:00:00Z

[device]
name = "NVIDIA measured GPU"
compute_capability = "8.0"
sm_count = 16
l2_bytes = 4194304
uuid = "GPU-1234"
pci_bus_id = "0000:01:00.0"

[l1d]
present = true
size_bytes = 196608
line_bytes = 128
fetch_granularity_bytes = 32
latency_cycles = 33.6
miss_penalty_cycles = 200.2
full_miss_bytes = 200704
set_mapping = "hashed"

[texture]
size_bytes = 196608
line_bytes = 128
latency_cycles = 40

[l2]
size_bytes = 4194304
latency_cycles = 260.4

[dram]
latency_cycles = 480

[provenance.l1d]
size_bytes = { probe = "data-cache/l1d-size", confidence = 0.97, bound = "exact", note = "x" }

[probes."data-cache/l1d-size"]
version = "1.0.0"
status = "ok"
reason = ""
duration_s = 0.5
)";
  auto d = memtopo::engine::open_sim(write_temp("measured", measured));
  CHECK(std::string(d->info().name) == "NVIDIA measured GPU");
  CHECK(d->info().sm_count == 16);
  CHECK(d->info().cc_major == 8);
  CHECK(timing_overhead(*d) == 0);  // no [sim]: the default
  auto hit = fine(*d, MT_SPACE_GLOBAL_CA, 65536, 128, 512, 512);
  CHECK(hit.latency == std::vector<uint32_t>(512, 34));  // 33.6 rounds to 34
  // past the L1 (4 ways by default): the given miss penalty (200) over the L1 latency
  auto miss = fine(*d, MT_SPACE_GLOBAL_CA, 393216, 128, 3072, 512);
  CHECK(miss.latency == std::vector<uint32_t>(512, 34 + 200));
  auto cg = fine(*d, MT_SPACE_GLOBAL_CG, 65536, 128, 512, 512);
  CHECK(cg.latency == std::vector<uint32_t>(512, 260));
}

TEST_CASE("sim: a description with only [device] uses the documented defaults", "[sim][description]") {
  auto d = memtopo::engine::open_sim(write_temp("minimal", kDevice));
  // no L1: .ca loads go to the L2 (200 cycles by default); DRAM 500; shared 30
  CHECK(fine(*d, MT_SPACE_GLOBAL_CA, 4096, 128, 32, 32).latency == std::vector<uint32_t>(32, 200));
  CHECK(fine(*d, MT_SPACE_GLOBAL_CA, 4096, 128, 0, 1).latency.front() == 500);
  CHECK(fine(*d, MT_SPACE_SHARED, 4096, 128, 0, 4).latency.front() == 30);
}
