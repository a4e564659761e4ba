// memtopo-l1-replacement: which line of one L1 set a new line replaces, by short load sequences
// over congruent lines (plain CUDA, none of memtopo's code), the evidence behind
// l1d.eviction_set_policy.
//
//   memtopo-l1-replacement PARITIES [DEVICE] [TRIALS] [CARVEOUT_PERCENT] [X_LINE]
//
// PARITIES is l1d.set_index_parities as memtopo writes it ("7^8^9,11^12,..."): lines of a
// 32 MiB-aligned buffer whose address bits have equal parities are taken as one set's lines
// (x, E0 .. E7, and 16 flush lines F). One thread of one block loads them with .ca, each load
// waiting for the one before, and times the last load of each sequence; a sequence starts by
// loading F four times over (or, marked "no flush", where the trial before left off). Prints, per sequence, the
// share of TRIALS (default 32) whose timed load was slower than the midpoint between the
// calibration's hit (x loaded, then timed) and miss (a new line loaded .cg, then timed: an L2
// hit). X_LINE (default 1000) is x's line number in the buffer.
#include <cuda_runtime.h>

#include "bench_common.cuh"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr uint64_t kLine = 128;
constexpr uint64_t kSpan = 32ull << 20;

constexpr unsigned kLoadCg = 0x80000000u;  // a program entry with this bit loads .cg (into the L2 only)

__device__ volatile unsigned sink;

// Runs every sequence (program[begin[i] .. begin[i+1])) in order; the last load of each is
// timed. `zero` is 0 at run time, unknown to the compiler: each address depends on the load
// before it.
__global__ void run_sequences(const unsigned* base, const unsigned* program, const unsigned* begin,
                              unsigned sequences, unsigned zero, long long* cycles) {
  unsigned v = 0;
  for (unsigned s = 0; s < sequences; ++s) {
    const unsigned b = __ldcg(begin + s), e = __ldcg(begin + s + 1);
    for (unsigned i = b; i + 1 < e; ++i) {
      const unsigned op = __ldcg(program + i);
      const unsigned* p = base + size_t(op & ~kLoadCg) * (kLine / 4) + (v & zero);
      v += (op & kLoadCg) ? __ldcg(p) : __ldca(p);
    }
    const unsigned timed = __ldcg(program + e - 1);
    sink = v ^ timed;  // both known before the clock starts
    const long long t0 = clock64();
    const unsigned w = __ldca(base + size_t(timed) * (kLine / 4) + (unsigned(t0) & zero));
    sink = w;
    cycles[s] = clock64() - t0;
    v += w;
  }
}

std::vector<uint64_t> parse_parities(const std::string& text) {
  std::vector<uint64_t> masks;
  uint64_t mask = 0;
  std::string bit;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c >= '0' && c <= '9') {
      bit += c;
      continue;
    }
    if (!bit.empty()) mask |= 1ull << std::stoul(bit), bit.clear();
    if (c == ',' && mask) masks.push_back(mask), mask = 0;
  }
  return masks;
}

unsigned parity_class(uint64_t offset, const std::vector<uint64_t>& masks) {
  unsigned c = 0;
  for (size_t i = 0; i < masks.size(); ++i) c |= unsigned(__builtin_popcountll(offset & masks[i]) & 1) << i;
  return c;
}

