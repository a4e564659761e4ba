// Limits of a device description (docs/simulator.md, "Limits"): a consistent but huge cache,
// a size of 2^62 or more cache state than a machine has is refused with FILE:LINE and the key
// before anything of that size is allocated; numbers that are not finite, and products of
// sets and ways that overflow, are named for what they are; every shipped description loads.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "sim_helpers.hpp"

using namespace simtest;
namespace fs = std::filesystem;

namespace {

// The limits are checked by the description's reader, before open_sim builds the simulated
// GPU: a refusal with the reader's message means nothing of the described size was allocated.
struct Refusal {
  std::string message;  // after the file name; "" when the description opened
};

Refusal refusal_of(const std::string& text) {
  const std::string path = write_temp("limits", text);
  Refusal r;
  try {
    memtopo::engine::open_sim(path);
  } catch (const memtopo::Error& e) {
    const std::string m = e.what();
    CHECK(m.rfind(path + ":", 0) == 0);  // starts with the file name
    r.message = m.substr(path.size());
  }
  return r;
}

const std::string kDevice = "[device]\nsm_count = 4\nl2_bytes = 1048576\n";

}  // namespace

TEST_CASE("sim limits: a consistent 64 GiB L2 is refused by the reader, naming file, line and limit", "[sim][limits]") {
  // 2^29 lines of 128 B in 2^27 sets of 4 ways: consistent, and 19 GB of simulator state.
  const Refusal r = refusal_of(kDevice + "[l2]\nsize_bytes = 68719476736\nline_bytes = 128\nsets = 134217728\nways = 4\n");
  CHECK_THAT(r.message, Catch::StartsWith(":5: l2.size_bytes: 68719476736 B (64 GiB) is more than the simulator "
                                          "handles in one cache (4 GiB); check the value"));
}

TEST_CASE("sim limits: sizes of 2^62 are refused by the reader", "[sim][limits]") {
  const Refusal l1 = refusal_of(kDevice + "[l1d]\nsize_bytes = 4611686018427387904\n");
  CHECK_THAT(l1.message, Catch::StartsWith(":5: l1d.size_bytes: 4611686018427387904 B (4 EiB) is more than the "
                                           "simulator handles in one cache (4 GiB)"));
  // The L2's default size comes from [device]: refused where it is written.
  const Refusal l2 = refusal_of("[device]\nsm_count = 4\nl2_bytes = 4611686018427387904\n");
  CHECK_THAT(l2.message, Catch::StartsWith(":3: device.l2_bytes: 4611686018427387904 B (4 EiB) is more than the "
                                           "simulator handles in one cache (4 GiB)"));
  const Refusal tlb = refusal_of(kDevice + "[tlb]\nl2_entries = 4611686018427387904\n");
  CHECK_THAT(tlb.message, Catch::StartsWith(":5: tlb.l2_entries: 4611686018427387904 entries are more than the "
                                            "simulator handles in one TLB level (65536)"));
}

TEST_CASE("sim limits: 1-byte lines are refused by their count", "[sim][limits]") {
  const Refusal r = refusal_of(kDevice + "[l1d]\nsize_bytes = 1073741824\nline_bytes = 1\nfetch_granularity_bytes = 1\n");
  CHECK_THAT(r.message, Catch::StartsWith(":5: l1d.size_bytes: 1073741824 lines of 1 B are more than the simulator "
                                          "handles in one cache (134217728 lines)"));
}

TEST_CASE("sim limits: what every instance together would need is checked before the GPU is built", "[sim][limits]") {
  // 1 GiB per SM is within the limit of one cache; on 4096 SMs it would be 832 GiB of state.
  const Refusal r = refusal_of("[device]\nsm_count = 4096\n[l1d]\nsize_bytes = 1073741824\n");
  CHECK_THAT(r.message, Catch::StartsWith(":4: l1d.size_bytes: 4096 instances of this cache (sm_count x "
                                          "partitions_per_sm) need "));
  CHECK_THAT(r.message, Catch::Contains("more than the simulator's limit of"));
  CHECK_THAT(r.message, Catch::Contains("make the caches or sm_count smaller"));
}

TEST_CASE("sim limits: device counts are range-checked, not wrapped", "[sim][limits]") {
  CHECK_THAT(refusal_of("[device]\nsm_count = 5000\n").message,
             Catch::StartsWith(":2: device.sm_count: at most 4096 SMs are simulated"));
  // 2^32 + 1 would have been read as 1 SM.
  CHECK_THAT(refusal_of("[device]\nsm_count = 4294967297\n").message,
             Catch::StartsWith(":2: device.sm_count: 4294967297 is out of range (at most 2147483647)"));
  CHECK_THAT(refusal_of(kDevice + "[sim]\nsm_per_gpc = 4294967296\n").message,
             Catch::StartsWith(":5: sim.sm_per_gpc: is more than device.sm_count (4)"));
  CHECK_THAT(refusal_of(kDevice + "[sim]\nwarp_schedulers = 4294967296\n").message,
             Catch::StartsWith(":5: sim.warp_schedulers: must be within 1..1024"));
}

