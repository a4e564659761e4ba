#include "memtopo/recipes.hpp"

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "rng.hpp"

namespace memtopo::recipes {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument(what); }

void require_word_multiple(const char* recipe, const char* name, uint64_t bytes, bool allow_zero = false) {
  if (!allow_zero && bytes == 0) bad(std::string(recipe) + ": " + name + " must be > 0");
  if (bytes % 4) bad(std::string(recipe) + ": " + name + " = " + std::to_string(bytes) + " is not a multiple of 4 bytes");
}

uint64_t elems_of(const char* recipe, uint64_t footprint_bytes) {
  require_word_multiple(recipe, "footprint_bytes", footprint_bytes);
  const uint64_t n = footprint_bytes / 4;
  if (n > (1ULL << 32)) bad(std::string(recipe) + ": footprint " + std::to_string(footprint_bytes) +
                            " bytes needs more than 2^32 elements (32-bit indices)");
  return n;
}

// Chains the element list into one cycle of an explicit array of `elems` elements.
// Unvisited elements point at the start, so a stray load lands back on the cycle.
Chase chain(const char* recipe, std::vector<uint32_t> order, uint64_t elems) {
  Chase c;
  if (order.empty()) bad(std::string(recipe) + ": no element to visit");
  c.array.next.assign(elems, order.front());
  std::vector<uint8_t> seen(elems, 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t e = order[i];
    if (e >= elems) bad(std::string(recipe) + ": element " + std::to_string(e) + " (byte " + std::to_string(4ULL * e) +
                        ") lies outside the footprint of " + std::to_string(4 * elems) + " bytes");
    if (seen[e]) bad(std::string(recipe) + ": byte offset " + std::to_string(4ULL * e) + " is visited twice (step " +
                     std::to_string(i) + "); a chase element has one successor, use another word of the line");
    seen[e] = 1;
    c.array.next[e] = order[(i + 1) % order.size()];
  }
  c.start = order.front();
  c.order = std::move(order);
  c.footprint_bytes = 4 * elems;
  return c;
}

}  // namespace

Chase constant_stride(uint64_t footprint_bytes, uint64_t stride_bytes) {
  const uint64_t n = elems_of("constant_stride", footprint_bytes);
  require_word_multiple("constant_stride", "stride_bytes", stride_bytes);
  const uint64_t s = stride_bytes / 4;
  Chase c;
  c.array.next.resize(n);
  for (uint64_t i = 0; i < n; ++i) c.array.next[i] = static_cast<uint32_t>((i + s) % n);
  c.start = 0;
  uint64_t e = 0;
  do {
    c.order.push_back(static_cast<uint32_t>(e));
    e = (e + s) % n;
  } while (e != 0);
  c.footprint_bytes = footprint_bytes;
  c.stride_bytes = stride_bytes;
  return c;
}

Chase random_lines(uint64_t footprint_bytes, uint64_t line_bytes, uint64_t seed, uint64_t word_offset_bytes) {
  const uint64_t n = elems_of("random_lines", footprint_bytes);
  require_word_multiple("random_lines", "line_bytes", line_bytes);
  require_word_multiple("random_lines", "word_offset_bytes", word_offset_bytes, true);
  if (word_offset_bytes >= line_bytes)
    bad("random_lines: word_offset_bytes " + std::to_string(word_offset_bytes) + " must be below line_bytes " +
        std::to_string(line_bytes));
  const uint64_t lines = footprint_bytes / line_bytes;
  if (lines == 0) bad("random_lines: footprint " + std::to_string(footprint_bytes) + " bytes holds no line of " +
                      std::to_string(line_bytes) + " bytes");
  // Sattolo: swapping each position only with an earlier one yields a single n-cycle.
  std::vector<uint64_t> succ(lines);
  std::iota(succ.begin(), succ.end(), uint64_t{0});
  std::mt19937_64 gen(seed);
  for (uint64_t i = lines - 1; i > 0; --i) std::swap(succ[i], succ[analysis::detail::uniform_below(gen, i)]);
  std::vector<uint32_t> order;
  order.reserve(lines);
  uint64_t line = 0;
  for (uint64_t k = 0; k < lines; ++k) {
    order.push_back(static_cast<uint32_t>((line * line_bytes + word_offset_bytes) / 4));
    line = succ[line];
  }
  Chase c = chain("random_lines", std::move(order), n);
  return c;
}

