// Line and sector: the fetch unit from the distances between consecutive misses of a
// 4-byte-stride chase past the size; the line from how the capacity grows with odd
// multiples of the fetch unit, bounded from above by power-of-two strides.
#include <algorithm>
#include <cmath>
#include <limits>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/steps.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;
namespace {

// Distances in bytes between consecutive misses of a 4-byte-stride chase.
std::vector<double> miss_spacings(const FootprintResult& o) {
  std::vector<double> spacing;
  int64_t last = -1;
  for (size_t i = 0; i < o.miss.size(); ++i) {
    if (!o.miss[i]) continue;
    if (last >= 0 && o.index[i] > o.index[last]) spacing.push_back(4.0 * (o.index[i] - o.index[last]));
    last = static_cast<int64_t>(i);
  }
  return spacing;
}

// Fetch granularity: overflow the cache, chase every 4-byte word; within a missing line each
// fetch unit misses once, so consecutive misses lie one fetch unit apart. False when the
// line cannot follow (no fetch unit, or only a cold pass was possible).
bool fetch_granularity(Measurer& m, uint64_t C, int64_t full_miss_bytes, LineResult& res) {
  const Target& t = m.target();
  m.ctx().progress(0.1, t.element + " line: fetch granularity");
  Footprint f;
  // Well past the size, and past the footprint where every access misses when the
  // transition is gradual.
  uint64_t over = std::max<uint64_t>(C + C / 2, full_miss_bytes > 0 ? uint64_t(full_miss_bytes) * 5 / 4 : 0);
  if (t.max_footprint_bytes) over = std::min(over, t.max_footprint_bytes);
  const bool cold = over <= C;
  f.miss_pattern = true;
  if (cold) {
    // The path cannot overflow the cache. Where a launch finds it cold (the constant caches
    // lose their lines between launches), the first pass still misses once per fetch unit.
    res.line_bytes.note = "needs a footprint past the size, which the path cannot hold (" + fmt_bytes(over) + ")";
    res.path_limited = true;
    f.chase = recipes::constant_stride(std::min<uint64_t>(C, 16384), 4);
    f.warmup_passes = 0;
    f.record_steps = cycle_of(f.chase);
  } else {
    f.warmup_passes = 1;
    f.record_steps = std::max<uint64_t>(t.max_record_steps, 16384);
    const uint64_t window = 4 * f.record_steps;
    if (over >= 16 * window) {
      // Every word of a window at the start, then the rest of the footprint at the size
      // search's stride: the window's lines are evicted between passes as every line is, and
      // a pass costs a load per size-search stride instead of one per word (8x fewer on an L2).
      const uint64_t filler = std::max<uint64_t>(t.stride_bytes, 4);
      std::vector<uint64_t> offsets;
      for (uint64_t o = 0; o < window; o += 4) offsets.push_back(o);
      for (uint64_t o = (window + filler - 1) / filler * filler; o + 4 <= over; o += filler) offsets.push_back(o);
      f.chase = recipes::from_byte_offsets(offsets, over);
    } else {
      f.chase = recipes::constant_stride(over, 4);
    }
  }
  const std::vector<double> spacing = miss_spacings(m.run(f));
  if (spacing.size() < 4) {
    res.fetch_granularity_bytes.note =
        cold ? "the path cannot hold a footprint past the size (" + fmt_bytes(over) + "), and a cold first pass missed too "
               "rarely (" + std::to_string(spacing.size()) + " spacings)"
             : "too few misses past the size to measure (" + std::to_string(spacing.size()) + ")";
    res.line_bytes.note = "needs the fetch granularity" + std::string(cold ? ", and " : ": ") + res.fetch_granularity_bytes.note;
    return false;
  }
  // The most frequent spacing: with random replacement some lines survive, which adds
  // longer spacings but never shorter ones. Its share says how clear it is.
  const an::Mode g = an::mode(spacing);
  res.fetch_granularity_bytes = {true, static_cast<int64_t>(round_up_pow2(static_cast<uint64_t>(g.value))), g.share,
                                 Bound::Exact,
                                 "most frequent distance between consecutive misses, 4-byte stride, " +
                                     std::to_string(spacing.size()) + " misses" +
                                     (cold ? " of a cold first pass (the path cannot hold a footprint past the size)" : "")};
  return !cold;  // the line needs capacities past the size
}

// The largest footprint in [lo, hi] (multiples of `stride`) that is still without capacity
// misses (or, for a gradual transition, where not yet nearly every load misses).
class StrideEdge {
 public:
  StrideEdge(Measurer& m, bool gradual, uint64_t cap) : m_(m), gradual_(gradual), cap_(cap) {}
  // `width`: how close below the edge the answer must be (at least the stride).
  uint64_t operator()(uint64_t stride, uint64_t lo, uint64_t hi, uint64_t width, bool* capped) {
    // Nearly every load missing: 90 % of them, or, where the largest footprint at this stride
    // misses fewer, 5 points below its fraction. Where some loads never miss (a random
    // device's L2 whose misses plateau at half its loads), no footprint would reach 90 %, and
    // the edge would read as the search's end (a line of 32 B for 128).
    double level = 0.9;
    auto fractions = [&](const std::vector<uint64_t>& sizes) {
      std::vector<Footprint> fs;
      // Recurring misses tell a per-SM cache's stray misses from capacity misses; a shared
      // cache's footprints are judged by their counts, as in its size search.
      const bool recurring = !gradual_ && !m_.target().shared_between_sms;
      for (uint64_t sz : sizes) fs.push_back(counted_footprint(mapped_stride(m_.target(), sz, stride), 1, 2, recurring));
      return m_.run(fs);
    };
    auto pred = [&](const std::vector<uint64_t>& sizes) {
      std::vector<bool> r;
      for (const auto& x : fractions(sizes)) r.push_back(gradual_ ? x.miss_fraction >= level : x.significant);
      return r;
    };
    an::SearchOptions so;
    so.granularity = stride;
    so.target_width = width;
    // One footprint per launch (a shared cache): plain bisection, the fewest footprints.
    so.points_per_round = static_cast<size_t>(std::max(m_.parallel_footprints(), 1));
    lo = lo / stride * stride;
    hi = hi / stride * stride + stride;
    *capped = false;
    if (hi > cap_) hi = cap_ / stride * stride;
    if (gradual_) {
      const double top = fractions({hi})[0].miss_fraction;
      if (top < 0.9) level = std::max(top - 0.05, 0.05);
    }
    if (hi == cap_ / stride * stride && !pred({hi})[0]) {
      *capped = true;
      return hi;  // a lower bound only
    }
    return an::bisect(an::BatchPredicate(pred), lo, hi, so).low;
  }

