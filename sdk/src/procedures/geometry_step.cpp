// Sets, ways and set-index mapping: the most lines a chase holds without misses at every
// power-of-two stride (Mei and Chu's stage two, searched rather than swept), the ways from
// the plateau, the sets from the size, and modulo against hashed mapping from how well the
// strides and lines at random places fit modulo sets.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/steps.hpp"
#include "front_fill.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;
namespace {

constexpr uint64_t kLargestStride = uint64_t(1) << 22;

// Equal within a stray miss: one line, or 0.2 % of many.
bool near(uint64_t x, uint64_t y) {
  const uint64_t d = x > y ? x - y : y - x;
  return d <= std::max<uint64_t>(1, std::max(x, y) / 500);
}

// Most lines held at each power-of-two stride from one line up (S, lines), and why the scan
// stopped early when it did.
struct StrideScan {
  std::vector<std::pair<uint64_t, uint64_t>> seen;
  uint64_t budget_stop = 0;  // the stride the load budget stopped the scan at
  uint64_t limit_stop = 0;   // the stride the path's footprint limit stopped the scan at
  bool plateau_from_bound = false;  // the last count is the bound at limit_stop (below)
  std::string not_determinable;
};

// Scan power-of-two strides upward from one line. Under modulo mapping k(S) = C / S until
// S = T*b and W beyond; a hash of higher address bits keeps k above W until the stride
// passes its highest bit. The plateau (three equal strides past the size) is W either way.
StrideScan scan_strides(Measurer& m, uint64_t C, uint64_t b) {
  const Target& t = m.target();
  StrideScan scan;
  auto& seen = scan.seen;
  const uint64_t loads_before = m.loads_chased();
  for (uint64_t S = b; S <= kLargestStride; S *= 2) {
    m.ctx().progress(0.05 + 0.9 * double(seen.size()) / 16.0, t.element + " sets/ways: stride " + fmt_bytes(S));
    if (t.geometry_load_budget && m.loads_chased() - loads_before > t.geometry_load_budget) {
      scan.budget_stop = S;
      break;
    }
    bool capped = false;
    // At one line's stride the count is the size in lines (the hint also tries half of it).
    const uint64_t k = most_lines_without_misses(m, S, C, b, &capped, seen.empty() ? C / b : seen.back().second);
    if (capped) {
      // The path's footprint limit stopped the search with k lines and no misses: a lower
      // bound. Lines S apart reach the sets that lines S/2 apart reach, or half of them
      // (k(S) = W T / gcd(T, S/b)), so k(S) is the previous count or half of it. A bound above
      // the half (allowing the previous count a stray miss) rules the half out: the plateau,
      // reached at S/2. A cache larger than half the path's reach needs this, since W + 1
      // lines 2 T b apart span twice its size (the constant L1.5 of 64 KiB in 95 KiB).
      scan.limit_stop = S;
      if (!seen.empty()) {
        const uint64_t prev = seen.back().second;
        const uint64_t halved_at_most = (prev + std::max<uint64_t>(1, prev / 500)) / 2;
        if (k > halved_at_most) {
          seen.emplace_back(S, prev);
          scan.plateau_from_bound = true;
        }
      }
      break;
    }
    seen.emplace_back(S, k);
    // A stride of one line that holds far more lines than the size allows: the line is
    // shorter than line_bytes says, so no stride here can confine lines to one set.
    if (S == b && double(k) * double(b) > 1.5 * double(C)) {
      scan.not_determinable = std::to_string(k) + " lines " + fmt_bytes(b) + " apart stay without misses, " +
                              std::to_string(double(k) * double(b) / double(C)).substr(0, 4) +
                              " times the size: the cache allocates less than line_bytes per line, so strides of "
                              "whole lines cannot reveal its sets";
      break;
    }
    const size_t n = seen.size();
    if (S > C && n >= 3 && near(seen[n - 1].second, seen[n - 2].second) && near(seen[n - 2].second, seen[n - 3].second))
      break;
  }
  m.ctx().debug(t.element + " sets/ways: the stride scan chased " + std::to_string(m.loads_chased() - loads_before) +
                " loads");
  return scan;
}

// Sets and ways from the plateau P of the scan.
struct SetsAndWays {
  uint64_t sets = 0, ways = 0;
  bool rounded = false;  // the measured size was rounded to a whole number of sets
};

// The plateau P of power-of-two strides is W times the odd part of the set count (lines 2^j
// apart cycle through T / gcd(T, 2^j) sets). The true W is the smallest divisor W' of P at
// whose stride C/W' (lines T'*b apart, T' = C / (b W')) a set holds exactly W' lines: for
// W' < W that stride is a multiple of T*b and holds W lines, not W'. A size measured a few
// lines long (random replacement, sampled passes) still names the set count: the line count
// is rounded to the nearest multiple of W' within 1 %.
SetsAndWays sets_and_ways(Measurer& m, uint64_t P, bool all_lines_flat, uint64_t C, uint64_t b) {
  const uint64_t lines = C / b;
  auto sets_for = [&](uint64_t w) -> uint64_t {
    const uint64_t t = (lines + w / 2) / w;
    const double off = std::fabs(double(t * w) - double(lines)) / double(lines);
    return t > 0 && off <= 0.01 ? t : 0;
  };
  SetsAndWays r;
  uint64_t W = all_lines_flat ? P : 0;
  for (uint64_t w = 1; w <= P && !W; ++w) {
    if (P % w || !sets_for(w)) continue;
    if (w == P || most_lines_without_misses(m, sets_for(w) * b, C, b) == w) W = w;
  }
  if (W == 0) return r;
  r.ways = W;
  r.rounded = sets_for(W) * W != lines;
  uint64_t T = sets_for(W);
  // A size measured a few lines long leaves T a little off. The plateau says more: it is W
  // times the odd part of T, so T = odd * 2^j; take the j closest to the measured size.
  if (r.rounded && P % W == 0 && (P / W) % 2 == 1) {
    const uint64_t odd = P / W;
    const double j = std::round(std::log2(double(lines) / double(W) / double(odd)));
    const uint64_t snapped = odd << static_cast<int>(std::max(0.0, j));
    if (std::fabs(double(snapped) - double(T)) <= 0.01 * double(T)) T = snapped;
  }
  r.sets = T;
  return r;
}

// Power-of-two strides cannot tell T modulo sets of W ways from T groups whose lines a hash
// of higher address bits spreads over many smaller sets: every such stride reaches all sets
// of a group. Lines at random places tell them apart: W - W/64 random lines of each modulo
// set fit T x W, whereas under a hash some sets get more than their ways. Returns the miss
// fraction, or a negative value when the path cannot hold the span the test needs.
double random_lines_miss_fraction(Measurer& m, uint64_t T, uint64_t W, uint64_t lines, uint64_t b, size_t* count,
                                  uint64_t* span_bytes, bool* significant) {
  const Target& t = m.target();
  const uint64_t span_cap = std::min(kArrayBytes, planned_reach_bytes(t)) / b;
  const uint64_t span = std::min<uint64_t>(8 * lines, span_cap) / T * T;  // whole rounds of the T sets
  const uint64_t per_set = W - W / 64;
  if (span / T < 2 * per_set) return -1;
  std::mt19937_64 rng(0x6d656d746f706fULL);  // fixed: the same lines on every run
  std::vector<uint64_t> offsets;
  std::vector<uint64_t> pick(span / T);
  for (uint64_t set = 0; set < T; ++set) {
    std::iota(pick.begin(), pick.end(), uint64_t(0));
    for (uint64_t i = 0; i < per_set; ++i) {
      std::swap(pick[i], pick[i + rng() % (pick.size() - i)]);
      offsets.push_back((pick[i] * T + set) * b);
    }
  }
  std::shuffle(offsets.begin(), offsets.end(), rng);
  const bool mapped = !t.line_map.empty();
  if (mapped)
    for (uint64_t& o : offsets) o = t.line_map.place(o);
  m.ctx().progress(0.95, t.element + " sets/ways: random lines");
  // The same lines on several SMs of one launch. A hash overflows the same sets on every SM;
  // another user's line takes a way of one SM's cache only (the H100's L1 paths, the
  // simulator's stray_line_probability), and with exactly W lines in a set it costs misses.
  // So the copy with the fewest misses but one stands for the cache: strays fool it only on
  // all copies but one, a hash escapes it only where two copies show no significant misses.
  const size_t copies = static_cast<size_t>(std::min(m.parallel_footprints(), 9));
  auto runs = m.run(std::vector<Footprint>(copies, counted_footprint(recipes::from_byte_offsets(offsets, mapped ? t.line_map.region_bytes : span * b), 2, 4)));
  std::sort(runs.begin(), runs.end(), [](const FootprintResult& x, const FootprintResult& y) {
    return x.significant != y.significant ? !x.significant : x.misses < y.misses;
  });
  const FootprintResult& o = runs[std::min<size_t>(1, copies - 1)];
  std::vector<double> row;
  for (const auto& r : runs)
    for (double v : {double(offsets.size()), double(span * b), r.miss_fraction}) row.push_back(v);
  m.ctx().raw(t.element + "-random-lines", {"lines", "span_bytes", "miss_fraction"}, row);
  *count = offsets.size();
  *span_bytes = span * b;
  *significant = o.significant;
  return o.miss_fraction;
}

void write_scan(Measurer& m, const StrideScan& scan, GeometryResult& res) {
  std::vector<double> row;
  for (auto [S, k] : scan.seen) {
    res.strides.push_back(S);
    res.max_lines.push_back(double(k));
    row.push_back(double(S));
    row.push_back(double(k));
  }
  m.ctx().raw(m.target().element + "-sets-ways", {"stride_bytes", "max_lines_without_misses"}, row);
}

// Under modulo mapping a power-of-two stride holds the count at half of it or half that
// count (k(S) = W T / gcd(T, S/b)); under a hash that spreads the stride, the same count. So
// the two counts are tried first, each with one more step past it: where a count holds and
// the step past it misses, it is the answer to the search's width at a cost of two
// footprints instead of a dozen. 0 where neither is confirmed (the search follows).
uint64_t verified_count(const an::BatchPredicate& pred, uint64_t hint, uint64_t step, bool one_launch) {
  const std::vector<uint64_t> same{hint, hint + step}, half{hint / 2, hint / 2 + step};
  auto confirmed = [](const std::vector<bool>& r, size_t i) { return r.size() > i + 1 && !r[i] && r[i + 1]; };
  if (one_launch) {
    const std::vector<bool> r = pred({half[0], half[1], same[0], same[1]});
    return confirmed(r, 2) ? hint : confirmed(r, 0) ? hint / 2 : 0;
  }
  const std::vector<bool> r = pred(same);
  if (confirmed(r, 0)) return hint;
  if (r.empty() || !r[0]) return 0;  // the same count holds and more: search upward
  return confirmed(pred(half), 0) ? hint / 2 : 0;
}

}  // namespace

