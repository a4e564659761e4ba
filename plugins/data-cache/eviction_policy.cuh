// The replacement-policy kernel of the eviction-set probes (docs/cache-probes.md, "Replacement
// within an eviction set"): in one set, named by a target x and its minimal eviction set
// E0 .. E(W-1), which line a new one evicts after E0 was used again.
//
// A trial: three passes over x, E0, ..., E(W-1) (W + 1 lines of a W-way set: under LRU and FIFO
// every load misses, and the set ends holding E0 .. E(W-1), E0 the oldest), then E0 again (a
// hit), then x (a miss that evicts one line), then one timed load of E[p]. LRU evicts E1 (E0
// was used again), FIFO E0 (the first filled); other policies other lines or a spread.
// Position W, the scan trial: x twice (re-used), E0 .. E(W-1) once each, then x timed. LRU,
// FIFO and random replacement evict x (W new lines after it); a policy that keeps re-used
// lines keeps it.
#pragma once

#include <memtopo/device/kernel.hpp>

namespace data_cache {

constexpr uint32_t kMaxPolicyWays = 64;

struct PolicyArgs {
  unsigned long long buf;  // line k at buf + k * line_bytes
  uint32_t line_bytes;
  const uint32_t* lines;   // per target ways + 1 line numbers: x, then E0 .. E(W-1)
  const uint32_t* thresholds;  // per target: a load slower than this missed
  uint32_t ways;
  uint32_t target_count;
  uint32_t trials;          // per position
  uint32_t cg;              // 1: .cg loads (the L2), 0: .ca (the L1)
  int32_t* sm_owner;
  uint32_t sm_slots;
  uint32_t* next_target;
  unsigned long long* out;  // per target `ways` + 1 miss counts (positions, then the scan trial)
  uint32_t zero;
};

namespace detail {

// The lists are read .cg (not through the L1 under test), as the eviction kernel's are.
MEMTOPO_INLINE uint32_t read_cg(const uint32_t* p) {
  return memtopo::device::load<memtopo::device::Path::GlobalCg>(reinterpret_cast<unsigned long long>(p), 0);
}

MEMTOPO_INLINE uint32_t policy_load(const PolicyArgs& a, uint32_t line, uint32_t after) {
  namespace md = memtopo::device;
  const unsigned long long p = a.buf + (unsigned long long)line * a.line_bytes + (after & a.zero);
  return a.cg ? md::load<md::Path::GlobalCg>(p, 0) : md::load<md::Path::GlobalCa>(p, 0);
}

// One trial for position p: true when E[p] missed.
MEMTOPO_INLINE bool policy_trial(const PolicyArgs& a, const uint32_t* set, uint32_t p, uint32_t threshold,
                                 unsigned long long slot) {
  const uint32_t probe = read_cg(set + 1 + p);
  uint32_t v = probe & a.zero;  // the probe's line is known before the timing
  for (uint32_t pass = 0; pass < 3; ++pass)
    for (uint32_t i = 0; i <= a.ways; ++i) v += policy_load(a, read_cg(set + i), v);
  v += policy_load(a, read_cg(set + 1), v);  // E0 again
  v += policy_load(a, read_cg(set), v);      // x: evicts one line
  const unsigned long long t0 = memtopo::device::clock_after(v, slot);
  const uint32_t w = policy_load(a, probe, uint32_t(t0));
  return memtopo::device::clock_after(w, slot) - t0 > threshold;
}

// One scan trial: true when x missed after it was re-used and W new lines of its set came.
MEMTOPO_INLINE bool scan_trial(const PolicyArgs& a, const uint32_t* set, uint32_t threshold, unsigned long long slot) {
  const uint32_t x = read_cg(set);
  uint32_t v = policy_load(a, x, x & a.zero);
  v += policy_load(a, x, v);
  for (uint32_t i = 1; i <= a.ways; ++i) v += policy_load(a, read_cg(set + i), v);
  const unsigned long long t0 = memtopo::device::clock_after(v, slot);
  const uint32_t w = policy_load(a, x, uint32_t(t0));
  return memtopo::device::clock_after(w, slot) - t0 > threshold;
}

}  // namespace detail

// One block per SM (as eviction_sets); thread 0 of each runs the trials of its targets.
MEMTOPO_KERNEL void eviction_policy(PolicyArgs a) {
  MEMTOPO_SHARED_VAR(uint32_t, ticket);
  MEMTOPO_SHARED_VAR(uint32_t, slot_word);
  if (memtopo::device::thread_index() != 0) return;
  const unsigned long long slot = memtopo::device::shared_address(&slot_word);
  if (!memtopo::device::claim_sm(a.sm_owner, a.sm_slots)) return;
  for (;;) {
    ticket = memtopo::device::atomic_add(a.next_target, 1u);
    if (ticket >= a.target_count) return;
    const uint32_t* set = a.lines + size_t(ticket) * (a.ways + 1);
    const uint32_t threshold = detail::read_cg(a.thresholds + ticket);
    for (uint32_t p = 0; p <= a.ways && p <= kMaxPolicyWays; ++p) {
      unsigned long long misses = 0;
      for (uint32_t t = 0; t < a.trials; ++t) {
        const bool missed =
            p < a.ways ? detail::policy_trial(a, set, p, threshold, slot) : detail::scan_trial(a, set, threshold, slot);
        misses += missed ? 1 : 0;
      }
      memtopo::device::store_cg(a.out + size_t(ticket) * (a.ways + 1) + p, misses);
    }
  }
}

}  // namespace data_cache
