// The eviction-set kernel of data-cache/l1d-eviction-sets and l2-eviction-sets
// (docs/cache-probes.md, "Eviction sets and the set-index function"): each block claims an SM
// of its own and reduces the candidate pool of one target line x to a minimal eviction set by
// group testing, all on the device, so that one launch finds the sets of many targets at once.
//
// "S evicts x": the block loads S (every line .ca, or .cg for the L2), thread 0 loads x, the
// block loads S again passes - 1 times, and thread 0 times x once more; a miss of the cache
// under test (slower than the calibrated threshold) means S holds at least as many lines of x's set as the set has ways
// (under LRU-like replacement: x was the set's newest line before the later passes). Each test
// is the majority of `trials`. The reduction sweeps over S in G groups (8 first) and drops
// every group whose removal still evicts x; a sweep that removes less than half doubles G,
// until every line is a group of its own and none can go: a minimal set, whose size is the
// set's ways.
#pragma once

#include <memtopo/device/kernel.hpp>

namespace data_cache {

// Per target in `out`: kOutHeader words, then up to kMaxSetLines line numbers.
constexpr uint32_t kOutHeader = 17;
constexpr uint32_t kMaxSetLines = 120;
constexpr uint32_t kOutStride = kOutHeader + kMaxSetLines;
// Header words.
enum : uint32_t { kPoolEvicts = 0, kSetLines, kTests, kSm, kHitRaw, kMissRaw, kComplete, kTarget, kCalibration, kLines = 16 };
// kCalibration..+7: the calibration's four miss and four hit times; kLines: lines of S loaded.

struct EvictionArgs {
  unsigned long long buf;  // the lines' buffer; line k at buf + k * line_bytes
  uint32_t line_bytes;
  const uint32_t* targets;  // line number of each target (read .cg, like the lists)
  uint32_t* lists;          // per target `pool` candidate line numbers, rewritten as S shrinks
  uint32_t pool;
  uint32_t target_count;
  uint32_t passes;          // over S per trial, at least 2
  uint32_t trials;          // per test (majority)
  uint32_t max_tests;       // per target; past it the reduction stops (kComplete = 0)
  unsigned long long max_lines;  // lines of S loaded per target; past it the reduction stops too
  int32_t* sm_owner;        // one zeroed int per SM slot
  uint32_t sm_slots;
  uint32_t* next_target;    // zeroed ticket counter
  unsigned long long* out;  // target_count * kOutStride words
  uint32_t zero;            // 0, unknown to the compiler (timed_load, load_pass)
  // 0: S and x load .ca, the L1 is under test; 1: .cg, the L2 (through the SM's near partition).
  uint32_t cg;
  // The hit/miss threshold: this many thousandths of the way from the slowest calibration hit
  // to the calibration miss (the least miss for the L1; the second least for the L2, whose
  // calibration lines may already be in it).
  uint32_t threshold_permille;
  // 0, or lines of a buffer of their own (`flush`, line k at flush + k * line_bytes) that each
  // trial loads first, x after them, then S: every line of S misses after x, as FIFO needs.
  uint32_t flush_lines;
  unsigned long long flush;
};

namespace detail {

MEMTOPO_INLINE unsigned long long line_address(const EvictionArgs& a, uint32_t line) {
  return a.buf + (unsigned long long)line * a.line_bytes;
}

MEMTOPO_INLINE uint32_t load_line(const EvictionArgs& a, unsigned long long address) {
  namespace md = memtopo::device;
  return a.cg ? md::load<md::Path::GlobalCg>(address, 0) : md::load<md::Path::GlobalCa>(address, 0);
}

MEMTOPO_INLINE uint32_t list_at(const uint32_t* list, uint32_t i) {
  return memtopo::device::load<memtopo::device::Path::GlobalCg>(reinterpret_cast<unsigned long long>(list + i), 0);
}

// One pass of the block over S without [skip_begin, skip_end), then a barrier.
// Each thread uses its loads' values before the barrier (keep_if with the run-time zero): the
// loads cannot be dropped, and every line of the pass is in the L1 before anything after it.
// One pass of the block over the flush lines, then a barrier.
MEMTOPO_INLINE uint32_t flush_pass(const EvictionArgs& a) {
  uint32_t acc = 0;
  for (uint32_t i = memtopo::device::thread_index(); i < a.flush_lines; i += memtopo::device::block_threads())
    acc += load_line(a, a.flush + (unsigned long long)i * a.line_bytes);
  memtopo::device::keep_if(acc, a.next_target, a.zero);
  memtopo::device::sync_block();
  return acc;
}

MEMTOPO_INLINE uint32_t load_pass(const EvictionArgs& a, const uint32_t* s, uint32_t n, uint32_t skip_begin,
                                  uint32_t skip_end) {
  uint32_t acc = 0;
  const uint32_t kept = n - (skip_end - skip_begin);
  for (uint32_t i = memtopo::device::thread_index(); i < kept; i += memtopo::device::block_threads()) {
    const uint32_t j = i < skip_begin ? i : i + (skip_end - skip_begin);
    acc += load_line(a, line_address(a, list_at(s, j)));
  }
  memtopo::device::keep_if(acc, a.next_target, a.zero);
  memtopo::device::sync_block();
  return acc;
}

// Raw cycles of one load of `address` by the calling thread. The address depends on the
// first clock read (`zero` is 0 at run time, unknown to the compiler), so that the load, whose
// address is otherwise known early, cannot be scheduled before the timing starts.
MEMTOPO_INLINE uint32_t timed_load(const EvictionArgs& a, unsigned long long address, unsigned long long slot) {
  const unsigned long long t0 = memtopo::device::clock_now();
  const uint32_t v = load_line(a, address + (t0 & a.zero));
  return uint32_t(memtopo::device::clock_after(v, slot) - t0);
}

// The threshold between a hit and a miss of the cache under test (called by the block's lead;
// its calibration stored in `out`), from four pool lines each timed twice, a miss and a hit.
// For the L1 each is first loaded .cg (into the L2, not the L1): its miss hits the L2, as an
// evicted x does. For the L2 the first load goes to memory; one of the four may already be in
// the L2, so the second least miss counts, and the hit is x's own.
MEMTOPO_INLINE uint32_t calibrate(const EvictionArgs& a, const uint32_t* s, unsigned long long x, unsigned long long* out,
                                  unsigned long long slot) {
  uint32_t miss = 0xffffffffu, second = 0xffffffffu, hit = 0;
  for (uint32_t i = 0; i < 4 && i < a.pool; ++i) {
    const unsigned long long p = line_address(a, list_at(s, i));
    // Waited for (its value stored) before the timing starts.
    if (!a.cg) memtopo::device::clock_after(memtopo::device::load<memtopo::device::Path::GlobalCg>(p, 0), slot);
    const uint32_t m = detail::timed_load(a, p, slot);
    const uint32_t h = detail::timed_load(a, p, slot);
    memtopo::device::store_cg(out + kCalibration + i, (unsigned long long)m);
    memtopo::device::store_cg(out + kCalibration + 4 + i, (unsigned long long)h);
    second = m < miss ? miss : (m < second ? m : second);
    miss = m < miss ? m : miss;
    hit = h > hit ? h : hit;
  }
  if (a.cg && second != 0xffffffffu) miss = second;
  // The L2's hit is x's own, as near or far as x's home (a GPU may keep far lines only in
  // their home partition): the lesser of two timed loads after one untimed.
  if (a.cg) {
    memtopo::device::clock_after(detail::load_line(a, x), slot);
    const uint32_t h0 = detail::timed_load(a, x, slot), h1 = detail::timed_load(a, x, slot);
    hit = h0 < h1 ? h0 : h1;
  }
  memtopo::device::store_cg(out + kHitRaw, (unsigned long long)hit);
  memtopo::device::store_cg(out + kMissRaw, (unsigned long long)miss);
  return miss > hit ? hit + uint32_t((unsigned long long)(miss - hit) * a.threshold_permille / 1000) : hit;
}

}  // namespace detail

// Reduces the pool of target `ticket` (see the top of this file); every thread of the block
// calls it and takes the same decisions.
MEMTOPO_INLINE void reduce_target(const EvictionArgs& a, uint32_t ticket, unsigned long long slot, int& verdict,
                                  uint32_t& threshold) {
  const bool lead = memtopo::device::thread_index() == 0;
  unsigned long long* out = a.out + size_t(ticket) * kOutStride;
  uint32_t* s = a.lists + size_t(ticket) * a.pool;
  const uint32_t x_line = detail::list_at(a.targets, ticket);
  const unsigned long long x = detail::line_address(a, x_line);
  // The threshold between a hit and a miss of the cache under test (calibrate).
  if (lead) threshold = detail::calibrate(a, s, x, out, slot);
  memtopo::device::sync_block();
  uint32_t n = a.pool, tests = 0, acc = 0;
  unsigned long long lines = 0;
  auto evicts = [&](uint32_t skip_begin, uint32_t skip_end) {
    uint32_t yes = 0, no = 0;
    while (2 * yes <= a.trials && 2 * no <= a.trials) {  // until a majority is reached
      // FIFO inserts on misses alone: S's lines, cached from the trial before, would hit after
      // x and leave it. With a flush the trial loads the flush lines, x, then S once: every
      // line of S misses after x. Else S, x, S again passes - 1 times.
      const uint32_t after_x = a.flush_lines ? 1 : a.passes - 1;
      lines += (unsigned long long)(n - (skip_end - skip_begin)) * (after_x + (a.flush_lines ? 0 : 1));  // of the pool
      acc += a.flush_lines ? detail::flush_pass(a) : detail::load_pass(a, s, n, skip_begin, skip_end);
      if (lead) {
        acc += detail::load_line(a, x);
        memtopo::device::keep_if(acc, a.next_target, a.zero);  // x is in the cache before the next pass
      }
      memtopo::device::sync_block();
      for (uint32_t p = 0; p < after_x; ++p) acc += detail::load_pass(a, s, n, skip_begin, skip_end);
      if (lead) verdict = detail::timed_load(a, x, slot) > threshold ? 1 : 0;
      memtopo::device::sync_block();
      (verdict ? yes : no) += 1;
      memtopo::device::sync_block();
    }
    ++tests;
    return 2 * yes > a.trials;
  };
  const bool pool_evicts = evicts(n, n);
  bool complete = pool_evicts;
  // Sweeps over S in groups of n / groups lines: each group whose removal still evicts x goes.
  // A sweep that removes less than half of S doubles the groups, until single lines.
  uint32_t groups = n < 8 ? n : 8;
  while (pool_evicts && n > 1) {
    const uint32_t before = n, size = (n + groups - 1) / groups;
    for (uint32_t b = 0; b < n;) {
      if (tests >= a.max_tests || lines >= a.max_lines) break;
      const uint32_t e = b + size < n ? b + size : n;
      if (!evicts(b, e)) {
        b = e;
        continue;
      }
      if (lead)
        for (uint32_t i = e; i < n; ++i) memtopo::device::store_cg(s + b + (i - e), detail::list_at(s, i));
      memtopo::device::sync_block();
      n -= e - b;
    }
    if (tests >= a.max_tests || lines >= a.max_lines) {
      complete = false;
      break;
    }
    if (size == 1) break;  // every line was needed when tested alone: minimal
    if (2 * n > before) groups = 2 * groups < n ? 2 * groups : n;
    if (groups > n) groups = n;
  }
  memtopo::device::keep(acc);
  if (!lead) return;
  memtopo::device::store_cg(out + kPoolEvicts, (unsigned long long)(pool_evicts ? 1 : 0));
  memtopo::device::store_cg(out + kSetLines, (unsigned long long)n);
  memtopo::device::store_cg(out + kTests, (unsigned long long)tests);
  memtopo::device::store_cg(out + kComplete, (unsigned long long)(complete ? 1 : 0));
  memtopo::device::store_cg(out + kTarget, (unsigned long long)x_line);
  memtopo::device::store_cg(out + kLines, lines);
  for (uint32_t i = 0; i < n && i < kMaxSetLines; ++i)
    memtopo::device::store_cg(out + kOutHeader + i, (unsigned long long)detail::list_at(s, i));
}

// One block per SM (claim_sm); each takes targets from the ticket counter until none is left.
MEMTOPO_KERNEL void eviction_sets(EvictionArgs a) {
  MEMTOPO_SHARED_VAR(int, verdict);
  MEMTOPO_SHARED_VAR(uint32_t, ticket);
  MEMTOPO_SHARED_VAR(uint32_t, slot_word);
  MEMTOPO_SHARED_VAR(uint32_t, threshold);
  MEMTOPO_SHARED_VAR(uint32_t, sm);
  const bool lead = memtopo::device::thread_index() == 0;
  const unsigned long long slot = memtopo::device::shared_address(&slot_word);
  if (lead) ticket = memtopo::device::claim_sm(a.sm_owner, a.sm_slots, &sm) ? 0 : 1;
  memtopo::device::sync_block();
  if (ticket) return;  // another block has this SM
  for (;;) {
    if (lead) {
      ticket = memtopo::device::atomic_add(a.next_target, 1u);
      if (ticket < a.target_count)
        memtopo::device::store_cg(a.out + size_t(ticket) * kOutStride + kSm, (unsigned long long)sm);
    }
    memtopo::device::sync_block();
    if (ticket >= a.target_count) return;
    reduce_target(a, ticket, slot, verdict, threshold);
    memtopo::device::sync_block();
  }
}

}  // namespace data_cache