struct Sequence {
  std::string name;
  std::vector<std::vector<unsigned>> trials;  // per trial the line numbers; the last is timed
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PARITIES [DEVICE] [TRIALS] [CARVEOUT_PERCENT] [X_LINE]\n", argv[0]);
    return 2;
  }
  const std::vector<uint64_t> masks = parse_parities(argv[1]);
  const int device = argc > 2 ? std::atoi(argv[2]) : 0;
  const int trials = argc > 3 ? std::atoi(argv[3]) : 32;
  const int carveout = argc > 4 ? std::atoi(argv[4]) : 0;
  const unsigned x = argc > 5 ? unsigned(std::atoi(argv[5])) : 1000;
  if (masks.empty() || trials < 1 || x >= kSpan / kLine / 4) {
    std::fprintf(stderr, "PARITIES must name at least one parity (\"7^12,8^13\"), TRIALS be at least 1, X_LINE below %llu\n",
                 (unsigned long long)(kSpan / kLine / 4));
    return 2;
  }
  CHECK(cudaSetDevice(device));
  CHECK(cudaFuncSetAttribute(run_sequences, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
  unsigned char* raw = nullptr;
  CHECK(cudaMalloc(&raw, 2 * kSpan));
  CHECK(cudaMemset(raw, 0, 2 * kSpan));
  const uint64_t aligned = (reinterpret_cast<uint64_t>(raw) + kSpan - 1) & ~(kSpan - 1);
  // x's set's lines in address order after it: E0 .. E7, then the flush lines.
  const unsigned want = parity_class(uint64_t(x) * kLine, masks);
  std::vector<unsigned> same;
  for (unsigned l = x + 1; l < kSpan / kLine && same.size() < 24; ++l)
    if (parity_class(uint64_t(l) * kLine, masks) == want) same.push_back(l);
  const std::vector<unsigned> e(same.begin(), same.begin() + 8), f(same.begin() + 8, same.end());
  std::vector<Sequence> seqs;
  // With `flush`, each trial starts with F four times over; without, where the trial before left off.
  auto add = [&](const std::string& name, const std::vector<unsigned>& body, bool flush = true) {
    Sequence q{name + (flush ? "" : " (no flush)"), {}};
    for (int t = 0; t < trials; ++t) {
      std::vector<unsigned> l;
      for (int pass = 0; flush && pass < 4; ++pass) l.insert(l.end(), f.begin(), f.end());
      l.insert(l.end(), body.begin(), body.end());
      q.trials.push_back(l);
    }
    seqs.push_back(q);
  };
  auto name_of = [&](unsigned line) {
    return line == x ? std::string("x") : "E" + std::to_string(std::find(e.begin(), e.end(), line) - e.begin());
  };
  add("calibration hit: x, x", {x, x});
  Sequence fresh{"calibration miss: a new line, loaded .cg before", {}};
  for (int t = 0; t < trials; ++t) {
    const unsigned line = unsigned(kSpan / kLine / 2 + 1031 * t);
    fresh.trials.push_back({line | kLoadCg, line});
  }
  seqs.push_back(fresh);
  for (unsigned k = 1; k <= 8; ++k)
    for (unsigned r = 1; r <= 4; r *= 2) {
      std::vector<unsigned> b{x};
      for (unsigned p = 0; p < r; ++p) b.insert(b.end(), e.begin(), e.begin() + k);
      b.push_back(x);
      add("x, (E0..E" + std::to_string(k - 1) + ") x" + std::to_string(r) + ", x", b);
    }
  for (unsigned r = 1; r <= 4; r *= 2) {
    std::vector<unsigned> b;
    for (unsigned p = 0; p < r; ++p) b.insert(b.end(), e.begin(), e.begin() + 4);
    b.insert(b.end(), {x, x});
    add("(E0..E3) x" + std::to_string(r) + ", x, x (x kept at all?)", b);
  }
  const std::vector<unsigned> five{x, e[0], e[1], e[2], e[3]};
  for (bool flush : {true, false})
    for (unsigned t : five) {
      add("E0..E3, x, " + name_of(t), {e[0], e[1], e[2], e[3], x, t}, flush);
      add("E0..E3, E0, x, " + name_of(t), {e[0], e[1], e[2], e[3], e[0], x, t}, flush);
      std::vector<unsigned> b;
      for (int pass = 0; pass < 3; ++pass) b.insert(b.end(), five.begin(), five.end());
      b.insert(b.end(), {e[0], x, t});
      add("(x, E0..E3) x3, E0, x, " + name_of(t), b, flush);
    }
  // The probe's scan trial: x re-used, then k new lines (E, then the flood's lines), x timed.
  std::vector<unsigned> fresh_lines(e);
  fresh_lines.insert(fresh_lines.end(), f.begin(), f.end());
  for (bool flush : {true, false})
    for (unsigned k : {4u, 6u, 8u, 12u, 16u, 24u}) {
      if (flush && k > 8) continue;  // the flood's lines are the new ones
      std::vector<unsigned> b{x, x};
      b.insert(b.end(), fresh_lines.begin(), fresh_lines.begin() + k);
      b.push_back(x);
      add("scan: x, x, " + std::to_string(k) + " new lines, x", b, flush);
    }
  // All trials of a sequence in a row, so that a trial starts where the one before left off.
  std::vector<unsigned> program, begin{0};
  for (const auto& q : seqs)
    for (const auto& l : q.trials) {
      program.insert(program.end(), l.begin(), l.end());
      begin.push_back(unsigned(program.size()));
    }
  unsigned *dprog = nullptr, *dbegin = nullptr;
  long long* dcycles = nullptr;
  CHECK(cudaMalloc(&dprog, program.size() * sizeof(unsigned)));
  CHECK(cudaMalloc(&dbegin, begin.size() * sizeof(unsigned)));
  CHECK(cudaMalloc(&dcycles, (begin.size() - 1) * sizeof(long long)));
  CHECK(cudaMemcpy(dprog, program.data(), program.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(dbegin, begin.data(), begin.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  run_sequences<<<1, 1>>>(reinterpret_cast<const unsigned*>(aligned), dprog, dbegin, unsigned(begin.size() - 1), 0,
                          dcycles);
  CHECK(cudaGetLastError());
  std::vector<long long> cycles(begin.size() - 1);
  CHECK(cudaMemcpy(cycles.data(), dcycles, cycles.size() * sizeof(long long), cudaMemcpyDeviceToHost));
  auto median_of = [&](size_t s) {
    std::vector<long long> c(cycles.begin() + s * trials, cycles.begin() + (s + 1) * trials);
    std::sort(c.begin(), c.end());
    return c[c.size() / 2];
  };
  const long long hit = median_of(0), miss = median_of(1), threshold = (hit + miss) / 2;
  std::printf("x line %u (its parity class %u), E0..E7 and 16 flush lines of its parity class; hit %lld, miss %lld, threshold %lld cycles\n",
              x, want, hit, miss, threshold);
  for (size_t s = 0; s < seqs.size(); ++s) {
    int misses = 0;
    for (int t = 0; t < trials; ++t) misses += cycles[s * trials + t] > threshold;
    std::printf("%-60s missed %2d of %d (median %lld cycles)\n", seqs[s].name.c_str(), misses, trials, median_of(s));
  }
  return 0;
}
