// What the streams' series are and what a series measured, shared by its measurement
// (streams.cpp) and its report (streams_report.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <memtopo/probe.hpp>

#include "streams_run.hpp"
#include "streams_search.hpp"
#include "streams_verify.hpp"

namespace global_throughput {

constexpr double kNear = 0.95;  // "the smallest configuration within 95 % of the best"
constexpr size_t kColumns = 10;  // of the raw rows

enum class Where { Dram, L2, L1 };

struct Series {
  const char* name;  // key prefix: dram_read, l2_write, ...
  Where where;
  uint32_t op;       // MT_SWEEP_*
  // Every block reads one whole footprint: SMs ask for the same lines at once (docs/global-throughput.md).
  bool shared_inputs = false;
  StreamLevel level() const {
    if (shared_inputs) return StreamLevel::SharedInputs;
    return where == Where::Dram ? StreamLevel::Dram : where == Where::L2 ? StreamLevel::L2 : StreamLevel::L1;
  }
};

struct Measured {
  std::vector<StreamPoint> points;
  std::vector<double> rows;
  double best_per_cycle = 0;  // of the best point: whole GPU (L1: per SM)
  PointCheck check;           // the best point under the counters
  std::vector<StreamRun> first_runs;  // of each point
  bool median_windows = false;  // the highest points keep their median of three windows
  // The best point's runs of two windows each: its quickest long window less its quickest short one.
  bool quickest_windows = false;
  double best_spread = 0;  // of the best point's three windows: (highest - lowest) / median
};

// Three windows of the best point further apart than this (relative to their median) leave its
// rate uncertain by about as much: noise in the windows (interruptions), not the level, sets
// it. A GPU's windows of one point agree within a few per cent.
constexpr double kWindowSpread = 0.1;
// Runs of two windows each: the difference of two windows carries both windows' noise, and one
// interruption at a window's end moves a simulated DRAM point's difference by several per cent
// (random device 35: 2.2 % above its rate with three runs 9.5 % apart).
constexpr double kPairedWindowSpread = 0.05;

void report_series(memtopo::Context& ctx, const Series& s, const Measured& m);
// Every key of a series that measured no point.
void absent_series(memtopo::Context& ctx, const Series& s, const std::string& why);

// A DRAM rate over the theoretical peak is no measurement of DRAM: the description's clock or
// bus width is wrong (a simulated device's made-up [device] table), or a cache absorbed the
// stream. The rate stays; its fraction is refused with the reason.
constexpr const char* kNoTheoretical = "the device reports no memory clock or bus width";
void report_fraction(memtopo::Context& ctx, const std::string& name, double rate, double theoretical);

}  // namespace global_throughput