 private:
  Measurer& m_;
  bool gradual_;
  uint64_t cap_;
};

// Where the path stops odd-stride footprints short of the capacity: strides just past each
// candidate line L instead. Loads 5/4 L apart take a line each and skip every fifth, so 9/8 of
// the size fits in 9/10 of the lines; at 5/8 L apart every line is touched and 9/8 of the size
// cannot fit. The first candidate that fits is the line. Five is prime to the set counts
// seen (powers of two, 24, 48), so the skipped lines fall on every set alike: at 9/8 L apart
// (17/16 of the size) a modulo set of 4 ways got 5 lines, and a random device's 256 B line
// read 512 B.
// `why`: what made the odd strides fail, for the note.
bool line_from_short_strides(Measurer& m, uint64_t C, uint64_t g, uint64_t upto, const std::string& why,
                             LineResult& res) {
  for (uint64_t cand = g; cand <= upto; cand *= 2) {
    const uint64_t S = (cand * 5 / 4 + 3) / 4 * 4;
    const uint64_t F = (C + C / 8) / S * S;
    if (m.run(counted_footprint(mapped_stride(m.target(), F, S), 1, 2)).significant) continue;
    res.line_bytes = {true, static_cast<int64_t>(cand), 0.9, Bound::Exact,
                      fmt_bytes(F) + " (9/8 of the size) fits at a stride of " + fmt_bytes(S) +
                          (cand > g ? " but not at " + fmt_bytes((cand / 2 * 5 / 4 + 3) / 4 * 4) : std::string()) +
                          ": the line is " + fmt_bytes(cand) + " (" + why + ")"};
    return true;
  }
  return false;
}

// Line: the capacity at an odd multiple k of the fetch unit. While the stride is below the
// line every line is still touched, so the largest footprint without misses stays C; past
// the line each load allocates a line of its own and the footprint grows to C * stride /
// line. (Mei and Chu's overflow sweep finds where the set index starts, which is the line
// only when consecutive lines go to consecutive sets.)
constexpr double kUnclearLine = 0.75;  // of 1 - |log2(estimate / line)|

void odd_stride_line(Measurer& m, uint64_t C, int64_t full_miss_bytes, LineResult& res) {
  const Target& t = m.target();
  const uint64_t g = static_cast<uint64_t>(res.fetch_granularity_bytes.value);
  const uint64_t cap = footprint_cap(t) ? footprint_cap(t) : std::numeric_limits<uint64_t>::max();
  // A gradual transition (every access missing only well past the first misses, as on the
  // H100's L1) blurs the onset; there the same ratio is taken at the other end: the largest
  // footprint at which not yet (nearly) every load misses.
  const bool gradual = full_miss_bytes > 0 && uint64_t(full_miss_bytes) > C + C / 2;
  StrideEdge edge(m, gradual, cap);
  bool base_capped = false;
  // Each edge is needed only to the precision of the ratio read from it: a ratio below
  // 1 + 0.5/k is "still below the line", and the line is the ratio's nearest power of two,
  // so an edge to 1/(16 k) of the base decides both (the bisection stops there, not at one
  // stride: a third of the footprints of a search to the stride on a cache of many MiB).
  const uint64_t base = gradual ? edge(g, uint64_t(full_miss_bytes) / 2, uint64_t(full_miss_bytes) * 2,
                                       uint64_t(full_miss_bytes) / 128, &base_capped)
                                : C;
  std::vector<double> row;
  for (uint64_t k : {3ull, 5ull, 9ull, 17ull, 33ull}) {
    const uint64_t stride = k * g;
    if (stride > 4096) break;
    m.ctx().progress(0.3 + 0.1 * double(k) / 33.0, t.element + " line: capacity at stride " + fmt_bytes(stride));
    bool capped = false;
    const uint64_t fmax = edge(stride, base, base * k + stride, base / (16 * k), &capped);
    const double ratio = double(fmax) / double(base);
    row.push_back(double(stride));
    row.push_back(double(fmax));
    if (!capped && ratio < 1.0 + 0.5 / double(k)) continue;  // still below the line
    // line = stride / ratio, rounded to a power of two (at least the fetch unit). Capped:
    // the ratio is a lower bound, so the line is at most `est`.
    const double est = double(stride) / ratio;
    uint64_t line = uint64_t(1) << static_cast<int>(capped ? std::floor(std::log2(est)) : std::lround(std::log2(est)));
    line = std::max(line, g);
    const bool short_fit = C + C / 8 <= cap;
    if (capped && short_fit &&
        line_from_short_strides(m, C, g, line,
                                "the path, " + fmt_bytes(cap) + ", stops the odd-stride footprints short of the capacity", res))
      break;
    // A full-miss ratio halfway between two lines (random replacement: every load misses only
    // far past the size, and how far is no multiple of the stride) decides nothing; the short
    // strides' fit does (random devices: 363 B read as 512 for 256).
    const double confidence = 1.0 - std::fabs(std::log2(est / double(line)));
    if (!capped && gradual && confidence < kUnclearLine && short_fit &&
        line_from_short_strides(m, C, g, 2 * line,
                                "the full-miss footprint at a stride of " + fmt_bytes(stride) + ", " + fmt_bytes(fmax) +
                                    ", put it between two lines: " + fmt_bytes(uint64_t(est)),
                                res))
      break;
    if (capped && line * 2 <= uint64_t(est)) {
      res.line_bytes.note = "footprints past the path's limit (" + fmt_bytes(cap) + ") would be needed";
      res.path_limited = true;
      break;
    }
    res.line_bytes = {true, static_cast<int64_t>(line),
                      capped ? 0.7 : std::max(0.0, confidence),
                      capped ? Bound::AtMost : Bound::Exact,
                      std::string(gradual ? "full-miss footprint" : "capacity") + " at a stride of " + fmt_bytes(stride) +
                          " is " + fmt_bytes(fmax) + " = " + fmt_bytes(base) + " * stride / line" +
                          (capped ? " or more (the path stops the footprint there), so the line is at most " +
                                        fmt_bytes(line)
                                  : std::string())};
    break;
  }
  m.ctx().raw(t.element + "-line-strides", {"stride_bytes", "largest_footprint_without_misses"}, row);
}

// Hashed set indices spread odd strides unevenly (the H100's L1 holds 1.3x, not 2.25x, its
// size at 9 fetch units), so the odd-stride line is an upper bound there. Power-of-two
// strides give a second one: n lines S apart with n * S = 1.125 C fit only when each takes
// less than S / 1.125 bytes, so the (power-of-two) line is at most S / 2; at S <= line every
// line of the footprint is touched and 1.125 C can never fit. Under modulo mapping the first
// such S is sets * line (lines S apart share few sets), above the odd-stride answer; under a
// hash that spreads power-of-two strides it is 2 * line. Both bounds err upward only, so the
// smaller wins.
//
// Where the transition is gradual (misses that come and go from C on, every load missing only
// at full_miss_bytes: the H100's L2, whose first miss moves by a tenth between runs), 1.125 C
// may fit at the line's own stride. There the span is 1.05x the full-miss footprint instead,
// which every line of it overflows, while at twice the line its lines take half of it, below C.
void power_of_two_bound(Measurer& m, uint64_t C, int64_t full_miss_bytes, LineResult& res) {
  const Target& t = m.target();
  const uint64_t g = static_cast<uint64_t>(res.fetch_granularity_bytes.value);
  const uint64_t full = full_miss_bytes > 0 ? uint64_t(full_miss_bytes) : 0;
  const bool gradual = full > C + C / 2;
  if (gradual && full + full / 20 > 2 * (C - C / 10)) return;  // half the span would not stay below C
  const uint64_t span = gradual ? full + full / 20 : C + C / 8;
  if (footprint_cap(t) && span > footprint_cap(t)) return;
  std::vector<uint64_t> strides;
  for (uint64_t S = 2 * g; S <= uint64_t(res.line_bytes.value); S *= 2) strides.push_back(S);
  std::vector<Footprint> fs;
  for (uint64_t S : strides) fs.push_back(counted_footprint(mapped_lines(t, (span + S - 1) / S, S), 1, 2));
  m.ctx().progress(0.9, t.element + " line: power-of-two strides");
  const auto o = fs.empty() ? std::vector<FootprintResult>{} : m.run(fs);
  std::vector<double> row;
  for (size_t i = 0; i < strides.size(); ++i)
    for (double v : {double(strides[i]), double(fs[i].chase.footprint_bytes), o[i].miss_fraction}) row.push_back(v);
  m.ctx().raw(t.element + "-line-pow2", {"stride_bytes", "footprint_bytes", "miss_fraction"}, row);
  for (size_t i = 0; i < strides.size(); ++i) {
    if (o[i].significant) continue;
    const uint64_t line = std::max(strides[i] / 2, g);
    if (int64_t(line) < res.line_bytes.value) {
      res.line_bytes.note = "lines " + fmt_bytes(strides[i]) + " apart over " +
                            (gradual ? "1.05x the full-miss footprint (" : "1.125x the size (") +
                            fmt_bytes(fs[i].chase.footprint_bytes) + ") fit, so the line is at most half of that; " +
                            "the odd-stride capacity said " + fmt_bytes(uint64_t(res.line_bytes.value)) +
                            " (a hashed set index spreads odd strides unevenly)";
      res.line_bytes.value = static_cast<int64_t>(line);
      // Only strides below it missed, which is all a line of this size allows.
      res.line_bytes.confidence = 0.9;
    }
    break;
  }
}

// The line from capacities past the size C, once the fetch unit is known.
void line_from_capacity(Measurer& m, uint64_t C, int64_t full_miss_bytes, LineResult& res) {
  odd_stride_line(m, C, full_miss_bytes, res);
  const uint64_t g = static_cast<uint64_t>(res.fetch_granularity_bytes.value);
  const uint64_t cap = footprint_cap(m.target());
  if (res.line_bytes.found && !res.path_limited && res.line_bytes.value > int64_t(g) && (!cap || C + C / 8 <= cap))
    power_of_two_bound(m, C, full_miss_bytes, res);
  if (!res.line_bytes.found && res.line_bytes.note.empty())
    res.line_bytes.note = "capacity did not grow with the stride up to " + fmt_bytes(33 * g);
}

}  // namespace

LineResult find_line(Measurer& m, int64_t size_bytes, int64_t full_miss_bytes) {
  LineResult res;
  const uint64_t C = static_cast<uint64_t>(size_bytes);
  if (fetch_granularity(m, C, full_miss_bytes, res)) line_from_capacity(m, C, full_miss_bytes, res);
  return res;
}

LineResult find_line_in_partition(Measurer& m, int64_t size_bytes, int64_t full_miss_bytes, const OwnLines& own,
                                  int64_t partitions) {
  LineResult res;
  const uint64_t C = static_cast<uint64_t>(size_bytes);
  if (!fetch_granularity(m, C, full_miss_bytes, res)) return res;
  m.set_line_map(own.map);
  line_from_capacity(m, C / uint64_t(partitions), full_miss_bytes / partitions, res);
  m.set_line_map({});
  return res;
}

}  // namespace memtopo::cache
