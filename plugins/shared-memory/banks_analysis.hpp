// shared-memory: the bank structure from latencies of one warp's shared loads at lane strides,
// free of measurement so that tests feed it modelled or recorded series. docs/shared-memory.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace shmem {

// The turns one warp's load takes when lane t (of `lanes`) reads the 4-byte word t x stride:
// the most distinct bank words that fall into one bank (lanes on one word share a turn).
int conflict_degree(uint32_t stride_words, uint32_t banks, uint32_t bank_bytes, uint32_t lanes = 32);

struct StrideLatency {
  uint32_t stride_words = 0;
  double cycles = 0;
};

// The banks and bank width whose conflict degrees explain the latencies best: cycles =
// base + (degree - 1) x per_conflict, least squares over every stride > 0, among 8 to 64
// banks of 4, 8 or 16 bytes. `found` is false when no candidate explains them within
// `tolerance` cycles (RMS) or when conflicts cost nothing.
struct BankFit {
  bool found = false;
  uint32_t banks = 0, bank_bytes = 0;
  double base_cycles = 0, per_conflict_cycles = 0, rms_cycles = 0;
  std::string note;
};
BankFit fit_banks(const std::vector<StrideLatency>& series, double tolerance = 1.0);

// The mean of one point's raw per-load cycles without its interruptions: loads above twice the
// point's median, or above `ceiling`. The loads of a point are all alike (one conflict
// pattern), so an interruption stands out of its own point whatever its size; a fixed ceiling
// alone kept every interruption shorter than it, and their share moved the point by cycles.
double uninterrupted_mean(const std::vector<double>& cycles, double ceiling);

// The strides the probe measures: 1 to 8, then powers of two to 128 (32 lanes that far apart
// fill the probe's 16 KiB; odd strides tell bank widths apart: stride 3 conflicts on 8-byte
// banks, not on 4-byte ones).
std::vector<uint32_t> probe_strides();

}  // namespace shmem