Chase from_byte_offsets(const std::vector<uint64_t>& byte_offsets, uint64_t footprint_bytes) {
  if (byte_offsets.empty()) bad("from_byte_offsets: no offsets");
  uint64_t max_off = 0;
  for (size_t i = 0; i < byte_offsets.size(); ++i) {
    if (byte_offsets[i] % 4)
      bad("from_byte_offsets: offset " + std::to_string(byte_offsets[i]) + " (entry " + std::to_string(i) +
          ") is not a multiple of 4 bytes");
    max_off = std::max(max_off, byte_offsets[i]);
  }
  const uint64_t fp = footprint_bytes ? footprint_bytes : max_off + 4;
  const uint64_t n = elems_of("from_byte_offsets", fp);
  std::vector<uint32_t> order;
  order.reserve(byte_offsets.size());
  for (uint64_t off : byte_offsets) {
    if (off >= fp) bad("from_byte_offsets: offset " + std::to_string(off) + " lies outside the footprint of " +
                       std::to_string(fp) + " bytes");
    order.push_back(static_cast<uint32_t>(off / 4));
  }
  return chain("from_byte_offsets", std::move(order), n);
}

Chase non_uniform_stride(const std::vector<StrideSegment>& segments, uint64_t footprint_bytes) {
  if (segments.empty()) bad("non_uniform_stride: no segments");
  if (footprint_bytes) require_word_multiple("non_uniform_stride", "footprint_bytes", footprint_bytes);
  std::vector<uint64_t> offsets{0};
  uint64_t pos = 0;
  for (size_t k = 0; k < segments.size(); ++k) {
    const std::string name = "segments[" + std::to_string(k) + "].stride_bytes";
    require_word_multiple("non_uniform_stride", name.c_str(), segments[k].stride_bytes);
    for (uint64_t j = 0; j < segments[k].count; ++j) {
      pos += segments[k].stride_bytes;
      if (footprint_bytes) pos %= footprint_bytes;
      offsets.push_back(pos);
    }
  }
  // The last step leads back to the start; it is the cycle's closing edge, not a new position.
  if (offsets.size() > 1 && offsets.back() == 0) offsets.pop_back();
  Chase c = from_byte_offsets(offsets, footprint_bytes);
  c.stride_bytes = segments.size() == 1 ? segments[0].stride_bytes : 0;
  return c;
}

uint64_t set_of(uint64_t byte_offset, uint64_t sets, uint64_t line_bytes) {
  if (sets == 0 || line_bytes == 0) return 0;
  return (byte_offset / line_bytes) % sets;
}

Chase multi_set_conflict(uint64_t k, uint64_t sets, uint64_t line_bytes, const std::vector<uint64_t>& set_indices,
                         bool interleave, uint64_t word_offset_bytes) {
  if (k == 0) bad("set_conflict: k (lines per set) must be > 0");
  if (sets == 0) bad("set_conflict: sets must be > 0");
  require_word_multiple("set_conflict", "line_bytes", line_bytes);
  require_word_multiple("set_conflict", "word_offset_bytes", word_offset_bytes, true);
  if (word_offset_bytes >= line_bytes) bad("set_conflict: word_offset_bytes must be below line_bytes");
  if (set_indices.empty()) bad("set_conflict: no set given");
  for (uint64_t s : set_indices)
    if (s >= sets) bad("set_conflict: set index " + std::to_string(s) + " is not below sets = " + std::to_string(sets));
  const uint64_t way_stride = sets * line_bytes;  // distance between lines of one set
  std::vector<uint64_t> offsets;
  auto at = [&](uint64_t set, uint64_t j) { return set * line_bytes + j * way_stride + word_offset_bytes; };
  if (interleave) {
    for (uint64_t j = 0; j < k; ++j)
      for (uint64_t s : set_indices) offsets.push_back(at(s, j));
  } else {
    for (uint64_t s : set_indices)
      for (uint64_t j = 0; j < k; ++j) offsets.push_back(at(s, j));
  }
  Chase c = from_byte_offsets(offsets, k * way_stride);
  c.stride_bytes = set_indices.size() == 1 ? way_stride : 0;
  return c;
}

Chase set_conflict(uint64_t k, uint64_t sets, uint64_t line_bytes, uint64_t set_index, uint64_t word_offset_bytes) {
  return multi_set_conflict(k, sets, line_bytes, {set_index}, true, word_offset_bytes);
}

std::vector<uint32_t> walk(const ChaseArray& a, uint32_t start, uint64_t steps) {
  std::vector<uint32_t> out;
  const uint64_t n = a.length();
  if (n == 0 || start >= n) return out;
  out.reserve(steps);
  uint64_t e = start;
  for (uint64_t i = 0; i < steps; ++i) {
    out.push_back(static_cast<uint32_t>(e));
    e = a.stride_elems ? (e + a.stride_elems) % n : a.next[e];
    if (e >= n) break;  // malformed explicit array
  }
  return out;
}

uint64_t cycle_length(const ChaseArray& a, uint32_t start, uint64_t limit) {
  const uint64_t n = a.length();
  if (n == 0 || start >= n) return 0;
  uint64_t e = start;
  for (uint64_t len = 1; len <= std::min(limit, n); ++len) {
    e = a.stride_elems ? (e + a.stride_elems) % n : a.next[e];
    if (e >= n) return 0;
    if (e == start) return len;
  }
  return 0;
}

}  // namespace memtopo::recipes