uint64_t most_lines_without_misses(Measurer& m, uint64_t S, uint64_t C, uint64_t b, bool* capped, uint64_t hint) {
  if (capped) *capped = false;
  const Target& t = m.target();
  auto pred = [&](const std::vector<uint64_t>& ks) {
    // Four passes: a set one line over capacity under a random-like policy misses only a
    // few times a pass.
    // Recurring misses tell a per-SM cache's stray misses from capacity misses; a shared
    // cache's footprints are judged by their counts, as in its size search.
    std::vector<Footprint> fs;
    for (uint64_t k : ks) fs.push_back(counted_footprint(front_filled_lines(t, k, S, b), 2, 4, !t.shared_between_sms));
    std::vector<bool> r;
    for (const auto& x : m.run(fs)) r.push_back(x.significant);
    return r;
  };
  an::SearchOptions so;
  so.start = 1;
  so.limit = 4 * (C / b) + 64;
  so.limit = std::min<uint64_t>(so.limit, planned_reach_bytes(t) / S);
  so.granularity = 1;
  // One footprint per launch (a shared cache): plain bisection, the fewest footprints.
  so.points_per_round = static_cast<size_t>(std::max(m.parallel_footprints(), 1));
  // k rarely falls below half the count at the previous (half) stride, so the search starts
  // there and, for thousands of lines, stops at 0.05 % (the plateau compares within 0.2 %).
  if (hint >= 4) so.start = std::min(hint / 2, so.limit);
  if (hint >= 4096) so.target_width = hint / 2048;
  if (hint >= 4 && hint + so.target_width < so.limit) {
    const uint64_t k = verified_count(pred, hint, std::max<uint64_t>(so.target_width, 1), m.parallel_footprints() >= 4);
    if (k) return k;
  }
  an::Bracket br = an::find_transition(an::BatchPredicate(pred), so);
  if (!br.found && br.low == 0 && so.start > 1) br = an::bisect(an::BatchPredicate(pred), 0, so.start, so);
  if (!br.found && br.low > 0 && capped) *capped = true;  // no misses up to the path's limit
  return br.found ? br.low : (capped && *capped ? br.low : 0);
}

