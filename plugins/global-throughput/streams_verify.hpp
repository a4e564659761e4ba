// The best point of a stream series, run once more under the hardware counters: what the
// level its series names served against what the stream moved by design
// (docs/global-throughput.md, "Checked by counters").
#pragma once

#include <cstdint>
#include <string>

#include <memtopo/probe.hpp>

#include "streams_run.hpp"

namespace global_throughput {

// The level a series measures. SharedInputs: the L2 read by every block over one footprint,
// whose rate is what the L2 side delivers to SMs that ask for the same lines at once.
enum class StreamLevel { Dram, L2, L1, SharedInputs };

struct PointCheck {
  bool counted = false;  // false: why_not says why (the backend cannot count here)
  bool agrees = false;
  std::string why_not;
  memtopo::Verdict verdict;
  std::string how;  // what was counted, for the provenance note
};

PointCheck check_point(const memtopo::Context& ctx, StreamLevel level, const StreamLaunch& launch);

}  // namespace global_throughput
