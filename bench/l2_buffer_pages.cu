// memtopo-l2-buffer-pages: does the footprint where the L2 near one SM starts to miss depend
// on which buffer (which physical pages) holds the lines? Plain CUDA, none of memtopo's code;
// the question behind l2.first_miss_bytes and l2.full_miss_bytes moving with what ran before
// data-cache/l2-size in its process (docs/results/log/h100.md, "What l1d-geometry leaves behind").
//
//   memtopo-l2-buffer-pages [DEVICE_ORDINAL] [BUFFERS] [TRIALS]
//
// BUFFERS (default 4) buffers of 1.3 x the API's L2 per partition, all held at once, with
// spacers of 48, 96, ... MiB (+2 MiB) allocated between them so that each gets other pages.
// For each buffer, in two rounds (buffer 0, 1, ..., then again), footprints of 0.70 to 1.30 x
// API/2 in steps of 0.05: TRIALS (default 32) fills and samples of one SM (l2_fill_sample.cuh),
// and the fraction of sampled loads that are not near hits (above 1.3 x the median of a
// quarter-size footprint). The same buffer in both rounds against another buffer in the same
// round tells whether a buffer's pages decide where the misses start.
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
using l2check::kLine;

namespace {

constexpr double kFirstFactor = 0.70, kFactorStep = 0.05;
constexpr int kFactors = 13;  // 0.70 .. 1.30

struct Histogram {
  unsigned* device = nullptr;
  std::vector<double> bins = std::vector<double>(kBins, 0);
  double total = 0;

  void run(const uint64_t* buf, uint64_t lines, int trials, uint64_t seed) {
    CHECK(cudaMemset(device, 0, 4 * kBins * sizeof(unsigned)));
    for (int t = 0; t < trials; ++t) fill_and_sample<<<1, 1024>>>(buf, lines, seed + uint64_t(t), device);
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned> h(4 * kBins);
    CHECK(cudaMemcpy(h.data(), device, h.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    bins.assign(kBins, 0);
    total = 0;
    for (int q = 0; q < 4; ++q)
      for (int b = 0; b < kBins; ++b) bins[b] += h[q * kBins + b], total += h[q * kBins + b];
  }
  int median_bin() const {
    double acc = 0;
    int b = 0;
    while (b < kBins && (acc += bins[b]) < total / 2) ++b;
    return b;
  }
  double below(int bin) const {
    double n = 0;
    for (int b = 0; b < bin && b < kBins; ++b) n += bins[b];
    return n / total;
  }
};

}  // namespace

int main(int argc, char** argv) {
  const int device = argc > 1 ? std::atoi(argv[1]) : 0;
  const int buffers = argc > 2 ? std::atoi(argv[2]) : 4;
  const int trials = argc > 3 ? std::atoi(argv[3]) : 32;
  CHECK(cudaSetDevice(device));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, device));
  const uint64_t half = uint64_t(prop.l2CacheSize) / 2;
  const uint64_t bytes = uint64_t(1.3 * double(half)) / kLine * kLine + kLine;
  std::printf("%s: API L2 %d B; %d buffers of %llu B, %d trials a point\n", prop.name, prop.l2CacheSize, buffers,
              static_cast<unsigned long long>(bytes), trials);
  Histogram hist;
  CHECK(cudaMalloc(&hist.device, 4 * kBins * sizeof(unsigned)));
  std::vector<uint64_t*> buf(buffers, nullptr);
  std::vector<void*> spacers;
  for (int b = 0; b < buffers; ++b) {
    CHECK(cudaMalloc(&buf[b], bytes));
    CHECK(cudaMemset(buf[b], 0, bytes));
    void* s = nullptr;
    CHECK(cudaMalloc(&s, (uint64_t(48 * (b + 1)) + 2) << 20));
    spacers.push_back(s);
  }
  // Near hits: every line of a quarter-size footprint is held; the threshold is 1.3 x the median.
  hist.run(buf[0], half / 4 / kLine, trials, 1);
  const int median = hist.median_bin();
  const int near_bins = int(std::ceil(1.3 * (median + 0.5)));
  std::printf("near-hit threshold %d cycles (median bin %d cycles)\n", near_bins * 16, median * 16);
  std::printf("not-near fraction by footprint (x API/2):\nround buffer");
  for (int f = 0; f < kFactors; ++f) std::printf(" %6.2f", kFirstFactor + kFactorStep * f);
  std::printf("\n");
  for (int round = 0; round < 2; ++round)
    for (int b = 0; b < buffers; ++b) {
      std::printf("%5d %6d", round, b);
      for (int f = 0; f < kFactors; ++f) {
        const uint64_t lines = uint64_t((kFirstFactor + kFactorStep * f) * double(half)) / kLine;
        hist.run(buf[b], lines, trials, 1000 * uint64_t(round * kFactors + f) + 7);
        std::printf(" %6.4f", 1 - hist.below(near_bins));
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  return 0;
}
