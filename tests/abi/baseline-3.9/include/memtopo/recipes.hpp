// Chase-array recipes (library memtopo::analysis). Every recipe builds a memtopo::ChaseArray of
// 4-byte elements (element i sits at byte offset 4 * i of the device buffer) whose visited
// elements form ONE cycle, and says where to start. Footprints and strides are in bytes and
// must be multiples of 4. Invalid arguments (zero or misaligned sizes, more than 2^32
// elements, colliding positions) throw std::invalid_argument with a message naming the
// argument; the probe layer turns that into a failed probe with that message.
#pragma once

#include <cstdint>
#include <vector>

#include "memtopo/probe.hpp"

namespace memtopo::recipes {

struct Chase {
  ChaseArray array;
  uint32_t start = 0;             // element index of the first load
  std::vector<uint32_t> order;    // the cycle's elements in visit order, from `start`
  uint64_t footprint_bytes = 0;   // array length * 4
  uint64_t stride_bytes = 0;      // constant stride, or 0 when strides vary
  uint64_t cycle_length() const { return order.size(); }
};

// next[i] = (i + s) % n over n = footprint/4 elements, s = stride/4, EXPLICIT form (the thesis'
// and Mei and Chu's array). Starts at 0. The cycle through 0 has n / gcd(n, s) elements.
// For a sparse, very large footprint use ChaseArray::stride() instead (no host memory).
Chase constant_stride(uint64_t footprint_bytes, uint64_t stride_bytes);

// One random cycle through every line of the footprint (Sattolo's algorithm: a uniformly
// random cyclic permutation, so the chase is a single cycle of footprint/line_bytes loads that
// defeats prefetchers). Each line is visited at byte `word_offset_bytes` within it. The seed
// fixes the permutation on every platform (own generator, not std distributions).
Chase random_lines(uint64_t footprint_bytes, uint64_t line_bytes, uint64_t seed = 0x6d656d746f706fULL,
                   uint64_t word_offset_bytes = 0);

// A cycle through the given byte offsets, in the given order (each a multiple of 4, all
// distinct). footprint_bytes = 0: just past the largest offset. The building block of the
// recipes below and of custom patterns (e.g. "A B C ... A X A" written with distinct words of
// the same lines standing for repeated visits).
Chase from_byte_offsets(const std::vector<uint64_t>& byte_offsets, uint64_t footprint_bytes = 0);

// Mei and Chu's non-uniform stride array (paper 001, section 5.2, Fig. 13b): the chase takes
// `count` steps of `stride_bytes` for each segment in turn, starting at byte 0, then returns to
// the start. With footprint_bytes > 0 positions wrap modulo the footprint (so a segment may go
// back to lines visited before, through other words of them); positions must not repeat.
// Example (TLB and cache spectrum): {{32 MiB, 8}, {1 MiB, 64}, {4, 7}}.
struct StrideSegment {
  uint64_t stride_bytes = 0;
  uint64_t count = 0;
};
Chase non_uniform_stride(const std::vector<StrideSegment>& segments, uint64_t footprint_bytes = 0);

// Set index of a byte offset under modulo mapping: (offset / line_bytes) % sets.
uint64_t set_of(uint64_t byte_offset, uint64_t sets, uint64_t line_bytes);

// k lines that all map to one set (modulo mapping): byte offsets
//   set_index * line_bytes + j * sets * line_bytes + word_offset_bytes,  j = 0 .. k-1,
// chained in that order into a cycle (stride = sets * line_bytes, footprint k * sets * line).
// With k = ways + 1 an LRU or FIFO set misses on every access (Mei and Chu stage 2).
Chase set_conflict(uint64_t k, uint64_t sets, uint64_t line_bytes, uint64_t set_index = 0,
                   uint64_t word_offset_bytes = 0);

// The same for several sets in one chase (many sets tested at once): k lines of each listed
// set. interleave = true visits line j of every set before line j + 1 (round robin); false
// visits all k lines of one set, then the next set. Each set's lines are still visited
// cyclically in the same order, so per-set behaviour equals set_conflict's.
Chase multi_set_conflict(uint64_t k, uint64_t sets, uint64_t line_bytes, const std::vector<uint64_t>& set_indices,
                         bool interleave = true, uint64_t word_offset_bytes = 0);

// The first `steps` elements a chase visits from `start` (works for both array kinds);
// checks and tests use it.
std::vector<uint32_t> walk(const ChaseArray& array, uint32_t start, uint64_t steps);
// Length of the cycle through `start`, or 0 when `start` is not on a cycle within `limit` steps.
uint64_t cycle_length(const ChaseArray& array, uint32_t start, uint64_t limit = 1ULL << 32);

}  // namespace memtopo::recipes
