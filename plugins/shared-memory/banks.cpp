// shared-memory/banks: the banks of shared memory from one warp's loads. Lane t of a warp
// re-reads the 4-byte word t x stride (an array whose every element leads to itself; the
// warp's lanes are chains of the probe's kernel, banks_run.cu), so every load of the warp takes as
// many turns as the most distinct words one bank holds. Latency against stride gives the banks,
// their width and a conflict's cost; d lanes on d words of one bank give the latency at each
// conflict degree 1 .. 32; all lanes on one word show a broadcast; 1 .. 32 warps the loads per
// cycle of an SM. docs/shared-memory.md.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <memtopo/analysis/robust.hpp>
#include <memtopo/probe.hpp>

#include "banks_analysis.hpp"
#include "banks_run.hpp"
#include "probes.hpp"

namespace shmem {
namespace {

struct Warp {
  const memtopo::Context& ctx;
  double overhead = 0;
  uint32_t ceiling = 0;  // cycles above which a load was interrupted

  // Cycles per load (timing overhead off) of `warps` warps of `lanes` lanes, lane c at word
  // c x stride, each load `width` bytes.
  double cycles(uint32_t stride, uint32_t lanes, uint32_t warps = 1, uint32_t width = 4) const {
    return bank_load_cycles(ctx, stride, lanes, warps, width, ceiling) - overhead;
  }
};

// Warps of one block: at most 32, and what the device's blocks hold.
uint32_t max_warps(const memtopo::Context& ctx) {
  const int threads = ctx.device().max_threads_per_block > 0 ? ctx.device().max_threads_per_block : 1024;
  return std::min(uint32_t(threads) / 32, 32u);
}

// Load-to-use latency by the definition of every path (docs/format.md): one lane's pointer
// chase at two lengths, the difference of their typical clean windows over the
// difference of their loads, so that neither the clock reads nor what a first pass pays is in it; less what a
// positive noise adds per load, read off per-load samples of the same hit where the chase's
// windows carry it too (chase_noise_excess). The low windows leave out those an interruption
// lengthened (low_window), the samples those above twice their median (uninterrupted_mean's
// rule) or the ceiling. 128 windows of each length: of 16 the 10th percentile was now and then
// an interrupted one, and the variance per load too loose to tell noise. 64 and 192 loads: at
// 0.4 % interruptions a load most windows of each length are clean (docs/shared-memory.md).
constexpr uint32_t kShortChase = 64, kLongChase = 192, kChaseRepeats = 128, kSamples = 2048;

// A length's typical clean window. An interruption adds hundreds of cycles at once: the windows
// within four noise spreads of n loads above the quickest are clean, and where a fifth of them
// or more are, their median is taken: the same share of each length's clean windows, as noise
// alone makes them. The 10th percentile of all windows was not (random device 60: at 0.4 %
// interruptions a load about one window of 384 loads in six was clean, and that percentile lay
// near their median, while the short windows' lay low among theirs: 24.96 cycles for 24).
// Fewer clean windows, or no noise measured: the 10th percentile of all.
double low_window(const std::vector<double>& windows, uint32_t loads, double sigma_per_load) {
  namespace an = memtopo::analysis;
  if (windows.empty() || !(sigma_per_load > 0)) return an::percentile(windows, 10);
  const double top = *std::min_element(windows.begin(), windows.end()) + 4 * std::sqrt(double(loads)) * sigma_per_load;
  std::vector<double> clean;
  for (double w : windows)
    if (w <= top) clean.push_back(w);
  return clean.size() * 5 >= windows.size() ? an::median(clean) : an::percentile(windows, 10);
}

double chase_latency(const memtopo::Context& ctx, double ceiling) {
  namespace an = memtopo::analysis;
  const std::vector<double> short_w = chase_window_cycles(ctx, kShortChase, kChaseRepeats),
                            long_w = chase_window_cycles(ctx, kLongChase, kChaseRepeats);
  const double between = double(kLongChase - kShortChase);
  const std::vector<double> samples = one_lane_samples(ctx, kSamples);
  const double limit = std::min(ceiling > 0 ? ceiling : 1e18, 2 * an::median(samples));
  std::vector<double> quiet;
  for (double v : samples)
    if (v <= limit) quiet.push_back(v);
  double sigma = 0;  // of one load's noise
  if (quiet.size() >= 2) {
    const double m = an::mean(quiet);
    for (double v : quiet) sigma += (v - m) * (v - m);
    sigma = std::sqrt(sigma / double(quiet.size() - 1));
  }
  const double chase = (low_window(long_w, kLongChase, sigma) - low_window(short_w, kShortChase, sigma)) / between;
  return chase - an::chase_noise_excess(samples, limit, short_w, long_w, between);
}

// Vector loads without a conflict (lane t at the t-th 8- or 16-byte word): their latency, the
// turns they take (what they add over a 4-byte load, in conflict turns, plus one) and the bytes
// per cycle of up to 32 warps.
void measure_widths(memtopo::Context& ctx, const Warp& w, const BankFit& f, double one_warp, double chase) {
  std::vector<double> latency{chase}, bytes(3, 0.0), rows;
  std::vector<int64_t> turns{1};
  for (uint32_t width : {8u, 16u}) {
    const double extra = w.cycles(width / 4, 32, 1, width) - one_warp;
    latency.push_back(chase + extra);
    turns.push_back(int64_t(std::llround(extra / f.per_conflict_cycles)) + 1);
  }
  for (size_t k = 0; k < 3; ++k) {
    const uint32_t width = 4u << k;
    for (uint32_t warps = 1; warps <= max_warps(ctx); warps *= 2) {
      const double c = w.cycles(width / 4, 32, warps, width), per_cycle = 32.0 * warps * width / c;
      bytes[k] = std::max(bytes[k], per_cycle);
      rows.insert(rows.end(), {double(width), double(warps), c, per_cycle});
    }
  }
  ctx.raw("widths", {"load_bytes", "warps", "cycles_per_load", "bytes_per_cycle"}, rows);
  const std::string at = "loads of 4, 8 and 16 bytes, lane t at the t-th word of that width (the chase's latency plus "
                         "what a warp's load of that width adds over a 4-byte one)";
  ctx.result("shared.wide_load_latency_cycles", latency, memtopo::ResultInfo{0.9, memtopo::Bound::Exact, at});
  ctx.result("shared.wide_load_turns", turns,
             memtopo::ResultInfo{0.8, memtopo::Bound::Exact,
                                 at + ": the latency over a 4-byte load's in conflict turns, plus one"});
  ctx.result("shared.wide_load_sm_bytes_per_cycle", bytes,
             memtopo::ResultInfo{0.8, memtopo::Bound::AtLeast, at + ", up to 32 warps of 32 lanes, each lane a chain"});
}

void measure_banks(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_KERNELS)) throw memtopo::Skip("the backend runs no probe kernels (MT_CAP_KERNELS)");
  const Warp w{ctx, ctx.backend().timing_overhead(), uint32_t(ctx.option<int64_t>("interruption_cycles"))};
  std::vector<StrideLatency> series;
  std::vector<double> rows;
  for (uint32_t s : probe_strides()) {
    series.push_back({s, w.cycles(s, 32)});
    rows.insert(rows.end(), {double(s), series.back().cycles});
  }
  const double broadcast = w.cycles(0, 32), one_lane = w.cycles(1, 1), chase = chase_latency(ctx, w.ceiling);
  rows.insert(rows.end(), {0.0, broadcast});
  ctx.raw("strides", {"stride_words", "cycles_per_load"}, rows);
  const BankFit f = fit_banks(series);
  ctx.result("shared.latency_cycles", chase,
             memtopo::ResultInfo{0.9, memtopo::Bound::Exact,
                                 "one lane's pointer chase, the median of the uninterrupted among " +
                                     std::to_string(kChaseRepeats) + " windows of " + std::to_string(kShortChase) + " and " +
                                     std::to_string(kLongChase) + " loads, less the noise its single loads show (one timed alone: " +
                                     std::to_string(std::lround(one_lane)) + " cycles less the timing's cost)"});
  if (!f.found) throw memtopo::NotDeterminable(f.note);
  const memtopo::ResultInfo info{0.9, memtopo::Bound::Exact, f.note};
  ctx.result("shared.banks", int64_t(f.banks), info);
  ctx.result("shared.bank_bytes", int64_t(f.bank_bytes), info);
  ctx.result("shared.conflict_cycles", f.per_conflict_cycles, info);
  ctx.result("shared.broadcast", broadcast < f.base_cycles + 0.5 * f.per_conflict_cycles,
             memtopo::ResultInfo{0.9, memtopo::Bound::Exact,
                                 "32 lanes on one word: " + std::to_string(broadcast) + " cycles, against " +
                                     std::to_string(f.base_cycles) + " without a conflict"});
  // Degree d: d lanes on d words of one bank (a stride of one bank row).
  const uint32_t row = f.banks * f.bank_bytes / 4;
  std::vector<double> by_degree, degree_rows;
  const double one = w.cycles(row, 1);
  for (uint32_t d = 1; d <= 32; ++d) {
    by_degree.push_back(chase + (d == 1 ? 0.0 : w.cycles(row, d) - one));
    degree_rows.insert(degree_rows.end(), {double(d), by_degree.back()});
  }
  ctx.raw("degrees", {"conflict_degree", "cycles_per_load"}, degree_rows);
  ctx.result("shared.latency_by_conflict_degree_cycles", by_degree,
             memtopo::ResultInfo{0.9, memtopo::Bound::Exact,
                                 "d lanes of one warp on d words of one bank (" + std::to_string(row) +
                                     " words apart), d = 1 .. 32: the chase's latency plus what d lanes add"});
  // Loads per cycle of an SM: warps of 32 lanes without a conflict.
  double most = 0;
  std::vector<double> warp_rows;
  for (uint32_t warps = 1; warps <= max_warps(ctx); warps *= 2) {
    const double c = w.cycles(1, 32, warps), per_cycle = 32.0 * warps / c;
    most = std::max(most, per_cycle);
    warp_rows.insert(warp_rows.end(), {double(warps), c, per_cycle});
  }
  ctx.raw("warps", {"warps", "cycles_per_load", "loads_per_cycle"}, warp_rows);
  ctx.result("shared.sm_bytes_per_cycle", 4 * most,
             memtopo::ResultInfo{0.8, memtopo::Bound::AtLeast,
                                 "4-byte loads of up to 32 warps of 32 lanes without a conflict, each lane a chain"});
  measure_widths(ctx, w, f, series.front().cycles, chase);
}

}  // namespace

