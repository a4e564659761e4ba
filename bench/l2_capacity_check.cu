// memtopo-l2-capacity-check: how many bytes of lines the L2 near one SM holds, by a method of
// its own (plain CUDA, none of memtopo's code), to check `l2.size_bytes` (data-cache/l2-occupancy:
// random loads at several rates, extrapolated to an infinite rate) against.
//
//   memtopo-l2-capacity-check [DEVICE_ORDINAL] [TRIALS]
//
// One block of 1024 threads, so one SM: it reads every 128 B line of a footprint F with .cg
// four times, each pass in another pseudo-random order, as fast as the SM can (every set full
// of the footprint's lines, whatever the set index and the replacement policy); then 8 warps,
// one lane each, time .cg loads of distinct lines drawn at random from F, one at a time, and a
// load that returns under the near-hit threshold is a line the SM's near L2 partition holds.
// Lines held = hit fraction x lines of F. A line homed in the far partition that the near one
// holds no copy of returns as a far hit, above the threshold, as does a DRAM read. F runs over 1.5,
// 2 and 3 times the API's L2 size per partition; TRIALS (default 256) fills and samples each.
// The samples are few against the lines (8 x 128 per trial), so they displace little; what
// they do displace is taken out by a line through the held bytes of the sample's quarters.
// A quarter of the per-partition size first gives the near hit's time (every line held; the
// threshold is 1.3x its median). Prints per F: the load times' histogram, the near-hit
// fraction, held bytes with a binomial standard error, the same by the first and last quarter of the samples (lines lost
// while sampling), and held bytes / (API size / partitions) for 1 and 2 partitions.
#include <cuda_runtime.h>

#include "bench_common.cuh"
#include "l2_fill_sample.cuh"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using l2check::fill_and_sample;
using l2check::kBins;
using l2check::kFillThreads;
using l2check::kLine;

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  const int trials = argc > 2 ? std::atoi(argv[2]) : 256;
  CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  const uint64_t api = uint64_t(prop.l2CacheSize);
  std::printf("%s: API L2 %llu B\n", prop.name, static_cast<unsigned long long>(api));
  unsigned* hist = nullptr;
  CHECK(cudaMalloc(&hist, 4 * kBins * sizeof(unsigned)));
  // The first footprint (a quarter of the per-partition size) sets the near-hit threshold.
  const double factors[] = {0.25, 1.5, 2.0, 3.0};
  int near_bins = 0;
  for (double f : factors) {
    const uint64_t bytes = uint64_t(f * double(api / 2)) / kLine * kLine, lines = bytes / kLine;
    uint64_t* buf = nullptr;
    CHECK(cudaMalloc(&buf, bytes));
    CHECK(cudaMemset(buf, 0, bytes));
    CHECK(cudaMemset(hist, 0, 4 * kBins * sizeof(unsigned)));
    for (int t = 0; t < trials; ++t) fill_and_sample<<<1, kFillThreads>>>(buf, lines, uint64_t(t) + 1, hist);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> h(4 * kBins);
    CHECK(cudaMemcpy(h.data(), hist, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    std::vector<double> all(kBins, 0);
    double n = 0;
    for (int q = 0; q < 4; ++q)
      for (int b = 0; b < kBins; ++b) all[b] += h[q * kBins + b], n += h[q * kBins + b];
    std::printf("footprint %.2f x API/2, histogram (16-cycle bins from 0, nonzero):", f);
    for (int i = 0; i < kBins; ++i)
      if (all[i] > 0) std::printf(" %d:%.0f", i * 16, all[i]);
    std::printf("\n");
    if (f < 1) {
      // Every line is held: the near-hit threshold is 1.3x the median of these loads (a far
      // hit takes 1.6x a near one or more on the GPUs measured; docs/results).
      double acc = 0;
      int b = 0;
      while (b < kBins && (acc += all[b]) < n / 2) ++b;
      near_bins = int(std::ceil(1.3 * (b + 0.5)));
      std::printf("near-hit threshold: %d cycles (median bin %d cycles)\n", near_bins * 16, b * 16);
      CHECK(cudaFree(buf));
      continue;
    }
    auto held = [&](int q0, int q1, double* se) {
      double hit = 0, m = 0;
      for (int q = q0; q < q1; ++q)
        for (int b = 0; b < kBins; ++b) {
          m += h[q * kBins + b];
          if (b < near_bins) hit += h[q * kBins + b];
        }
      const double p = hit / m;
      *se = std::sqrt(p * (1 - p) / m) * double(lines) * kLine;
      return p * double(lines) * kLine;
    };
    double near = 0;
    for (int b = 0; b < near_bins; ++b) near += all[b];
    double se = 0, q[4], qse[4];
    const double c = held(0, 4, &se);
    for (int i = 0; i < 4; ++i) q[i] = held(i, i + 1, &qse[i]);
    // The sample's own misses displace held lines as it goes: a line through the quarters'
    // midpoints (1/8, 3/8, 5/8, 7/8 of the sample) taken back to its start.
    const double slope = (-3 * q[0] - q[1] + q[2] + 3 * q[3]) / 10.0;  // per quarter, least squares
    const double at_start = c - 2 * slope;
    const double se_start = qse[0] * std::sqrt(1.05);  // var(mean) + 4 var(slope) = (1/4 + 4/5) var(quarter)
    std::printf(
        "footprint %.2f x API/2 = %llu B: near hit fraction %.5f (%.0f samples)\n"
        "  held %.0f B +- %.0f; by quarter %.0f %.0f %.0f %.0f (+- %.0f each); at the sample's start %.0f +- %.0f\n"
        "  at the start / (API/2) = %.4f   / API = %.4f\n",
        f, static_cast<unsigned long long>(bytes), near / n, n, c, se, q[0], q[1], q[2], q[3], qse[0], at_start,
        se_start, at_start / double(api / 2), at_start / double(api));
    std::fflush(stdout);
    CHECK(cudaFree(buf));
  }
  return 0;
}
