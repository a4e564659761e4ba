// tlb: the chases of the TLB probes. One load per page (plus a line, so that the loads of a
// chase fall in different cache sets) through the L2-only path, so that no SM cache answers
// a load before it is translated.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <memtopo/analysis/units.hpp>
#include <memtopo/probe.hpp>

namespace tlb {

using memtopo::analysis::GiB;
using memtopo::analysis::KiB;
using memtopo::analysis::MiB;

// Bytes between loads that visit `loads` consecutive pages of `page_bytes`: a page, a 4 KiB
// chunk and a line while the loads stay within their pages (neighbouring loads then fall into
// different L2 partitions' chunks and sets, so a few pages show every kind of L2 hit), else a
// page and a line, a 64 or a 32 B sector, else the page.
uint64_t page_stride(uint64_t page_bytes, uint64_t loads);

// Loads whose raw cycles lie in (slow_raw, max_raw] (max_raw 0: no ceiling) count as misses
// of one TLB level. A level's misses may form several windows: a near and a far L2
// partition's hits each gain the miss penalty, and a far hit may lie between the two misses.
// The hits that miss into a window lie in (floor_raw, slow_raw]: the window's level.
struct Window {
  uint32_t slow_raw = 0, max_raw = 0, floor_raw = 0;
};

// Loads per pass of one chase in each window, and in each window's level (floor_raw, max_raw]:
// the hits that noise's tail or a miss may move into the window, and those it did.
struct WindowCounts {
  std::vector<double> slow, level;
};

// Elements between the starts of chases over the same pages (a line and a sector: 1056 B).
constexpr uint32_t kLineShiftElems = 264;

// Chases of up to this footprint run by index (per-load samples and counts); beyond, only
// as pointer chases timed as a whole.
constexpr uint64_t kIndexedFootprint = 16 * GiB;

class Chaser {
 public:
  Chaser(const memtopo::Context& ctx, mt_space space) : ctx_(ctx), space_(space) {}
  // Cycles per load (one clock pair around whole passes, after one pass of warm-up) of a chase
  // of `loads` loads `stride` bytes apart.
  double cycles(uint64_t loads, uint64_t stride) const;
  // Loads per pass in each window (raw cycles, timing overhead included) and in its level,
  // over `passes` passes after one pass of warm-up, from each start spread_samples takes
  // (`spread`; else from the first line alone): two counted chases per window and start.
  WindowCounts window_counts(uint64_t loads, uint64_t stride, const std::vector<Window>& windows,
                             uint64_t passes = 4, bool spread = true) const;
  // The low cycles of 512 per-load raw cycles (low_level_cycles): a hit in the nearest L2
  // partition plus the translation, whatever share of the lines lies far.
  double low_cycles(uint64_t loads, uint64_t stride) const;
  // Per-load raw cycles of `count` loads of such a chase from element `start` (the same pages
  // while start x 4 + loads x (stride - page) stays within a page), after one pass of warm-up.
  std::vector<uint32_t> samples(uint64_t loads, uint64_t stride, uint64_t count, uint32_t start = 0) const;
  // About `count` such samples from chases that start on other lines of the same pages (at
  // least 64 lines in all, where the pages have room): every kind of L2 hit shows.
  std::vector<uint32_t> spread_samples(uint64_t loads, uint64_t stride, uint64_t count) const;
  // How many chases spread_samples and window_counts run over the same pages.
  static uint64_t spread_chases(uint64_t loads, uint64_t stride);

 private:
  memtopo::Job job(const memtopo::ChaseArray& a, uint64_t loads) const;
  const memtopo::Context& ctx_;
  mt_space space_;
};

// The windows of one level's misses: latency levels of per-load samples of two chases, one of
// `hit_loads` pages that the level holds and one of `miss_loads` that overflow it. The levels
// of the second chase that the first one lacks are misses. Empty when there are none.
std::vector<Window> miss_windows(const Chaser& chase, uint64_t stride, uint64_t hit_loads, uint64_t miss_loads);

// The largest footprint a chase may span: three quarters of the device memory; the option
// max_footprint_bytes lowers it.
uint64_t footprint_limit(const memtopo::Context& ctx);

// Why a level's values are uncertain where its chases fill the L2 (empty: they do not). One
// line a page: a level of E entries is searched with chases of up to about 2E lines, and where
// those are half the L2 or more, L2 misses of sets that fill unevenly or replace at random come
// at DRAM latency, in the level's window. What builds on the level (its sets) is as uncertain.
std::string crowds_l2(const memtopo::Context& ctx, uint64_t entries);

}  // namespace tlb