GeometryResult find_geometry(Measurer& m, int64_t size_bytes, int64_t line_bytes) {
  const Target& t = m.target();
  GeometryResult res;
  const uint64_t b = static_cast<uint64_t>(line_bytes);
  // A size measured within a line of the truth (the first misses of a non-LRU cache can come
  // a step late): whole lines only.
  const uint64_t C = b ? static_cast<uint64_t>(size_bytes) / b * b : 0;
  auto not_determinable = [&](const std::string& why) {
    res.sets.note = res.ways.note = why;
    return res;
  };
  if (C == 0 || b == 0) return not_determinable("needs a size of at least one line");
  calibrate_front_fill(m, b);
  const StrideScan scan = scan_strides(m, C, b);
  write_scan(m, scan, res);
  if (!scan.not_determinable.empty()) return not_determinable(scan.not_determinable);
  const auto& seen = scan.seen;
  const size_t n = seen.size();
  // Every line of the cache held at every stride from one line to 8 lines and on, until the
  // footprint outgrows the TLBs (slow loads that are not cache misses) or the array: no
  // plateau below the line count, the picture of a fully associative cache or of a set index
  // hashed from many address bits. The random-lines test below tells which.
  size_t flat = 0;
  while (flat < n && near(seen[flat].second, seen[0].second)) ++flat;
  const bool plateau = n >= 3 && near(seen[n - 1].second, seen[n - 2].second) && seen[n - 1].second > 0;
  const bool all_lines_flat = !plateau && n >= 1 && seen[0].first == b && flat >= 4 &&
                              std::fabs(double(seen[0].second) - double(C / b)) <= 0.01 * double(C / b);
  if (!plateau && !all_lines_flat)
    return not_determinable(
        scan.budget_stop ? "no plateau of lines per set up to a stride of " + fmt_bytes(scan.budget_stop / 2) +
                               ", where the scan used its budget of " + std::to_string(t.geometry_load_budget) + " loads"
        : scan.limit_stop ? "no plateau of lines per set up to a stride of " + fmt_bytes(scan.limit_stop / 2) +
                                ": at " + fmt_bytes(scan.limit_stop) + " the path's limit (" +
                                fmt_bytes(planned_reach_bytes(t)) + ") holds too few lines to tell the plateau from half"
                          : "no plateau of lines per set up to a stride of " + fmt_bytes(kLargestStride));
  // The plateau: the most lines any of its strides held (a stray miss can cost one).
  const uint64_t P = all_lines_flat ? C / b : std::max(seen[n - 1].second, seen[n - 2].second);
  const SetsAndWays sw = sets_and_ways(m, P, all_lines_flat, C, b);
  if (sw.ways == 0)
    return not_determinable("the plateau (" + std::to_string(P) + " lines) does not divide the " + std::to_string(C / b) +
                            " lines of the cache");
  const uint64_t T = sw.sets, W = sw.ways, lines = C / b;
  // Modulo mapping predicts k(S) = W * T / gcd(T, S/b) at every power-of-two stride. A hash
  // moves k by a large factor; a line or two less is a stray miss in the search
  // (docs/results/log/h100.md: the texture path held 962 instead of 964 lines once).
  auto fits_modulo = [&](uint64_t S, uint64_t k) {
    const uint64_t want = std::min<uint64_t>(W * (T / std::gcd(T, S / b)), T * W);
    return (k > want ? k - want : want - k) <= std::max<uint64_t>(2, want / 100);
  };
  bool modulo = true;
  std::string off_modulo;
  for (auto [S, k] : seen)
    if (!fits_modulo(S, k)) {
      modulo = false;
      off_modulo += (off_modulo.empty() ? "" : ", ") + fmt_bytes(S);
    }
  // One set holding every line (T = 1) is the extreme case of a hash, so the random-lines
  // test runs there, and for sets of 8 ways or more (few ways leave a hash little room to
  // hide: the stride scan already sees it).
  bool random_fit = false;
  if ((T == 1 && lines >= 16) || (T > 1 && modulo && W >= 8)) {
    size_t count = 0;
    uint64_t span = 0;
    bool missed = false;
    const double mf = random_lines_miss_fraction(m, T, W, lines, b, &count, &span, &missed);
    if (mf >= 0 && missed) {
      const std::string held =
          all_lines_flat ? "power-of-two strides from " + fmt_bytes(seen[0].first) + " to " +
                               fmt_bytes(seen[flat - 1].first) + " hold all " + std::to_string(P) +
                               " lines, as a fully associative cache would"
          : T == 1 ? "the plateau of power-of-two strides holds " + std::to_string(P) +
                         " lines, as a fully associative cache would"
                   : "power-of-two strides fit " + std::to_string(T) + " modulo sets of " + std::to_string(W) + " ways";
      return not_determinable(held + ", but " + std::to_string(count) + " lines at random places in " + fmt_bytes(span) +
                              (T == 1 ? " (63/64 of the size)" : " (" + std::to_string(W - W / 64) + " in each of those sets)") +
                              " miss (" + std::to_string(mf).substr(0, 6) +
                              " of loads): a hash of address bits spreads power-of-two strides over " +
                              (T == 1 ? "all sets" : "the sets of each group") + ", so they cannot single one out");
    }
    random_fit = mf >= 0;
  }
  res.sets = {true, static_cast<int64_t>(T), sw.rounded ? 0.8 : 0.95, Bound::Exact,
              std::string("lines of the cache / lines one set holds (the plateau of power-of-two strides)") +
                  (sw.rounded ? "; the measured size was rounded to a whole number of sets" : "")};
  res.ways = {true, static_cast<int64_t>(W), 0.95, Bound::Exact,
              std::string("most lines at a large power-of-two stride held without misses") +
                  (scan.plateau_from_bound ? " (the plateau from a bound: at " + fmt_bytes(scan.limit_stop) +
                                                 " more than half of them fit within the path's limit)"
                                           : "")};
  if (T == 1)
    res.ways.note = std::string("every line fits at power-of-two strides") + (random_fit ? " and at random places" : "") +
                    ": fully associative";
  else if (modulo)
    res.set_mapping = {true, "modulo", 0.95, Bound::Exact,
                       std::string("lines at every power-of-two stride follow modulo mapping") +
                           (random_fit ? ", and lines at random places fill every set to its ways" : "")};
  else
    res.set_mapping = {true, "hashed", 0.9, Bound::Exact,
                       "strides " + off_modulo +
                           " spread over more sets than modulo mapping allows: higher address bits feed the set index"};
  return res;
}

}  // namespace memtopo::cache
