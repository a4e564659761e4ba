// memtopo-bench-primitives: how fast the measurement job runs in each of its forms on a
// device, the latency levels of reference chases (a 16 KiB footprint that stays in L1, a
// 4 MiB one that does not) and the load-to-use latency of the 16 KiB one. Works on any
// device spec the host accepts, GPU or simulator.
//
//   memtopo-bench-primitives [DEVICE] [--repeat N]     DEVICE: auto, cuda, cuda:N, sim, sim:FILE
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "memtopo/engine.hpp"
#include "memtopo/probe.hpp"

namespace {

using memtopo::ChaseArray;
using memtopo::Job;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Seconds per call: one untimed call first (warm-up), then the median of `repeat` calls.
double time_call(int repeat, const std::function<void()>& f) {
  f();
  std::vector<double> s;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(s);
}

void report(const char* name, double seconds, double samples_per_call, const char* unit) {
  std::printf("%-34s %10.3f ms/call %14.0f %s/s\n", name, seconds * 1e3, samples_per_call / seconds, unit);
}

struct Level {
  double median_cycles;
  double fraction;
};

// Latency levels: sorted samples split wherever the next value is over 25% (and 8 cycles)
// above the previous one; clusters with at least 1% of the samples are levels.
std::vector<Level> levels(std::vector<uint32_t> v, double* outlier_fraction) {
  std::sort(v.begin(), v.end());
  std::vector<Level> out;
  size_t begin = 0, outliers = 0;
  for (size_t i = 1; i <= v.size(); ++i) {
    if (i < v.size() && !(v[i] > v[i - 1] * 1.25 && v[i] > v[i - 1] + 8)) continue;
    const size_t n = i - begin;
    if (n * 100 >= v.size())
      out.push_back({double(v[begin + n / 2]), double(n) / double(v.size())});
    else
      outliers += n;
    begin = i;
  }
  *outlier_fraction = v.empty() ? 0 : double(outliers) / double(v.size());
  return out;
}

// Fine-grained chase through ld.global.ca: one warm-up pass, then `steps` recorded loads.
void latency_levels(const memtopo::Backend& be, uint64_t footprint, uint64_t stride, uint64_t steps) {
  const ChaseArray a = ChaseArray::stride(footprint, stride);
  Job s;
  s.space = MT_SPACE_GLOBAL_CA;
  s.array = &a;
  s.warmup_steps = footprint / stride;
  s.steps = steps;
  s.shared_carveout_percent = 0;  // largest L1
  const auto t0 = std::chrono::steady_clock::now();
  const memtopo::JobResult r = be.run(s);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // The recorded indices must follow the chase: warm-up, then stride by stride.
  const uint64_t elems = footprint / 4, step = stride / 4;
  bool order_ok = true;
  for (uint64_t k = 0; k < steps; ++k)
    if (r.index[k] != ((s.warmup_steps + k) * step) % elems) order_ok = false;
  double outliers = 0;
  const std::vector<Level> lv = levels(r.latency, &outliers);
  std::printf("ld.global.ca %6llu KiB, stride %3llu B, %llu loads on SM %d (%.1f ms, index order %s):",
              (unsigned long long)(footprint >> 10), (unsigned long long)stride, (unsigned long long)steps, r.sm,
              secs * 1e3, order_ok ? "ok" : "WRONG");
  for (const Level& l : lv) std::printf("  %.0f cycles (%.1f%%)", l.median_cycles, 100 * l.fraction);
  std::printf("  outliers %.2f%%\n", 100 * outliers);
}

}  // namespace

