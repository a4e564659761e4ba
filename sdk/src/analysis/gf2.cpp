#include "memtopo/analysis/gf2.hpp"

#include <algorithm>
#include <bit>

namespace memtopo::analysis {

uint64_t Gf2Basis::reduce(uint64_t v) const {
  for (uint64_t r : rows_)
    if (v & std::bit_floor(r)) v ^= r;
  return v;
}

bool Gf2Basis::add(uint64_t v) {
  v = reduce(v);
  if (!v) return false;
  const uint64_t lead = std::bit_floor(v);
  for (uint64_t& r : rows_)  // keep every leading bit in one row only
    if (r & lead) r ^= v;
  rows_.push_back(v);
  // Rows sorted by leading bit, highest first, so that reduce clears leading bits in order.
  std::sort(rows_.begin(), rows_.end(), [](uint64_t a, uint64_t b) { return std::bit_floor(a) > std::bit_floor(b); });
  return true;
}

std::vector<uint64_t> Gf2Basis::rows() const {
  std::vector<uint64_t> out(rows_.rbegin(), rows_.rend());
  return out;
}

int difference_rank(const std::vector<uint64_t>& differences, uint64_t domain) {
  Gf2Basis b;
  for (uint64_t d : differences) b.add(d & domain);
  return b.rank();
}

std::vector<uint64_t> constant_parities(const std::vector<uint64_t>& differences, uint64_t domain) {
  Gf2Basis span;
  for (uint64_t d : differences) span.add(d & domain);
  const std::vector<uint64_t> rows = span.rows();
  uint64_t pivots = 0;
  for (uint64_t r : rows) pivots |= std::bit_floor(r);
  // Each free bit f of the domain gives one parity: f itself plus the pivot of every row
  // that has f (the rows are fully reduced, so each row meets the parity in 0 or 2 bits).
  Gf2Basis parities;
  for (uint64_t free = domain & ~pivots; free; free &= free - 1) {
    const uint64_t f = free & (~free + 1);
    uint64_t m = f;
    for (uint64_t r : rows)
      if (r & f) m |= std::bit_floor(r);
    parities.add(m);
  }
  // Present each parity with as few bits as the reduced form gives, ordered by lowest bit.
  std::vector<uint64_t> out = parities.rows();
  std::sort(out.begin(), out.end(), [](uint64_t a, uint64_t b) {
    return std::countr_zero(a) != std::countr_zero(b) ? std::countr_zero(a) < std::countr_zero(b) : a < b;
  });
  return out;
}

std::string xor_text(uint64_t mask) {
  if (!mask) return "0";
  std::string s;
  for (; mask; mask &= mask - 1) {
    if (!s.empty()) s += '^';
    s += std::to_string(std::countr_zero(mask));
  }
  return s;
}

}  // namespace memtopo::analysis