memtopo::Probe banks_probe() {
  return memtopo::Probe("shared-memory/banks")
      .roles({{"shared.latency_cycles", "memory.latency_cycles@shared"},
              {"shared.banks", "memory.banks@shared"},
              {"shared.bank_bytes", "memory.bank_bytes@shared"},
              {"shared.sm_bytes_per_cycle", "memory.bytes_per_cycle_per_sm@shared"}})
      .summary("Shared-memory banks, bank width, conflict cost per degree, broadcast and loads per cycle")
      .provides({"shared.latency_cycles", "shared.banks", "shared.bank_bytes", "shared.conflict_cycles",
                 "shared.broadcast", "shared.latency_by_conflict_degree_cycles", "shared.sm_bytes_per_cycle",
                 "shared.wide_load_latency_cycles", "shared.wide_load_turns", "shared.wide_load_sm_bytes_per_cycle"})
      // These follow from the banks in the simulator (it has no shared-memory rate limit).
      .not_replayed({"shared.broadcast", "shared.latency_by_conflict_degree_cycles", "shared.sm_bytes_per_cycle",
                     "shared.wide_load_latency_cycles", "shared.wide_load_turns", "shared.wide_load_sm_bytes_per_cycle"})
      .key("shared.latency_cycles", MT_VALUE_FLOAT, "cycles", "load-to-use of one lane's shared pointer chase")
      .key("shared.banks", MT_VALUE_INT, "", "shared-memory banks", MT_KEY_HEADLINE)
      .key("shared.bank_bytes", MT_VALUE_INT, "bytes", "width of one bank", MT_KEY_HEADLINE)
      .key("shared.conflict_cycles", MT_VALUE_FLOAT, "cycles", "cycles each further turn of a bank conflict adds")
      .key("shared.broadcast", MT_VALUE_BOOL, "", "a warp's lanes reading one word take one turn")
      .key("shared.latency_by_conflict_degree_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "a warp's load with d lanes on d words of one bank, d = 1 .. 32")
      .key("shared.sm_bytes_per_cycle", MT_VALUE_FLOAT, "", "4-byte shared loads per cycle of an SM x 4 (at least)")
      .key("shared.wide_load_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "a warp's conflict-free load of 4, 8 and 16 bytes per lane")
      .key("shared.wide_load_turns", MT_VALUE_INT_ARRAY, "", "bank turns a conflict-free warp load of 4, 8, 16 bytes takes")
      .key("shared.wide_load_sm_bytes_per_cycle", MT_VALUE_FLOAT_ARRAY, "",
           "bytes per cycle of an SM in loads of 4, 8 and 16 bytes (at least)")
      .option("interruption_cycles", MT_VALUE_INT, "1000",
              "a timed shared load above this, or above twice its point's median, is an interruption of its warp, left "
              "out (32-way conflicts stay far below)")
      .range("64", "1000000")
      .budget_seconds(30)
      .run(measure_banks);
}

}  // namespace shmem

