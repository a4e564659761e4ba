// Linear algebra over GF(2) for set-index functions: a cache whose set index is an XOR of
// address bits (docs/cache-probes.md, "Eviction sets and the set-index function") maps two
// lines to one set exactly when every index parity is 0 on their address difference. From
// the differences of lines found congruent (eviction sets), the parities that stay constant
// on all of them are the annihilator of the differences' span.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace memtopo::analysis {

// A subspace of GF(2)^64 (vectors as 64-bit masks) in reduced row echelon form: every row has
// a distinct leading (highest) bit that no other row has.
class Gf2Basis {
 public:
  // Adds `v`; false when it is already in the span (nothing changes).
  bool add(uint64_t v);
  bool contains(uint64_t v) const { return reduce(v) == 0; }
  // `v` with every leading bit of the basis cleared (0 exactly when v is in the span).
  uint64_t reduce(uint64_t v) const;
  int rank() const { return int(rows_.size()); }
  // The rows, fully reduced, ordered by their leading bit from low to high.
  std::vector<uint64_t> rows() const;

 private:
  std::vector<uint64_t> rows_;
};

// A basis of the masks m within `domain` with parity(m & d) = 0 for every d in `differences`
// (bits of d outside `domain` are ignored): the XOR parities constant on every difference,
// in reduced form ordered by their lowest bit. Its size is popcount(domain) - rank.
std::vector<uint64_t> constant_parities(const std::vector<uint64_t>& differences, uint64_t domain);

// The rank of the differences restricted to `domain`.
int difference_rank(const std::vector<uint64_t>& differences, uint64_t domain);

// A mask as an XOR of bit numbers, "7^12" (lowest first); "0" for the empty mask.
std::string xor_text(uint64_t mask);

}  // namespace memtopo::analysis