TEST_CASE("sim limits: a future GPU's size opens (thousands of SMs, a GiB of L2)", "[sim][limits]") {
  const Refusal r = refusal_of("[device]\nsm_count = 4096\n[l1d]\nsize_bytes = 262144\n[l2]\nsize_bytes = 1073741824\n"
                               "partitions = 2\n");
  CHECK(r.message == "");
}

TEST_CASE("sim limits: every shipped description opens", "[sim][limits]") {
  size_t opened = 0;
  // Measured topologies replay as the plugins declare; hand-written descriptions need nothing.
  const memtopo::engine::ReplayMap replay = plugins_replay_map();
  for (const fs::path dir : {fs::path(device_path("")), fs::path(measured_path(""))})
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() != ".toml") continue;
      INFO(entry.path());
      CHECK_NOTHROW(memtopo::engine::open_sim(entry.path().string(), replay));
      ++opened;
    }
  CHECK(opened >= 5);  // examples/devices (3) and tests/sim/measured (2)
}

TEST_CASE("sim limits: cycles and numbers that are not finite or out of range say so", "[sim][limits]") {
  CHECK_THAT(refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nlatency_cycles = nan\n").message,
             Catch::StartsWith(":6: l1d.latency_cycles: nan is not a finite number of cycles"));
  CHECK_THAT(refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nlatency_cycles = 1e300\n").message,
             Catch::StartsWith(":6: l1d.latency_cycles: 1e+300 cycles is out of range: a cycle count must be within "
                               "-1000000000..1000000000"));
  CHECK_THAT(refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nmiss_penalty_cycles = -inf\n").message,
             Catch::StartsWith(":6: l1d.miss_penalty_cycles: -inf is not a finite number of cycles"));
  CHECK_THAT(refusal_of(kDevice + "[dram]\nlatency_cycles = 9223372036854775807\n").message,
             Catch::StartsWith(":5: dram.latency_cycles: 9.22337e+18 cycles is out of range"));
  // A NaN probability passed every "within 0..1" comparison.
  CHECK_THAT(refusal_of(kDevice + "[sim]\noutlier_probability = nan\n").message,
             Catch::StartsWith(":5: sim.outlier_probability: nan is not a finite number"));
  CHECK_THAT(refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nreplacement_policy = \"non_uniform\"\n"
                        "victim_probabilities = [0.5, nan, 0.25, 0.25]\n").message,
             Catch::StartsWith(":7: l1d.victim_probabilities: must hold finite numbers; it holds nan"));
}

TEST_CASE("sim limits: sets x ways that overflow give a message that holds", "[sim][limits]") {
  // 2^62 + 8 sets x 4 ways wraps to the 32 lines of 4096 B: it used to be accepted, then
  // allocated 2^62 sets.
  const Refusal wraps = refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nline_bytes = 128\nsets = 4611686018427387912\n"
                                             "ways = 4\n");
  CHECK_THAT(wraps.message, Catch::StartsWith(":7: l1d.sets: 4611686018427387912 sets x 4 ways x 128 B = more than "
                                              "2^64 B, but size_bytes = 4096; make them agree"));
  CHECK_THAT(refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nsets = 1099511627776\nways = 1073741824\n").message,
             Catch::StartsWith(":6: l1d.sets: 1099511627776 sets x 1073741824 ways x 128 B = more than 2^64 B"));
  // Unequal sets: a huge set no longer wraps the sum.
  CHECK_THAT(refusal_of(kDevice + "[tlb]\nl2_entries = 32\nl2_sets = [9223372036854775807, 9223372036854775807, 34]\n")
                 .message,
             Catch::StartsWith(":6: tlb.l2_sets: a set of 9223372036854775807 ways is more than the 32 lines of "
                               "l2_entries"));
  // A measured element: sets and ways compared in floating point.
  CHECK_THAT(refusal_of(kDevice + "[l1d]\nsize_bytes = 4096\nsets = 4611686018427387912\nways = 4\n"
                                  "[provenance.l1d]\nsize_bytes = { probe = \"t/size\" }\n")
                 .message,
             Catch::StartsWith(":6: l1d.sets: 4611686018427387912 sets x 4 ways x 128 B = more than 2^64 B, more "
                               "than 1 % from the measured size_bytes (32 lines)"));
}

TEST_CASE("sim limits: a folder as the description is named as a folder", "[sim][limits]") {
  const fs::path dir = write_temp("limits-dir", "") + ".d";
  fs::create_directories(dir);
  try {
    memtopo::engine::open_sim(dir.string());
    FAIL("a folder opened as a device description");
  } catch (const memtopo::Error& e) {
    CHECK(std::string(e.what()) == dir.string() + ": is a folder, not a regular file; name a simulated device "
                                                  "description's TOML file (e.g. examples/devices/hopper-like.toml)");
  }
  CHECK_THROWS_WITH(memtopo::engine::check_sim_description(dir.string()), Catch::Contains("is a folder"));
  // An empty file lacks [device]: named at its first line, not "line 0".
  CHECK_THAT(refusal_of("").message, Catch::StartsWith(":1: device: missing: a simulated device needs a [device] table"));
}
