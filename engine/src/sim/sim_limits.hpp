// Sane limits of a simulated device (docs/simulator.md, "Limits"): far above every GPU so far
// (the H100: 132 SMs, a 50 MiB L2), low enough that a description cannot make the simulator
// allocate more memory than a machine has before it says what is wrong.
#pragma once

#include <cstdint>
#include <string>

#include "sim/sim_model.hpp"

namespace memtopo::sim {

constexpr int64_t kMaxSmCount = 4096;
constexpr int64_t kMaxWarpSize = 1024;
constexpr int64_t kMaxWarpSchedulers = 1024;
// One cache instance (one SM's L1 partition, one L2 partition).
constexpr uint64_t kMaxCacheBytes = uint64_t(4) << 30;
constexpr uint64_t kMaxCacheLines = uint64_t(1) << 27;
constexpr int64_t kMaxTlbEntries = 65536;
// What any cycle count of a description may be (about half a second at 2 GHz per load).
constexpr double kMaxCycles = 1e9;
// The cache state of the whole simulated GPU (every instance of every cache and TLB); also at
// most half of this machine's memory (simulator_memory_limit()).
constexpr uint64_t kMaxSimulatorStateBytes = uint64_t(8) << 30;

// kMaxSimulatorStateBytes, or half the machine's physical memory when that is less.
uint64_t simulator_memory_limit();
// "64 GiB", "1.5 MiB", "512 B": sizes in messages.
std::string bytes_text(uint64_t bytes);

}  // namespace memtopo::sim
