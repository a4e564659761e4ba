// The report of a streams series: its rate, configurations and verification, or why not.
#include <cstdio>
#include <string>
#include <vector>

#include <memtopo/probe.hpp>

#include "streams_series.hpp"

namespace global_throughput {
namespace {

// The L1's SMs at the best point, each the same work: where their spans differ by more than
// this share of the longest (which sets the rate), warps held up near their end left an SM's
// L1 idle beside them, and the rate reads low. Random simulated devices with interruptions of
// 5000 cycles in 0.4 % of loads over a small L1: 3.9 and 4.0 % for rates 12 and 9 % low; at
// most 1.2 % where the rate came within 2 %; the shipped devices under 0.05 %.
constexpr double kSmSpanSpread = 0.025;

// A share as a percentage of one decimal.
std::string percent_text(double share) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", 100 * share);
  return text;
}

// The spread of the SMs' spans of a row (0: not known, a grid or two windows).
double sm_span_spread(const std::vector<double>& rows, size_t point) {
  const double longest = rows[kColumns * point + 7], shortest = rows[kColumns * point + 9];
  return longest > 0 && shortest > 0 ? (longest - shortest) / longest : 0.0;
}

// The verification of a rate (and its per-cycle form): counted, not counted here, or refuted
// (then false: a rate the counters refute is no rate of its level).
bool mark(memtopo::Context& ctx, const std::string& key, const PointCheck& check, memtopo::ResultInfo& info) {
  if (!check.counted) {
    memtopo::mark_unverified(info, check.why_not);
    return true;
  }
  if (!check.verdict.complete) {
    memtopo::mark_unverified(info, "the counters gave no number: " + check.verdict.disagreement);
    return true;
  }
  if (check.agrees) {
    memtopo::mark_verified(info, check.verdict, check.how);
    return true;
  }
  ctx.warn(key + " not reported: the hardware counters of its best point disagree with what the stream moved (" +
           check.verdict.disagreement + "; " + check.verdict.note + ")");
  return false;
}

}  // namespace

void report_series(memtopo::Context& ctx, const Series& s, const Measured& m) {
  const std::string k = std::string("throughput.") + s.name;
  const size_t best = best_point(m.points), small = smallest_within(m.points, kNear);
  // Bytes per second of the best point, from the rows (column 4) whatever the search maximized.
  const double per_second = m.rows[kColumns * best + 4];
  const std::string of = std::to_string(m.points.size()) + " configurations searched";
  const std::string windows =
      m.quickest_windows ? " (of its three runs of a long and a short window, the quickest long window less the "
                           "quickest short one, as of the two next best)"
      : m.median_windows ? " (the median of its three windows, as of the two next best)"
                         : "";
  const bool spread = m.best_spread > (m.quickest_windows ? kPairedWindowSpread : kWindowSpread);
  std::string uncertain =
      !spread ? "" : "; its three windows spread " + std::to_string(int(m.best_spread * 100 + 0.5)) +
                         " % of their median: noise in the windows, so the rate is uncertain by about that much";
  const double sm_spread = s.where == Where::L1 ? sm_span_spread(m.rows, best) : 0.0;
  const bool held_up = sm_spread > kSmSpanSpread;
  if (held_up)
    uncertain += "; its SMs' spans differ by " + percent_text(sm_spread) + " % of the longest, which sets the rate: warps held up near their end left the L1 idle beside "
                 "them, so the rate may read low";
  const double confidence = spread || held_up ? 0.5 : 0.8;
  memtopo::ResultInfo rate{confidence, memtopo::Bound::Exact,
                           "the best of " + of + ": " + m.points[best].config.text() + windows + uncertain};
  memtopo::ResultInfo cyc{confidence, memtopo::Bound::Exact,
                          (s.op == MT_SWEEP_READ
                               ? "SM clock cycles of the longest span of one SM's blocks at the best point"
                               : "the rate by events over the SM clock around the launch, at the best point (the "
                                 "stores in flight drain after the SMs' clocks stop)") +
                              uncertain};
  const bool reported = mark(ctx, k + "_bytes_per_second", m.check, rate);
  mark(ctx, k + "_bytes_per_cycle", m.check, cyc);
  if (reported) ctx.result(k + "_bytes_per_second", per_second, rate);
  ctx.result(k + "_best_config", m.points[best].config.text(), {0.8, memtopo::Bound::Exact, of});
  ctx.result(k + "_min95_config", m.points[small].config.text(),
             {0.8, memtopo::Bound::Exact, "the fewest bytes in flight per SM within 95 % of the best (" + of + ")"});
  const std::string cycle_key = s.where == Where::L2 && !s.shared_inputs ? k + "_bytes_per_cycle"
                                : s.where == Where::L1                    ? k + "_bytes_per_cycle_per_sm"
                                                                          : std::string();
  if (!reported) {
    const std::string why = "the hardware counters of its best point disagree with what the stream moved (" +
                            m.check.verdict.disagreement + ")";
    ctx.absent(k + "_bytes_per_second", why);
    if (!cycle_key.empty()) ctx.absent(cycle_key, why);
    return;
  }
  if (!cycle_key.empty()) ctx.result(cycle_key, m.best_per_cycle, cyc);
}

void absent_series(memtopo::Context& ctx, const Series& s, const std::string& why) {
  const std::string k = std::string("throughput.") + s.name;
  for (const char* suffix : {"_bytes_per_second", "_best_config", "_min95_config"}) ctx.absent(k + suffix, why);
  if (s.where == Where::L2 && !s.shared_inputs) ctx.absent(k + "_bytes_per_cycle", why);
  if (s.where == Where::L1) ctx.absent(k + "_bytes_per_cycle_per_sm", why);
  if (s.where == Where::Dram && (s.op == MT_SWEEP_READ || s.op == MT_SWEEP_WRITE))
    ctx.absent(k + "_fraction_of_theoretical", why);
}


void report_fraction(memtopo::Context& ctx, const std::string& name, double rate, double theoretical) {
  const double fraction = rate / theoretical;
  if (fraction > 1.0) {
    const std::string why = "the best rate, " + std::to_string(rate / 1e9) + " GB/s, is " +
                            std::to_string(int(fraction * 100 + 0.5)) + " % of the theoretical " +
                            std::to_string(theoretical / 1e9) +
                            " GB/s (device.memory_clock_khz x 2 x memory_bus_width_bits / 8)";
    ctx.warn("throughput." + name + "_fraction_of_theoretical not reported: " + why +
             ": check the device's memory clock and bus width, or whether a cache held the stream");
    ctx.absent("throughput." + name + "_fraction_of_theoretical", why);
    return;
  }
  ctx.result("throughput." + name + "_fraction_of_theoretical", fraction,
             {0.8, memtopo::Bound::Exact, "of device.memory_clock_khz x 2 x memory_bus_width_bits / 8"});
}

}  // namespace global_throughput
