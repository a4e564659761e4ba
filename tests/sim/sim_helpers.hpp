// Helpers of the simulator tests: open a shipped or ad-hoc device, run one chase.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "memtopo/engine.hpp"

namespace simtest {

std::string device_path(const std::string& name);    // examples/devices/<name>
std::string measured_path(const std::string& name);  // tests/sim/measured/<name>
// What the build's plugins declare their keys replay as (Registry::replay_map).
memtopo::engine::ReplayMap plugins_replay_map();
std::unique_ptr<memtopo::engine::Device> open_device(const std::string& name);
// Writes `text` to a fresh file under the build tree and returns its path.
std::string write_temp(const std::string& stem, const std::string& text);
toml::table read_device_file(const std::string& name);
// The simulated device described by `text` (written by write_temp).
std::unique_ptr<memtopo::engine::Device> open_text(const std::string& stem, const std::string& text);
std::string toml_text_of(const std::string& path);  // the whole file
int64_t key(const toml::table& t, const char* element, const char* k);

struct Chase {
  std::vector<uint32_t> index, latency;
  int32_t sm = -1;
  double average = 0;
};

// A stride chase (footprint and stride in bytes), recorded (MT_RECORD_SAMPLES); `average`
// from the same chase timed as a whole (MT_RECORD_TOTAL).
Chase fine(const memtopo::engine::Device& d, mt_space space, uint64_t footprint_bytes, uint64_t stride_bytes,
           uint64_t warmup_steps, uint64_t steps, int32_t sm = -1, int32_t carveout = -1);
// An explicit chase over `next`.
Chase fine_explicit(const memtopo::engine::Device& d, mt_space space, const std::vector<uint32_t>& next, uint32_t start,
                    uint64_t warmup_steps, uint64_t steps);
double timing_overhead(const memtopo::engine::Device& d);

// Loads whose latency is above `hit_cycles`.
size_t misses(const std::vector<uint32_t>& latency, uint32_t hit_cycles);
std::vector<size_t> miss_positions(const std::vector<uint32_t>& latency, uint32_t hit_cycles);

}  // namespace simtest
