// Small helpers shared by the steps of the cache procedure.
#pragma once

#include <cstdint>
#include <numeric>
#include <sstream>
#include <string>

#include "memtopo/cache/measurer.hpp"

namespace memtopo::cache {

// Largest array one footprint uses (the texture path reads at most 2^28 elements) and the
// most array bytes one launch allocates.
constexpr uint64_t kArrayBytes = uint64_t(256) << 20;
constexpr uint64_t kLaunchBytes = uint64_t(4) << 30;

// The chase recipes::constant_stride describes, as a STRIDE array: no host memory, no upload
// of the whole footprint, and staggered streams can split it (Measurer::staggered_streams).
inline recipes::Chase stride_chase(uint64_t footprint_bytes, uint64_t stride) {
  recipes::Chase c;
  c.array = ChaseArray::stride(footprint_bytes, stride);
  c.start = 0;
  c.footprint_bytes = footprint_bytes / 4 * 4;
  c.stride_bytes = stride;
  return c;
}

// A chase over k lines spaced `stride` bytes apart (a sparse STRIDE array: no host memory).
inline recipes::Chase spaced_lines(uint64_t k, uint64_t stride) {
  recipes::Chase c;
  c.array = ChaseArray::stride(k * stride, stride);
  c.start = 0;
  c.footprint_bytes = k * stride;
  c.stride_bytes = stride;
  return c;
}

// k lines `stride` bytes apart where the target's line map puts them (spaced_lines without one).
inline recipes::Chase mapped_lines(const Target& t, uint64_t k, uint64_t stride) {
  if (t.line_map.empty()) return spaced_lines(k, stride);
  std::vector<uint64_t> offsets;
  offsets.reserve(k);
  for (uint64_t i = 0; i < k; ++i) offsets.push_back(t.line_map.place(i * stride));
  return recipes::from_byte_offsets(offsets, t.line_map.region_bytes);
}

// A footprint of `footprint_bytes` read `stride` bytes apart where the target's line map puts
// its words (stride_chase without one).
inline recipes::Chase mapped_stride(const Target& t, uint64_t footprint_bytes, uint64_t stride) {
  if (t.line_map.empty()) return stride_chase(footprint_bytes, stride);
  return mapped_lines(t, footprint_bytes / stride, stride);
}

// The largest footprint a step may plan: the line map's reach, else the path's (0: none).
inline uint64_t footprint_cap(const Target& t) {
  return t.line_map.empty() ? t.max_footprint_bytes : t.line_map.reach_bytes();
}

// The longest footprint the geometry steps may plan: footprint_cap, else one array's most.
inline uint64_t planned_reach_bytes(const Target& t) { return footprint_cap(t) ? footprint_cap(t) : kArrayBytes; }

// Loads in one pass of the chase's cycle.
inline uint64_t cycle_of(const recipes::Chase& c) {
  if (!c.order.empty()) return c.order.size();
  if (c.array.stride_elems) return c.array.elems / std::gcd(c.array.elems, c.array.stride_elems);
  return recipes::cycle_length(c.array, c.start);
}

// "4 MiB", "48 KiB", "1000 B".
inline std::string fmt_bytes(uint64_t b) {
  std::ostringstream o;
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) o << (b >> 20) << " MiB";
  else if (b >= 1024 && b % 1024 == 0) o << (b >> 10) << " KiB";
  else o << b << " B";
  return o.str();
}

inline uint64_t round_up_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace memtopo::cache
