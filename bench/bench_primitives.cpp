// memtopo-bench-primitives: how fast each measurement primitive runs on a device, and the
// latency levels of two reference chases (a 16 KiB footprint that stays in L1, a 4 MiB one
// that does not). Works on any device spec the host accepts, GPU or simulator.
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
using memtopo::ChaseSpec;

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
  ChaseSpec s;
  s.space = MT_SPACE_GLOBAL_CA;
  s.array = &a;
  s.warmup_steps = footprint / stride;
  s.steps = steps;
  s.shared_carveout_percent = 0;  // largest L1
  const auto t0 = std::chrono::steady_clock::now();
  const memtopo::ChaseSamples r = be.fine_chase(s);
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
    auto dev = memtopo::engine::open_device(spec, &fallback);
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

    std::printf("%-34s %18s %20s\n", "primitive", "time per call", "samples per second");
    const uint64_t footprint = 16 << 10, stride = 64, steps = 2048;
    const ChaseArray small = ChaseArray::stride(footprint, stride);
    ChaseSpec one;
    one.array = &small;
    one.warmup_steps = footprint / stride;
    one.steps = steps;
    report("fine_chase, 1 job x 2048 loads", time_call(repeat, [&] { be.fine_chase(one); }), double(steps), "samples");

    const int jobs = std::max(1, info.sm_count);
    std::vector<ChaseSpec> all(jobs, one);
    const std::string all_name = "fine_chase, " + std::to_string(jobs) + " jobs x 2048 loads";
    report(all_name.c_str(), time_call(repeat, [&] { be.fine_chase(all); }), double(steps) * jobs, "samples");

    ChaseSpec avg = one;
    avg.steps = 100000;
    report("average_chase, 1 job x 100000 loads", time_call(repeat, [&] { be.average_chase(avg); }),
           double(avg.steps), "loads");

    // Sequence: a fills, b fills, a re-measures (timed) -- the L1-sharing pattern.
    std::vector<uint32_t> seq_index(512), seq_latency(512);
    const mt_chase_array sa = small.c();
    const mt_actor actors[2] = {{0, 0, -1}, {1, 0, -1}};
    mt_phase phases[3];
    for (int p = 0; p < 3; ++p) {
      phases[p] = mt_phase{};
      phases[p].struct_size = sizeof(mt_phase);
      phases[p].array = &sa;
      phases[p].actor = p == 1 ? 1 : 0;
      phases[p].steps = footprint / stride;
    }
    phases[2].steps = 512;
    phases[2].out_index = seq_index.data();
    phases[2].out_latency = seq_latency.data();
    mt_sequence_job seq{};
    seq.struct_size = sizeof seq;
    seq.space = MT_SPACE_GLOBAL_CA;
    seq.actors = actors;
    seq.actor_count = 2;
    seq.phases = phases;
    seq.phase_count = 3;
    seq.shared_carveout_percent = -1;
    report("sequence_chase, 2 actors, 3 phases", time_call(repeat, [&] { be.sequence_chase(seq); }), 512.0,
           "samples");
    report("timing_overhead (cached)", time_call(repeat, [&] { be.timing_overhead(); }), 1.0, "calls");

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