int main(int argc, char** argv) {
  std::string spec = "auto";
  int repeat = 20;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) {
      repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "-h" || a == "--help") {
      std::printf("usage: %s [DEVICE] [--repeat N]   DEVICE: auto (default), cuda, cuda:N, sim, sim:FILE\n", argv[0]);
      return 0;
    } else {
      spec = a;
    }
  }
  try {
    std::string fallback;
    const auto parsed = memtopo::engine::parse_device_spec(spec);
    if (!parsed) {
      std::fprintf(stderr, "%s: '%s' is not a device; use auto, cuda, cuda:N, sim or sim:FILE\n", argv[0], spec.c_str());
      return 2;
    }
    auto dev = memtopo::engine::open_device(*parsed, &fallback);
    const mt_device_info& info = dev->info();
    std::printf("device: %s (%s), %d SMs, SM clock %.0f MHz%s%s\n", info.name, dev->description().c_str(),
                info.sm_count, info.sm_clock_khz / 1e3, fallback.empty() ? "" : "; auto fell back: ",
                fallback.c_str());
    const memtopo::Backend be(dev->backend());

    // Timing overhead: the first call measures, later calls return the cached value.
    const auto t0 = std::chrono::steady_clock::now();
    const double overhead = be.timing_overhead();
    const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("timing overhead: %.1f cycles (clock read + dependent store; first call %.3f ms)\n\n", overhead,
                first * 1e3);

    std::printf("%-34s %18s %20s\n", "job", "time per call", "samples per second");
    const uint64_t footprint = 16 << 10, stride = 64, steps = 2048;
    const ChaseArray small = ChaseArray::stride(footprint, stride);
    Job one;
    one.array = &small;
    one.warmup_steps = footprint / stride;
    one.steps = steps;
    report("samples, 1 job x 2048 loads", time_call(repeat, [&] { be.run(one); }), double(steps), "samples");

    const int jobs = std::max(1, info.sm_count);
    std::vector<Job> all(jobs, one);
    const std::string all_name = "samples, " + std::to_string(jobs) + " jobs x 2048 loads";
    report(all_name.c_str(), time_call(repeat, [&] { be.run(all); }), double(steps) * jobs, "samples");

    Job counted = one;
    counted.record = MT_RECORD_COUNTS;
    counted.steps = 100000;
    counted.slow_cycles = 1000;
    report("counts, 1 job x 100000 loads", time_call(repeat, [&] { be.run(counted); }), double(counted.steps), "loads");

    Job total = one;
    total.record = MT_RECORD_TOTAL;
    total.steps = 100000;
    report("total, 1 job x 100000 loads", time_call(repeat, [&] { be.run(total); }), double(total.steps), "loads");
    Job pointers = total;
    pointers.pattern = MT_PATTERN_POINTERS;
    report("total by pointer, 1 job x 100000", time_call(repeat, [&] { be.run(pointers); }), double(total.steps), "loads");

    // Sequence: a fills, b fills, a re-measures (timed) -- the L1-sharing pattern.
    std::vector<Job> seq(3, one);
    for (uint32_t k = 0; k < 3; ++k) {
      seq[k].order = k + 1;
      seq[k].block = k == 1 ? 1 : 0;
      seq[k].warmup_steps = 0;
      seq[k].steps = footprint / stride;
      seq[k].timed = k == 2;
      seq[k].shared_carveout_percent = -1;
    }
    seq[2].steps = 512;
    report("sequence, 2 blocks, 3 jobs", time_call(repeat, [&] { be.run(seq); }), 512.0, "samples");
    report("timing_overhead (cached)", time_call(repeat, [&] { be.timing_overhead(); }), 1.0, "calls");

    Job warm = pointers;
    warm.space = MT_SPACE_GLOBAL_CA;
    warm.shared_carveout_percent = 0;
    std::printf("\nload-to-use (pointer chase, ld.global.ca, 16 KiB, stride 64 B): %.2f cycles per load\n",
                be.run(warm).average_cycles);
    std::printf("\nlatency levels (fine-grained chase, carveout 0 = largest L1):\n");
    latency_levels(be, 16 << 10, 16, 4096);
    latency_levels(be, 4 << 20, 16, 4096);
    latency_levels(be, 4 << 20, 128, 4096);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "memtopo-bench-primitives: %s\n", e.what());
    return 1;
  }
  return 0;
}
