// The cache-measurement procedure (docs/cache-probes.md). Every step turns its question
// into chase points, runs as many points per launch as the cache allows (one per SM for
// per-SM caches), and reads the answer with the analysis toolkit.
#include "memtopo/cache_procedure.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>

#include <boost/math/distributions/chi_squared.hpp>

#include "memtopo/analysis.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;

namespace {

// A chase over k lines spaced `stride` bytes apart (a sparse STRIDE array: no host memory).
recipes::Chase spaced_lines(uint64_t k, uint64_t stride) {
  recipes::Chase c;
  c.array = ChaseArray::stride(k * stride, stride);
  c.start = 0;
  c.footprint_bytes = k * stride;
  c.stride_bytes = stride;
  return c;
}

uint64_t cycle_of(const recipes::Chase& c) {
  if (!c.order.empty()) return c.order.size();
  if (c.array.stride_elems) return c.array.elems / std::gcd(c.array.elems, c.array.stride_elems);
  return recipes::cycle_length(c.array, c.start);
}

std::string fmt_bytes(uint64_t b) {
  std::ostringstream o;
  if (b >= (1ull << 20) && b % (1ull << 20) == 0) o << (b >> 20) << " MiB";
  else if (b >= 1024 && b % 1024 == 0) o << (b >> 10) << " KiB";
  else o << b << " B";
  return o.str();
}

// Largest array one point uses (the texture path reads at most 2^28 elements) and the most
// array bytes one launch allocates.
constexpr uint64_t kArrayBytes = uint64_t(256) << 20;
constexpr uint64_t kLaunchBytes = uint64_t(4) << 30;

// A point judged by the slow-load counts of whole passes (Session::Point::counts_only).
Session::Point counted_point(recipes::Chase chase, uint64_t warmup_passes, uint64_t counted_passes,
                             bool recurring_only = true) {
  Session::Point p;
  p.record_steps = counted_passes * cycle_of(chase);
  p.chase = std::move(chase);
  p.warmup_passes = warmup_passes;
  p.recurring_only = recurring_only;
  p.counts_only = true;
  return p;
}

uint64_t round_up_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

// ------------------------------------------------------------------ session

Session::Session(const Context& ctx, Target target) : ctx_(ctx), target_(std::move(target)) { calibrate(); }

int32_t Session::pinned_sm() const {
  // A shared cache is measured from one SM: hit latencies (and with them the slow-load
  // threshold) depend on the SM's distance from the cache's slices.
  return target_.shared_between_sms ? 0 : -1;
}

int Session::parallel_points() const {
  if (target_.shared_between_sms) return 1;
  return std::max(1, ctx_.device().sm_count);
}

void Session::calibrate() {
  // The reference: a footprint far below any plausible size, chased until warm. Its
  // latencies are the hit level every later classification is anchored to.
  const auto chase = recipes::constant_stride(target_.reference_bytes, target_.stride_bytes);
  const uint64_t cycle = cycle_of(chase);
  ChaseSpec spec;
  spec.space = target_.space;
  spec.array = &chase.array;
  spec.start = chase.start;
  spec.warmup_steps = 2 * cycle;
  spec.steps = 4096;
  spec.shared_carveout_percent = target_.shared_carveout_percent;
  spec.sm = pinned_sm();
  const ChaseSamples r = ctx_.backend().fine_chase(spec);
  ++launches_;
  reference_ = an::to_doubles(r.latency);
  hit_centre_ = an::median(reference_);
  // A load is slow when it lies above the reference's 99th percentile by a margin. The
  // reference's own slow loads (noise tails, interrupts) give the rate at which slow loads
  // happen without any capacity miss; counts are judged against that rate. A shared cache's
  // small reference may not show how far its hits spread at footprints of many MiB (TLB
  // reach, distance to the slice), so its margin is 30 % of the hit: the next level is 1.5x
  // the hit or more on every GPU seen (H100 L2: 268 near, 528 far).
  const double p99 = an::percentile(reference_, 99.0);
  slow_threshold_ = p99 + std::max(4.0, (target_.shared_between_sms ? 0.3 : 0.1) * hit_centre_);
  // A load far slower than any miss can be is an interruption, not a miss: the ceiling is
  // twice the 99th percentile of a cold chase over the largest footprint searched, where
  // every load misses every level (TLBs included).
  {
    const uint64_t cold_bytes = std::max(target_.search_limit_bytes, 2 * target_.reference_bytes);
    const auto cold = recipes::constant_stride(
        target_.max_footprint_bytes ? std::min(cold_bytes, target_.max_footprint_bytes) : cold_bytes,
        std::max<uint64_t>(target_.stride_bytes, 128));
    ChaseSpec c = spec;
    c.array = &cold.array;
    c.start = cold.start;
    c.warmup_steps = 0;
    c.steps = std::min<uint64_t>(2048, cycle_of(cold));
    const ChaseSamples cr = ctx_.backend().fine_chase(c);
    ++launches_;
    ceiling_ = std::max(2.0 * an::percentile(an::to_doubles(cr.latency), 99.0), 2.0 * slow_threshold_);
  }
  size_t strays = 0;
  for (double x : reference_) strays += x > slow_threshold_ && x <= ceiling_ ? 1 : 0;
  slow_rate_ = double(strays + 1) / double(reference_.size() + 2);
  // Counted points classify millions of loads: the rate of stray slow loads must be known
  // far below 1/4096 for their counts to mean anything. A long counted reference gives it.
  counting_ = ctx_.backend().has_count_chase();
  if (counting_) {
    CountSpec c;
    c.chase = spec;
    c.chase.steps = uint64_t(1) << 20;
    c.slow_cycles = static_cast<uint32_t>(slow_threshold_);
    c.slow_max_cycles = static_cast<uint32_t>(ceiling_);
    c.keep_steps = 0;
    const CountResult cr = ctx_.backend().count_chase(c);
    ++launches_;
    slow_rate_ = double(cr.slow + 1) / double(c.chase.steps + 2);
  }
}

bool Session::significant(size_t misses, size_t loads) const {
  const double expected = slow_rate_ * double(loads);
  return double(misses) >= std::max(2.0, expected + 4.0 * std::sqrt(expected) + 2.0);
}

bool Session::significant_recurring(size_t recurring, uint64_t cycle, uint64_t passes) const {
  // An element is slow in two passes by chance with probability C(passes, 2) p^2 and then
  // counts twice.
  const double pairs = double(passes) * double(passes - 1) / 2.0;
  const double expected = 2.0 * double(cycle) * pairs * slow_rate_ * slow_rate_;
  return double(recurring) >= std::max(2.0, expected + 4.0 * std::sqrt(expected) + 2.0);
}

std::vector<std::pair<size_t, size_t>> Session::batches(const std::vector<Point>& points) const {
  // Fill a launch up to what the device holds for it: one small buffer for all jobs on
  // constant memory, a few GiB of arrays elsewhere (132 SMs x sparse GiB arrays would not fit).
  std::vector<std::pair<size_t, size_t>> out;
  const size_t most = static_cast<size_t>(parallel_points());
  const uint64_t budget = target_.max_footprint_bytes ? target_.max_footprint_bytes : kLaunchBytes;
  for (size_t first = 0; first < points.size();) {
    uint64_t total = 0;
    size_t k = first;
    while (k < points.size() && k - first < most && (k == first || total + points[k].chase.footprint_bytes <= budget))
      total += points[k++].chase.footprint_bytes;
    out.emplace_back(first, k);
    first = k;
  }
  return out;
}

std::vector<Session::Outcome> Session::run(const std::vector<Point>& points) {
  // Points that need only counts run as counting chases; the others are recorded.
  std::vector<Point> counted, recorded;
  std::vector<std::pair<bool, size_t>> where;
  for (const Point& p : points) {
    if ((p.counts_only || p.miss_pattern) && counting_) {
      where.emplace_back(true, counted.size());
      counted.push_back(p);
    } else {
      where.emplace_back(false, recorded.size());
      recorded.push_back(p);
    }
  }
  std::vector<Outcome> c = counted.empty() ? std::vector<Outcome>{} : run_counted(counted);
  std::vector<Outcome> r = recorded.empty() ? std::vector<Outcome>{} : run_fine(recorded);
  std::vector<Outcome> out;
  for (auto [is_counted, i] : where) out.push_back(std::move(is_counted ? c[i] : r[i]));
  return out;
}

std::vector<Session::Outcome> Session::run_counted(const std::vector<Point>& points) {
  std::vector<Outcome> out(points.size());
  for (auto [first, last] : batches(points)) {
    if (ctx_.cancelled()) throw Error("cancelled");
    std::vector<CountSpec> specs;
    for (size_t i = first; i < last; ++i) {
      const Point& p = points[i];
      const uint64_t cycle = std::max<uint64_t>(cycle_of(p.chase), 1);
      CountSpec c;
      c.chase.space = target_.space;
      c.chase.array = &p.chase.array;
      c.chase.start = p.chase.start;
      c.chase.warmup_steps = p.warmup_passes * cycle;
      c.chase.steps = p.record_steps ? p.record_steps : cycle;
      c.chase.shared_carveout_percent = target_.shared_carveout_percent;
      c.chase.sm = pinned_sm();
      c.slow_cycles = static_cast<uint32_t>(slow_threshold_);
      c.slow_max_cycles = static_cast<uint32_t>(ceiling_);
      c.keep_steps = 1024;
      specs.push_back(c);
    }
    const std::vector<CountResult> r = ctx_.backend().count_chase(specs);
    ++launches_;
    for (const CountSpec& c : specs) loads_chased_ += c.chase.warmup_steps + c.chase.steps;
    for (size_t i = first; i < last; ++i) {
      const Point& p = points[i];
      const CountResult& cr = r[i - first];
      Outcome& o = out[i];
      const uint64_t cycle = std::max<uint64_t>(cycle_of(p.chase), 1);
      o.loads = static_cast<size_t>(specs[i - first].chase.steps);
      o.misses = static_cast<size_t>(cr.slow);
      o.miss_fraction = double(o.misses) / double(o.loads);
      o.significant = significant(o.misses, o.loads);
      // The kept steps say where the slow loads were. A capacity miss comes back at the same
      // place of the cycle in the next pass, a stray one does not; and a footprint past the
      // capacity misses in every pass (at least one line of an overflowing set must go),
      // whereas a burst of slow loads (a transient on the GPU, seen on the H200's L2) falls
      // into one. With every slow step kept, a count counts only when it recurs or when
      // every pass has its share.
      const uint64_t passes = o.loads / cycle;
      const bool complete = cr.slow == cr.slow_steps.size();
      if (p.recurring_only && passes >= 2 && !cr.slow_steps.empty()) {
        std::map<uint64_t, int> times;
        std::vector<size_t> per_pass(static_cast<size_t>(passes) + 1, 0);
        for (uint32_t step : cr.slow_steps) {
          ++times[step % cycle];
          ++per_pass[std::min<size_t>(step / cycle, static_cast<size_t>(passes))];
        }
        size_t recurring = 0;
        for (auto [pos, n] : times)
          if (n >= 2) recurring += static_cast<size_t>(n);
        bool every_pass = true;
        for (uint64_t k = 0; k < passes; ++k) every_pass = every_pass && per_pass[static_cast<size_t>(k)] > 0;
        const bool by_count = o.significant && (every_pass || !complete);
        o.significant = by_count || significant_recurring(recurring, cycle, passes);
      }
      if (p.miss_pattern) {
        // Complete up to the last kept slow load (or to the end when every one was kept).
        const size_t covered = complete ? o.loads : size_t(cr.slow_steps.back()) + 1;
        o.miss.assign(covered, 0);
        for (uint32_t step : cr.slow_steps) o.miss[step] = 1;
        // The warm-up is whole cycles, so counting starts at the start element again.
        o.index = recipes::walk(p.chase.array, p.chase.start, covered);
      }
    }
  }
  return out;
}

Session::Outcome Session::run_random(uint64_t footprint, uint64_t stride, uint64_t warmup, uint64_t loads,
                                     uint64_t seed, const LoadRate& rate) {
  if (ctx_.cancelled()) throw Error("cancelled");
  const ChaseArray array = ChaseArray::stride(footprint, stride);
  RandomCountSpec r;
  r.count.chase.space = target_.space;
  r.count.chase.array = &array;
  r.count.chase.warmup_steps = warmup;
  r.count.chase.steps = loads;
  r.count.chase.shared_carveout_percent = target_.shared_carveout_percent;
  r.count.chase.sm = pinned_sm();
  r.count.slow_cycles = static_cast<uint32_t>(slow_threshold_);
  r.count.slow_max_cycles = static_cast<uint32_t>(ceiling_);
  r.count.keep_steps = 0;
  r.stride_bytes = stride;
  r.seed = seed;
  r.streams = rate.streams;
  r.gap_cycles = rate.gap_cycles;
  r.pump_warps = rate.pump_warps;
  r.pump_lanes = rate.pump_lanes;
  r.pump_cycles = rate.pump_cycles;
  r.probe_loads = rate.probe_loads;
  const CountResult cr = ctx_.backend().random_count({r})[0];
  ++launches_;
  loads_chased_ += warmup + loads;
  Outcome o;
  o.loads = static_cast<size_t>(loads - std::min<uint64_t>(cr.outliers, loads));
  o.misses = static_cast<size_t>(cr.slow);
  o.miss_fraction = o.loads ? double(o.misses) / double(o.loads) : 0;
  o.significant = significant(o.misses, o.loads);
  // Time per load of all streams (and the pump) together: the span where the backend reports
  // it, else each stream's timed cycles and gap.
  o.cycles_per_load = cr.span_cycles ? double(cr.span_cycles) / double(std::max<uint64_t>(loads + cr.pump_loads, 1))
                                     : (double(cr.cycles) / double(std::max<uint64_t>(loads, 1)) + rate.gap_cycles) /
                                           double(std::max<uint32_t>(rate.streams, 1));
  return o;
}

std::vector<Session::Outcome> Session::run_fine(const std::vector<Point>& points) {
  std::vector<Outcome> out(points.size());
  for (auto [first, last] : batches(points)) {
    if (ctx_.cancelled()) throw Error("cancelled");
    std::vector<ChaseSpec> specs;
    for (size_t i = first; i < last; ++i) {
      const Point& p = points[i];
      const uint64_t cycle = std::max<uint64_t>(cycle_of(p.chase), 1);
      ChaseSpec spec;
      spec.space = target_.space;
      spec.array = &p.chase.array;
      spec.start = p.chase.start;
      spec.warmup_steps = p.warmup_passes * cycle;
      spec.steps = std::min<uint64_t>(p.record_steps ? p.record_steps : cycle, target_.max_record_steps);
      spec.shared_carveout_percent = target_.shared_carveout_percent;
      spec.sm = pinned_sm();
      specs.push_back(spec);
    }
    std::vector<ChaseSamples> r = ctx_.backend().fine_chase(specs);
    ++launches_;
    for (const ChaseSpec& c : specs) loads_chased_ += c.warmup_steps + c.steps;
    for (size_t i = first; i < last; ++i) {
      out[i].index = std::move(r[i - first].index);
      out[i].latency = std::move(r[i - first].latency);
    }
  }
  for (size_t p = 0; p < out.size(); ++p) {
    Outcome& o = out[p];
    o.loads = o.latency.size();
    o.miss.assign(o.latency.size(), 0);
    for (size_t i = 0; i < o.latency.size(); ++i) {
      if (o.latency[i] > slow_threshold_ && o.latency[i] <= ceiling_) {
        o.miss[i] = 1;
        ++o.misses;
      }
    }
    o.miss_fraction = o.latency.empty() ? 0 : double(o.misses) / double(o.latency.size());
    // With two or more recorded passes a capacity miss comes back at the same element; a
    // stray slow load (an interrupt, a recording-pass boundary on the GPU) does not.
    const uint64_t cycle = std::max<uint64_t>(cycle_of(points[p].chase), 1);
    size_t counted = o.misses;
    if (points[p].recurring_only && o.latency.size() >= 2 * cycle && !o.index.empty()) {
      std::map<uint32_t, int> times;
      for (size_t i = 0; i < o.latency.size(); ++i)
        if (o.miss[i]) ++times[o.index[i]];
      counted = 0;
      for (auto [idx, n] : times)
        if (n >= 2) counted += n;
    }
    o.significant = significant(counted, o.latency.size());
  }
  return out;
}

// ------------------------------------------------------------------ size

SizeResult find_size(Session& s) {
  const Target& t = s.target();
  const uint64_t g = t.stride_bytes;
  SizeResult res;
  // A footprint "has capacity misses" when its slow loads are significantly more than the
  // reference's rate of slow loads (Session::significant).
  // Per-SM caches are cheap to chase: three warm-up passes let the path's own data lines (on
  // the H100's read-only path they miss now and then in the last lines before the size) settle,
  // and four counted passes must all miss. A shared cache of many MiB gets one of each: one
  // counted pass of the H100's L2 is some 800 k loads, far more than its misses need, and
  // the passes were two thirds of the L2 size probe's 45 s.
  const bool cheap = !t.shared_between_sms;
  auto point_for = [&](uint64_t size) {
    return counted_point(recipes::constant_stride(size, g), cheap ? 3 : 1, cheap ? 4 : 1);
  };
  auto outcomes = [&](const std::vector<uint64_t>& sizes) {
    std::vector<Session::Point> pts;
    for (uint64_t sz : sizes) pts.push_back(point_for(sz));
    return s.run(pts);
  };
  // A per-SM cache of the H100 misses now and then at footprints a few lines below its
  // size, on one SM and not on the others (about one footprint in eight): one measurement
  // per footprint gave one 32-byte step less in 10 of 81 H100 values. So each footprint
  // runs on `copies` SMs of one launch and the middle copy (by significance, then by
  // misses) stands for it: most SMs must miss.
  auto middle_of = [&](const std::vector<uint64_t>& sizes, size_t copies) {
    std::vector<uint64_t> runs;  // copy-major: a launch holds copies of many footprints
    for (size_t c = 0; c < copies; ++c) runs.insert(runs.end(), sizes.begin(), sizes.end());
    std::vector<Session::Outcome> got = outcomes(runs);
    std::vector<Session::Outcome> out;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<Session::Outcome*> v;
      for (size_t c = 0; c < copies; ++c) v.push_back(&got[c * sizes.size() + i]);
      std::sort(v.begin(), v.end(), [](const Session::Outcome* a, const Session::Outcome* b) {
        return std::make_pair(a->significant, a->misses) < std::make_pair(b->significant, b->misses);
      });
      out.push_back(std::move(*v[copies / 2]));
    }
    return out;
  };
  const size_t search_copies = cheap ? 3 : 1;
  auto has_misses = [&](const std::vector<uint64_t>& sizes) {
    std::vector<bool> r;
    for (const auto& x : middle_of(sizes, search_copies)) r.push_back(x.significant);
    return r;
  };
  an::SearchOptions so;
  so.start = t.search_start_bytes;
  so.limit = t.search_limit_bytes;
  so.granularity = g;
  so.points_per_round = std::max<size_t>(1, static_cast<size_t>(s.parallel_points()) / search_copies);
  s.ctx().progress(0.05, t.element + " size: doubling and bisection");
  const an::Bracket b = an::find_transition(an::BatchPredicate(has_misses), so);
  if (!b.found) {
    if (b.low == 0) {
      res.size_bytes.found = true;
      res.size_bytes.value = static_cast<int64_t>(so.start);
      res.size_bytes.bound = Bound::AtMost;
      res.size_bytes.confidence = 0.5;
      res.size_bytes.note = "misses already at the smallest footprint tried (" + fmt_bytes(so.start) + ")";
    } else {
      res.size_bytes.found = true;
      res.size_bytes.value = static_cast<int64_t>(b.low);
      res.size_bytes.bound = Bound::AtLeast;
      res.size_bytes.confidence = 0.9;
      res.size_bytes.note = "no capacity misses up to " + fmt_bytes(b.low) + ", the largest footprint searched" +
                            (t.search_limit_reason.empty() ? std::string() : " (" + t.search_limit_reason + ")");
    }
    return res;
  }
  const uint64_t size = b.low;

  // Confirmation and shape: a sweep around the transition and beyond it; the miss fractions
  // must show one change point at the size (KS and permutation tests), and where they keep
  // rising past it the transition is gradual (full_miss_bytes).
  s.ctx().progress(0.5, t.element + " size: confirming sweep");
  std::vector<uint64_t> sizes;
  std::vector<Session::Outcome> o;
  auto measure = [&](const std::vector<uint64_t>& add) {
    for (auto& x : outcomes(add)) o.push_back(std::move(x));
    sizes.insert(sizes.end(), add.begin(), add.end());
  };
  size_t size_pos = 0;
  bool stochastic_onset = false;  // shared cache whose misses come and go near the size
  uint64_t onset_low = UINT64_MAX, onset_high = 0;  // the size from each measurement alone
  if (cheap) {
    // Per-SM caches (one launch on many SMs): 16 steps below, 32 past the bracket, each on
    // nine SMs (the stray misses land anywhere in the last lines before the size, so the
    // bracket can too), then up to 2x. The window must show the transition: a clean
    // footprint followed by at least four missing ones. When it does not, stray misses that
    // beat the search's three copies moved the bracket: search again past the window (or
    // below it) and measure a new window, twice at most.
    constexpr size_t kCopies = 9;
    uint64_t at = size;
    for (int attempt = 0;; ++attempt) {
      sizes.clear();
      const uint64_t below = std::min<uint64_t>(16, at / g - 1);
      for (uint64_t k = below; k >= 1; --k) sizes.push_back(at - k * g);
      sizes.push_back(at);
      for (uint64_t k = 1; k <= 32; ++k) sizes.push_back(at + k * g);
      o = middle_of(sizes, kCopies);
      size_pos = below;
      // The largest footprint without misses after which every fine step misses: misses
      // that come and go below it are not capacity misses of the steady state, since a
      // footprint past the capacity misses in every pass.
      size_t last_clean = sizes.size();
      for (size_t i = 0; i < sizes.size(); ++i)
        if (!o[i].significant) last_clean = i;
      const bool shown = last_clean < sizes.size() && sizes.size() - last_clean - 1 >= 4;
      if (shown) size_pos = last_clean;
      if (shown || attempt == 2) break;
      if (last_clean == sizes.size()) {  // all missing: the transition lies below the window
        const an::Bracket again = an::bisect(an::BatchPredicate(has_misses), sizes.front() / 2, sizes.front(), so);
        if (!again.found) break;
        at = std::max(again.low, 2 * g);
      } else if (last_clean + 1 == sizes.size()) {  // clean at the top: it lies above
        an::SearchOptions up = so;
        up.start = sizes.back();  // doubling from the clean top, then bisection
        const an::Bracket again = an::find_transition(an::BatchPredicate(has_misses), up);
        at = again.found ? again.low : sizes.back();  // not found: the top itself missed now
      } else {
        at = sizes[last_clean];  // near the top: centre the window on it
      }
      s.ctx().debug(t.element + " size: the window did not show the transition; measuring one at " + fmt_bytes(at));
    }
    // The shape past it, on a grid anchored at the size found (not at the bracket, which
    // stray misses move), so that full_miss_bytes is the same from run to run.
    const uint64_t found = sizes[size_pos];
    std::vector<uint64_t> coarse;
    for (uint64_t k = 1; k <= 8; ++k) {
      const uint64_t f = found + found * k / 8 / g * g;
      if (f > sizes.back() && (coarse.empty() || f > coarse.back())) coarse.push_back(f);
    }
    measure(coarse);
  } else {
    // A shared cache: one point at a time, around the bracket 1/64 of the size apart. On the
    // simulator (and any cache that misses by its own data alone) the window is clean up to
    // the bracket and misses past it: the bracket stands. The H100's L2 is not like that: near
    // its capacity other traffic evicts a few lines of sets our data has filled (up to 6e-4
    // of loads, from 2 MiB below the first overflow), and past it one footprint misses 0 or
    // 2-3 % of its loads from one measurement to the next. There the size is where the
    // rolling median of five neighbours (each the mean of three measurements) first passes an
    // eighth of the window's largest miss fraction and stays above it: the last footprint
    // before that (to 1/64 of the size).
    const uint64_t fine = std::max<uint64_t>(size / 64 / g * g, g);
    std::vector<uint64_t> add;
    for (uint64_t k = 4; k >= 1; --k)
      if (size > k * fine) add.push_back(size - k * fine);
    add.push_back(size);
    add.push_back(size + g);
    for (uint64_t k = 1; k <= 8; ++k) add.push_back(size + k * fine);
    measure(add);
    const size_t at = static_cast<size_t>(std::find(sizes.begin(), sizes.end(), size) - sizes.begin());
    size_pos = at;
    bool clean_below = true;
    for (size_t i = 0; i <= at; ++i) clean_below = clean_below && !o[i].significant;
    bool missing_above = true;
    for (size_t i = at + 2; i < sizes.size(); ++i) missing_above = missing_above && o[i].significant;
    if (!clean_below || !missing_above) {
      // Two more measurements of the window; each footprint's miss fraction is their mean.
      const std::vector<uint64_t> window(sizes.begin(), sizes.end());
      std::vector<std::vector<double>> single(1);
      for (const auto& x : o) single[0].push_back(x.miss_fraction);
      for (int again = 0; again < 2; ++again) {
        const auto more = outcomes(window);
        single.emplace_back();
        for (size_t i = 0; i < window.size(); ++i) {
          o[i].miss_fraction += more[i].miss_fraction;
          single.back().push_back(more[i].miss_fraction);
        }
      }
      for (auto& x : o) x.miss_fraction /= 3;
      std::vector<double> mf;
      for (const auto& x : o) mf.push_back(x.miss_fraction);
      const size_t onset = an::lasting_onset(mf, 1.0 / 8, 5);
      if (onset > 0 && onset < sizes.size()) {
        size_pos = onset - 1;
        stochastic_onset = true;
        s.ctx().debug(t.element + " size: misses come and go near the size; their rolling median stays above 1/8 "
                      "of the largest from " + fmt_bytes(sizes[onset]));
        // How far one measurement alone would move the answer: the spread a user should
        // expect between runs (the size is then not exact to the line).
        for (const auto& one : single) {
          const size_t k = an::lasting_onset(one, 1.0 / 8, 5);
          if (k > 0 && k < sizes.size()) {
            onset_low = std::min(onset_low, sizes[k - 1]);
            onset_high = std::max(onset_high, sizes[k - 1]);
          }
        }
      }
    }
    for (uint64_t f = sizes.back() + 2 * fine; f <= 2 * size; f += 4 * fine) {
      measure({f, f + 2 * fine});
      const size_t n = o.size();
      const double a = o[n - 3].miss_fraction, b = o[n - 2].miss_fraction, c = o[n - 1].miss_fraction;
      if (a > 0 && std::max({a, b, c}) <= 1.03 * std::min({a, b, c}) && o[n - 3].significant) break;
    }
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    res.footprints.push_back(sizes[i]);
    res.miss_fractions.push_back(o[i].miss_fraction);
  }
  std::vector<double> row;
  for (size_t i = 0; i < sizes.size(); ++i) {
    row.push_back(double(sizes[i]));
    row.push_back(o[i].miss_fraction);
  }
  s.ctx().raw(t.element + "-size-sweep", {"footprint_bytes", "miss_fraction"}, row);
  res.size_bytes.found = true;
  res.size_bytes.value = static_cast<int64_t>(sizes[size_pos]);
  // The change must sit exactly at the size: KS test of the miss fractions up to the size
  // against those past it.
  const an::ChangeConfirmation cc = an::confirm_change(res.miss_fractions, size_pos + 1, 0.01);
  res.size_bytes.confidence = cc.confirmed ? cc.ks.confidence : 0.5;
  const bool spread = stochastic_onset && onset_high > onset_low;
  // Measurements that disagree: the value is not exact to the line, whatever the KS test says.
  if (spread) res.size_bytes.confidence = std::min(res.size_bytes.confidence, 0.5);
  res.size_bytes.note = (stochastic_onset ? "last footprint before the misses (which come and go near the size) "
                                             "stay above 1/8 of the largest seen, to 1/64 of the size (stride " +
                                                 fmt_bytes(g) + "); " +
                                                 (spread ? "not exact to the line: each of the three measurements "
                                                           "alone gives " + std::to_string(onset_low) + " to " +
                                                           std::to_string(onset_high) + " B; "
                                                         : std::string())
                                           : "largest footprint without capacity misses (stride " + fmt_bytes(g) + "); ") +
                        (cc.confirmed ? "change at the size confirmed, KS p=" + std::to_string(cc.ks.p_value)
                                      : "change at the size not confirmed: " + cc.reason);
  // Gradual transition: the first footprint whose miss fraction reaches 95 % of the largest.
  const double top = *std::max_element(res.miss_fractions.begin(), res.miss_fractions.end());
  for (size_t i = size_pos + 1; i < sizes.size(); ++i) {
    if (res.miss_fractions[i] >= 0.95 * top) {
      if (sizes[i] > sizes[size_pos] + 4 * g) {
        res.full_miss_bytes.found = true;
        res.full_miss_bytes.value = static_cast<int64_t>(sizes[i]);
        res.full_miss_bytes.confidence = res.size_bytes.confidence;
        res.full_miss_bytes.note = "first footprint where the miss fraction reaches 95 % of its plateau";
      }
      break;
    }
  }
  return res;
}

// ------------------------------------------------------------------ occupancy

OccupancyResult find_occupancy(Session& s, int64_t first_miss_bytes, int64_t full_miss_bytes, int64_t line_bytes,
                               const std::vector<SizeCandidate>& candidates) {
  const Target& t = s.target();
  OccupancyResult res;
  Measured<int64_t>& m = res.size_bytes;
  const uint64_t L = uint64_t(line_bytes), first = uint64_t(first_miss_bytes);
  auto first_miss_only = [&](const std::string& why) {
    m.found = true;
    m.value = first_miss_bytes;
    m.confidence = 0.5;
    m.note = "first miss of the cyclic sweep (" + std::to_string(first) + " B); occupancy not measured: " + why;
    return res;
  };
  if (L == 0) return first_miss_only("no line size");
  if (first < L) return first_miss_only("the first miss is below one line");
  const Backend& backend = s.ctx().backend();
  if (!backend.has_random_count()) return first_miss_only("the backend has no random_count (ABI 1.2)");
  // Every set full: twice the first miss, and past where every cyclic access misses.
  uint64_t F = std::max<uint64_t>(2 * first, uint64_t(std::max<int64_t>(full_miss_bytes, 0)) * 5 / 4);
  const uint64_t most = std::min<uint64_t>(t.max_footprint_bytes ? t.max_footprint_bytes : kArrayBytes, kArrayBytes);
  // Other clients displace lines over time, so the slower the loads come, the fewer lines
  // the cache holds of them (the H100's L2: 0.9 % fewer at one stream than at the fastest
  // rate, 2.4 % fewer at one load per 1.7 us). One stream and one stream with a gap say
  // whether the rate matters; where it does, a pump (ABI 1.5) brings lines in far faster
  // while one stream still times the loads, and the series is extrapolated to an infinite
  // rate. Several timed streams (ABI 1.4, the fallback) are faster too, but their hits queue
  // behind each other's loads and some of them pass the threshold.
  using Rate = LoadRate;
  // 64 loads per line give a standard error near 0.1 % of the lines held; at most the
  // target's. (min, then max: std::clamp is undefined when the target allows fewer than 2^20.)
  const uint64_t base = std::max<uint64_t>(std::min<uint64_t>(64 * (F / L), t.occupancy_loads), uint64_t(1) << 20);
  struct Held {
    double lines, se, cycles_per_load;
  };
  auto describe = [](const Rate& r) {
    if (r.pump_warps) return "one stream with a pump of " + std::to_string(r.pump_total()) + " lanes";
    return std::to_string(r.streams) + (r.streams == 1 ? " stream" : " streams") + (r.gap_cycles ? " with a gap" : "");
  };
  auto measure = [&](uint64_t footprint, const Rate& r, uint64_t loads, uint64_t seed, double progress) {
    const uint64_t n = footprint / L;
    s.ctx().progress(progress, t.element + " occupancy: " + describe(r) + " over " + fmt_bytes(n * L));
    // Warm-up: every line drawn a few times (the pump draws most of them when there is one).
    const uint64_t warm = r.pump_warps ? std::max<uint64_t>(n / 8, 64 * uint64_t(r.probe_loads)) : 2 * n;
    const Session::Outcome o = s.run_random(n * L, L, warm, loads, seed, r);
    const double h = o.loads ? 1.0 - o.miss_fraction : 0.0;
    const double counted = double(std::max<size_t>(o.loads, 1));
    // Binomial: the loads are independent draws.
    const double se = double(n) * std::sqrt(std::max(h * (1 - h), 1.0 / counted) / counted);
    res.footprints.push_back(n * L);
    res.streams.push_back(r.streams);
    res.gap_cycles.push_back(r.gap_cycles);
    res.pump_lanes.push_back(r.pump_total());
    res.cycles_per_load.push_back(o.cycles_per_load);
    res.lines_held.push_back(double(n) * h);
    res.standard_errors.push_back(se);
    return std::pair<Held, bool>{Held{double(n) * h, se, o.cycles_per_load}, o.significant};
  };
  auto agree = [](const Held& x, const Held& y) { return std::fabs(x.lines - y.lines) <= 3 * std::hypot(x.se, y.se); };
  if (F > most) return first_miss_only("the footprint it needs (" + fmt_bytes(F) + ") exceeds " + fmt_bytes(most));
  const Rate one;
  auto [a, missed] = measure(F, one, base / 2, 1, 0.1);
  if (!missed) {
    m.found = true;
    m.value = int64_t(F / L * L);
    m.bound = Bound::AtLeast;
    m.confidence = 0.7;
    m.note = "random loads over " + fmt_bytes(F / L * L) + " all hit";
    return res;
  }
  // Whether the rate matters: one stream against one stream that waits 8 hits after each load.
  Rate slow = one;
  slow.gap_cycles = uint32_t(std::llround(8 * s.hit_latency_raw()));
  const bool paced = backend.has_random_rate();
  Held g{};
  if (paced) g = measure(F, slow, base / 16, 2, 0.2).first;
  const bool rate_dependent = paced && !agree(a, g);
  // The faster rates, fastest first: the pump (its share of the time about the timed
  // stream's), else several timed streams.
  std::vector<Rate> fast;
  if (rate_dependent && backend.has_pump()) {
    const uint32_t warps = std::min<uint32_t>(16, backend.pump_warps_max());
    Rate p;
    p.pump_warps = warps;
    p.pump_lanes = 32;
    p.pump_cycles = uint32_t(std::min(1e9, std::ceil(double(p.probe_loads) * a.cycles_per_load)));
    fast.push_back(p);
    Rate q = p;  // an eighth of the lanes
    q.pump_warps = std::max<uint32_t>(1, warps / 8);
    q.pump_lanes = warps >= 8 ? 32 : 4;
    fast.push_back(q);
  } else if (rate_dependent) {
    for (uint32_t k = std::min<uint32_t>(8, backend.random_streams_max()); k >= 2; k /= 2) {
      Rate r;
      r.streams = k;
      fast.push_back(r);
    }
  }
  // The lines held must not grow past F (every set full): the rate the size is read at, at
  // F and 1.25 F; F moves up (twice at most) while they grow.
  const Rate top = fast.empty() ? one : fast[0];
  Held at_top = fast.empty() ? a : measure(F, top, base / 2, 3, 0.3).first;
  bool plateau = false, moved = false;
  Held beyond{};
  for (int more = 0; more < 3; ++more) {
    const uint64_t G = F + F / 4;
    if (G > most) break;
    beyond = measure(G, top, base / 4, 4 + uint64_t(more), 0.4 + 0.05 * more).first;
    if (beyond.lines - at_top.lines <= 3 * std::hypot(at_top.se, beyond.se)) {
      plateau = true;
      break;
    }
    at_top = beyond;
    F = G;
    moved = true;
  }
  // The series: the rate the size is read at (at F, and at 1.25 F where that holds as many),
  // then the others at F.
  std::vector<double> tt, yy, ee;
  std::vector<std::string> how;
  auto add = [&](const Held& h, const Rate& r) {
    tt.push_back(h.cycles_per_load);
    yy.push_back(h.lines);
    ee.push_back(h.se);
    how.push_back(describe(r));
  };
  add(at_top, top);
  if (plateau) add(beyond, top);
  if (rate_dependent) {
    for (size_t k = 1; k < fast.size(); ++k) add(measure(F, fast[k], base / 4, 10 + k, 0.6).first, fast[k]);
    if (moved) {
      a = measure(F, one, base / 2, 20, 0.8).first;
      g = measure(F, slow, base / 16, 21, 0.9).first;
    }
    add(a, one);
    add(g, slow);
  } else if (paced && !moved) {
    add(g, slow);  // the same at both rates: both count
  }
  std::vector<double> row;
  for (size_t i = 0; i < res.footprints.size(); ++i)
    for (double v : {double(res.footprints[i]), double(res.streams[i]), double(res.gap_cycles[i]),
                     double(res.pump_lanes[i]), res.cycles_per_load[i], res.lines_held[i], res.standard_errors[i]})
      row.push_back(v);
  s.ctx().raw(t.element + "-occupancy",
              {"footprint_bytes", "streams", "gap_cycles", "pump_lanes", "cycles_per_load", "lines_held",
               "standard_error_lines"},
              row);
  const an::RateFit fit = an::extrapolate_to_infinite_rate(tt, yy, ee);
  const double lines = fit.limit, se = fit.standard_error;
  const double first_lines = double(first) / double(L);
  std::ostringstream note;
  note.setf(std::ios::fixed);
  note.precision(1);
  note << "lines held under loads to uniformly random lines (hit fraction x lines) over " << fmt_bytes(F / L * L);
  for (size_t i = 0; i < tt.size(); ++i)
    note << (i ? ", " : ": ") << yy[i] << " +- " << ee[i] << " at " << tt[i] << " cycles per load (" << how[i] << ")";
  note << " (lines of " << L << " B)";
  if (fit.rate_dependent && fit.ok)
    note << "; fewer lines at slower rates: extrapolated to an infinite rate as c - a t^" << std::setprecision(2)
         << fit.beta << std::setprecision(1) << ", c = " << lines << " +- " << se << " lines";
  else if (!fit.ok)
    note << "; " << fit.why << ": their weighted mean, " << lines << " +- " << se << " lines";
  else
    note << "; the same at every rate: " << lines << " +- " << se << " lines";
  m.found = true;
  double confidence = plateau ? 0.8 : 0.5;
  if (!fit.ok) confidence = 0.4;
  auto within_three_se = [&](double want) { return std::fabs(lines - want) <= std::max(3 * se, 2.0); };
  if (within_three_se(first_lines)) {
    m.value = first_miss_bytes;
    m.confidence = 0.95;
    note << "; agrees with the first miss of the cyclic sweep, which is the size";
  } else if (const auto c = std::find_if(candidates.begin(), candidates.end(),
                                          [&](const SizeCandidate& x) {
                                            return x.bytes > 0 && within_three_se(double(x.bytes) / double(L));
                                          });
             c != candidates.end()) {
    m.value = c->bytes;
    m.confidence = std::min(confidence, 0.9);
    note << "; agrees within three standard errors with " << c->source << " (" << c->bytes << " B), which is reported";
  } else {
    m.value = int64_t(std::llround(lines)) * int64_t(L);
    m.confidence = confidence;
    note << (plateau ? "" : " (still growing with the footprint)") << "; not exact to the line; the cyclic sweep misses from "
         << first << " B on (conflict misses: the set index fills sets unevenly)";
    for (const SizeCandidate& x : candidates) note << "; " << x.source << ": " << x.bytes << " B";
  }
  m.note = note.str();
  return res;
}

// ------------------------------------------------------------------ line and sector

LineResult find_line(Session& s, int64_t size_bytes, int64_t full_miss_bytes) {
  const Target& t = s.target();
  LineResult res;
  const uint64_t C = static_cast<uint64_t>(size_bytes);
  // Fetch granularity: overflow the cache, chase every 4-byte word; within a missing line
  // each fetch unit misses once, so consecutive misses lie one fetch unit apart.
  s.ctx().progress(0.1, t.element + " line: fetch granularity");
  {
    // Distances between consecutive misses of a 4-byte-stride chase.
    auto spacings = [](const Session::Outcome& o) {
      std::vector<double> spacing;
      int64_t last = -1;
      for (size_t i = 0; i < o.miss.size(); ++i) {
        if (!o.miss[i]) continue;
        if (last >= 0 && o.index[i] > o.index[last]) spacing.push_back(4.0 * (o.index[i] - o.index[last]));
        last = static_cast<int64_t>(i);
      }
      return spacing;
    };
    Session::Point p;
    // Well past the size, and past the footprint where every access misses when the
    // transition is gradual.
    uint64_t over = std::max<uint64_t>(C + C / 2, full_miss_bytes > 0 ? uint64_t(full_miss_bytes) * 5 / 4 : 0);
    if (t.max_footprint_bytes) over = std::min(over, t.max_footprint_bytes);
    std::vector<double> spacing;
    const bool cold = over <= C;
    if (cold) {
      // The path cannot overflow the cache. Where a launch finds it cold (the constant caches
      // lose their lines between launches), the first pass still misses once per fetch unit.
      res.line_bytes.note = "needs a footprint past the size, which the path cannot hold (" + fmt_bytes(over) + ")";
      res.path_limited = true;
      p.chase = recipes::constant_stride(std::min<uint64_t>(C, 16384), 4);
      p.warmup_passes = 0;
      p.record_steps = cycle_of(p.chase);
      p.miss_pattern = true;
      spacing = spacings(s.run(p));
      if (spacing.size() < 4) {
        res.fetch_granularity_bytes.note = "the path cannot hold a footprint past the size (" + fmt_bytes(over) +
                                           "), and a cold first pass missed too rarely (" +
                                           std::to_string(spacing.size()) + " spacings)";
        res.line_bytes.note = "needs the fetch granularity, and " + res.fetch_granularity_bytes.note;
        return res;
      }
    } else {
      p.chase = recipes::constant_stride(over, 4);
      p.warmup_passes = 1;
      p.record_steps = std::max<uint64_t>(t.max_record_steps, 16384);
      p.miss_pattern = true;
      spacing = spacings(s.run(p));
    }
    if (spacing.size() >= 4) {
      // The most frequent spacing: with random replacement some lines survive, which adds
      // longer spacings but never shorter ones.
      std::map<double, size_t> freq;
      for (double x : spacing) ++freq[x];
      double g = spacing[0];
      size_t best = 0;
      for (auto [v, c] : freq)
        if (c > best) best = c, g = v;
      // Agreement: the fraction of spacings equal to it.
      const double agree =
          double(std::count(spacing.begin(), spacing.end(), g)) / double(spacing.size());
      res.fetch_granularity_bytes.found = true;
      res.fetch_granularity_bytes.value = static_cast<int64_t>(round_up_pow2(static_cast<uint64_t>(g)));
      res.fetch_granularity_bytes.confidence = agree;
      res.fetch_granularity_bytes.note = "most frequent distance between consecutive misses, 4-byte stride, " +
                                         std::to_string(spacing.size()) + " misses" +
                                         (cold ? " of a cold first pass (the path cannot hold a footprint past the size)"
                                               : "");
      if (cold) return res;  // the line needs capacities past the size
    } else {
      res.fetch_granularity_bytes.note = "too few misses past the size to measure (" +
                                         std::to_string(spacing.size()) + ")";
      res.line_bytes.note = "needs the fetch granularity: " + res.fetch_granularity_bytes.note;
      return res;
    }
  }
  // Line: the capacity at an odd multiple m of the fetch unit. While the stride is below
  // the line every line is still touched, so the largest footprint without misses stays C;
  // past the line each load allocates a line of its own and the footprint grows to
  // C * stride / line. (Mei and Chu's overflow sweep finds where the set index starts, which
  // is the line only when consecutive lines go to consecutive sets.)
  const uint64_t g = static_cast<uint64_t>(res.fetch_granularity_bytes.value);
  const uint64_t cap = t.max_footprint_bytes ? t.max_footprint_bytes : std::numeric_limits<uint64_t>::max();
  // A gradual transition (every access missing only well past the first misses, as on the
  // H100's L1) blurs the onset; there the same ratio is taken at the other end: the largest
  // footprint at which not yet (nearly) every load misses.
  const bool gradual = full_miss_bytes > 0 && uint64_t(full_miss_bytes) > C + C / 2;
  // Largest footprint in [lo, hi] (multiples of stride) where the predicate is still false.
  auto edge = [&](uint64_t stride, uint64_t lo, uint64_t hi, bool* capped) {
    auto pred = [&](const std::vector<uint64_t>& sizes) {
      std::vector<Session::Point> pts;
      for (uint64_t sz : sizes) pts.push_back(counted_point(recipes::constant_stride(sz, stride), 1, 2, !gradual));
      const auto o = s.run(pts);
      std::vector<bool> r;
      for (const auto& x : o) r.push_back(gradual ? x.miss_fraction >= 0.9 : x.significant);
      return r;
    };
    an::SearchOptions so;
    so.granularity = stride;
    so.points_per_round = static_cast<size_t>(std::max(s.parallel_points(), 3));
    lo = lo / stride * stride;
    hi = hi / stride * stride + stride;
    *capped = false;
    if (hi > cap) {
      hi = cap / stride * stride;
      if (!pred({hi})[0]) {
        *capped = true;
        return hi;  // a lower bound only
      }
    }
    return an::bisect(an::BatchPredicate(pred), lo, hi, so).low;
  };
  bool base_capped = false;
  const uint64_t base = gradual ? edge(g, uint64_t(full_miss_bytes) / 2, uint64_t(full_miss_bytes) * 2, &base_capped) : C;
  std::vector<double> row;
  for (uint64_t m : {3ull, 5ull, 9ull, 17ull, 33ull}) {
    const uint64_t stride = m * g;
    if (stride > 4096) break;
    s.ctx().progress(0.3 + 0.1 * double(m) / 33.0, t.element + " line: capacity at stride " + fmt_bytes(stride));
    bool capped = false;
    const uint64_t fmax = edge(stride, base, base * m + stride, &capped);
    const double ratio = double(fmax) / double(base);
    row.push_back(double(stride));
    row.push_back(double(fmax));
    if (!capped && ratio < 1.0 + 0.5 / double(m)) continue;  // still below the line
    // line = stride / ratio, rounded to a power of two (at least the fetch unit).
    const double est = double(stride) / ratio;
    // Capped: the ratio is a lower bound, so the line is at most `est`.
    uint64_t line = uint64_t(1) << static_cast<int>(capped ? std::floor(std::log2(est)) : std::lround(std::log2(est)));
    line = std::max(line, g);
    if (capped && !gradual && C + C / 16 <= cap) {
      // The path stops the footprint before the capacity at this stride shows: try strides
      // just past each candidate line L instead. Loads 9/8 L apart take a line each, so 17/16
      // of the size fits in 17/18 of the lines; at 9/16 L apart every line is touched and
      // 17/16 of the size cannot fit. The first candidate that fits is the line.
      for (uint64_t cand = g; cand <= line; cand *= 2) {
        const uint64_t S = (cand * 9 / 8 + 3) / 4 * 4;
        const uint64_t F = (C + C / 16) / S * S;
        if (s.run(counted_point(recipes::constant_stride(F, S), 1, 2)).significant) continue;
        res.line_bytes.found = true;
        res.line_bytes.value = static_cast<int64_t>(cand);
        res.line_bytes.confidence = 0.9;
        res.line_bytes.note = fmt_bytes(F) + " (17/16 of the size) fits at a stride of " + fmt_bytes(S) +
                              (cand > g ? " but not at " + fmt_bytes((cand / 2 * 9 / 8 + 3) / 4 * 4) : std::string()) +
                              ": the line is " + fmt_bytes(cand) + " (the path, " + fmt_bytes(cap) +
                              ", stops the odd-stride footprints short of the capacity)";
        break;
      }
      if (res.line_bytes.found) break;
    }
    if (capped && line * 2 <= uint64_t(est)) {
      res.line_bytes.note = "footprints past the path's limit (" + fmt_bytes(cap) + ") would be needed";
      res.path_limited = true;
      break;
    }
    res.line_bytes.found = true;
    res.line_bytes.value = static_cast<int64_t>(line);
    res.line_bytes.confidence = capped ? 0.7 : std::max(0.0, 1.0 - std::fabs(std::log2(est / double(line))));
    if (capped) res.line_bytes.bound = Bound::AtMost;
    res.line_bytes.note = std::string(gradual ? "full-miss footprint" : "capacity") + " at a stride of " +
                          fmt_bytes(stride) + " is " + fmt_bytes(fmax) + " = " + fmt_bytes(base) + " * stride / line" +
                          (capped ? " or more (the path stops the footprint there), so the line is at most " +
                                        fmt_bytes(line)
                                  : std::string());
    break;
  }
  s.ctx().raw(t.element + "-line-strides", {"stride_bytes", "largest_footprint_without_misses"}, row);
  // Hashed set indices spread odd strides unevenly (the H100's L1 holds 1.3x, not 2.25x, its
  // size at 9 fetch units), so the odd-stride line is an upper bound there. Power-of-two
  // strides give a second one: n lines S apart with n * S = 1.125 C fit only when each takes
  // less than S / 1.125 bytes, so the (power-of-two) line is at most S / 2; at S <= line
  // every line of the footprint is touched and 1.125 C can never fit. Under modulo mapping
  // the first such S is sets * line (lines S apart share few sets), above the odd-stride
  // answer; under a hash that spreads power-of-two strides it is 2 * line. Both bounds err
  // upward only, so the smaller wins.
  if (res.line_bytes.found && !res.path_limited && res.line_bytes.value > int64_t(g) && C + C / 8 <= cap) {
    std::vector<uint64_t> strides;
    for (uint64_t S = 2 * g; S <= uint64_t(res.line_bytes.value); S *= 2) strides.push_back(S);
    std::vector<Session::Point> pts;
    for (uint64_t S : strides) pts.push_back(counted_point(spaced_lines((C + C / 8 + S - 1) / S, S), 1, 2));
    s.ctx().progress(0.9, t.element + " line: power-of-two strides");
    const auto o = pts.empty() ? std::vector<Session::Outcome>{} : s.run(pts);
    std::vector<double> prow;
    for (size_t i = 0; i < strides.size(); ++i) {
      prow.push_back(double(strides[i]));
      prow.push_back(double(pts[i].chase.footprint_bytes));
      prow.push_back(o[i].miss_fraction);
    }
    s.ctx().raw(t.element + "-line-pow2", {"stride_bytes", "footprint_bytes", "miss_fraction"}, prow);
    for (size_t i = 0; i < strides.size(); ++i) {
      if (o[i].significant) continue;
      const uint64_t line = std::max(strides[i] / 2, g);
      if (int64_t(line) < res.line_bytes.value) {
        res.line_bytes.note = "lines " + fmt_bytes(strides[i]) + " apart over 1.125x the size (" +
                              fmt_bytes(pts[i].chase.footprint_bytes) + ") fit, so the line is at most half of that; " +
                              "the odd-stride capacity said " + fmt_bytes(uint64_t(res.line_bytes.value)) +
                              " (a hashed set index spreads odd strides unevenly)";
        res.line_bytes.value = static_cast<int64_t>(line);
        // Only strides below it missed, which is all a line of this size allows.
        res.line_bytes.confidence = 0.9;
      }
      break;
    }
  }
  if (!res.line_bytes.found && res.line_bytes.note.empty())
    res.line_bytes.note = "capacity did not grow with the stride up to " + fmt_bytes(33 * g);
  return res;
}

// ------------------------------------------------------------------ sets and ways

// Most lines spaced S bytes apart that a chase holds without misses (a batched search on k).
// `hint`: the count at the previous (half) stride; k rarely falls below half of it, so the
// search starts there and, for thousands of lines, stops at 0.05 % (the plateau compares
// within 0.2 %).
uint64_t most_lines_without_misses(Session& s, uint64_t S, uint64_t C, uint64_t b, bool* capped = nullptr,
                                   uint64_t hint = 0) {
  if (capped) *capped = false;
  const Target& t = s.target();
  auto pred = [&](const std::vector<uint64_t>& ks) {
    std::vector<Session::Point> pts;
    for (uint64_t k : ks) {
      // Four passes: a set one line over capacity under a random-like policy misses only a
      // few times a pass.
      pts.push_back(counted_point(spaced_lines(k, S), 2, 4));
    }
    const auto o = s.run(pts);
    std::vector<bool> r;
    for (const auto& x : o) r.push_back(x.significant);
    return r;
  };
  an::SearchOptions so;
  so.start = 1;
  so.limit = 4 * (C / b) + 64;
  so.limit = std::min<uint64_t>(so.limit, (t.max_footprint_bytes ? t.max_footprint_bytes : kArrayBytes) / S);
  so.granularity = 1;
  so.points_per_round = static_cast<size_t>(std::max(s.parallel_points(), 3));
  if (hint >= 4) so.start = std::min(hint / 2, so.limit);
  if (hint >= 4096) so.target_width = hint / 2048;
  an::Bracket br = an::find_transition(an::BatchPredicate(pred), so);
  if (!br.found && br.low == 0 && so.start > 1) br = an::bisect(an::BatchPredicate(pred), 0, so.start, so);
  if (!br.found && br.low > 0 && capped) *capped = true;  // no misses up to the path's limit
  return br.found ? br.low : (capped && *capped ? br.low : 0);
}

GeometryResult find_geometry(Session& s, int64_t size_bytes, int64_t line_bytes) {
  const Target& t = s.target();
  GeometryResult res;
  const uint64_t b = static_cast<uint64_t>(line_bytes);
  // A size measured within a line of the truth (the first misses of a non-LRU cache can come
  // a step late): whole lines only.
  const uint64_t C = b ? static_cast<uint64_t>(size_bytes) / b * b : 0;
  if (C == 0 || b == 0) {
    res.sets.note = res.ways.note = "needs a size of at least one line";
    return res;
  }
  // Most lines spaced S apart that stay without misses: W * max(1, T*b/S) under modulo
  // mapping. Walk S down from C: the plateau at large S is W; the smallest S still on the
  // plateau is T*b.
  auto max_lines = [&](uint64_t S, bool* capped, uint64_t hint) {
    return most_lines_without_misses(s, S, C, b, capped, hint);
  };
  // Equal within a stray miss: one line, or 0.2 % of many.
  auto near = [](uint64_t x, uint64_t y) {
    const uint64_t d = x > y ? x - y : y - x;
    return d <= std::max<uint64_t>(1, std::max(x, y) / 500);
  };
  // Scan power-of-two strides upward from one line. Under modulo mapping k(S) = C / S until
  // S = T*b and W beyond; a hash of higher address bits keeps k above W until the stride
  // passes its highest bit. The plateau (three equal strides past the size) is W either way.
  std::vector<std::pair<uint64_t, uint64_t>> seen;  // (S, max lines), S ascending
  const uint64_t s_max = uint64_t(1) << 22;
  const uint64_t loads_before = s.loads_chased();
  uint64_t budget_stop = 0;  // the stride the load budget stopped the scan at
  for (uint64_t S = b; S <= s_max; S *= 2) {
    s.ctx().progress(0.05 + 0.9 * double(seen.size()) / 16.0, t.element + " sets/ways: stride " + fmt_bytes(S));
    if (t.geometry_load_budget && s.loads_chased() - loads_before > t.geometry_load_budget) {
      budget_stop = S;
      break;
    }
    bool capped = false;
    const uint64_t k = max_lines(S, &capped, seen.empty() ? 0 : seen.back().second);
    if (capped) {
      // The path's footprint limit stopped the search with k lines and no misses: a lower
      // bound. At or above the last k it is consistent with the plateau; stop here.
      if (!seen.empty() && k >= seen.back().second) seen.emplace_back(S, seen.back().second);
      break;
    }
    seen.emplace_back(S, k);
    // A stride of one line that holds far more lines than the size allows: the line is
    // shorter than line_bytes says, so no stride here can confine lines to one set.
    if (S == b && double(k) * double(b) > 1.5 * double(C)) {
      res.sets.note = res.ways.note = std::to_string(k) + " lines " + fmt_bytes(b) +
                                      " apart stay without misses, " +
                                      std::to_string(double(k) * double(b) / double(C)).substr(0, 4) +
                                      " times the size: the cache allocates less than line_bytes per line, so "
                                      "strides of whole lines cannot reveal its sets";
      break;
    }
    const size_t n = seen.size();
    if (S > C && n >= 3 && near(seen[n - 1].second, seen[n - 2].second) && near(seen[n - 2].second, seen[n - 3].second))
      break;
  }
  s.ctx().debug(t.element + " sets/ways: the stride scan chased " + std::to_string(s.loads_chased() - loads_before) +
                " loads");
  for (auto [S, k] : seen) {
    res.strides.push_back(S);
    res.max_lines.push_back(double(k));
  }
  std::vector<double> row;
  for (auto [S, k] : seen) {
    row.push_back(double(S));
    row.push_back(double(k));
  }
  s.ctx().raw(t.element + "-sets-ways", {"stride_bytes", "max_lines_without_misses"}, row);
  if (!res.sets.note.empty()) return res;
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
  if (!plateau && !all_lines_flat) {
    res.sets.note = res.ways.note =
        budget_stop ? "no plateau of lines per set up to a stride of " + fmt_bytes(budget_stop / 2) +
                          ", where the scan used its budget of " + std::to_string(t.geometry_load_budget) + " loads"
                    : "no plateau of lines per set up to a stride of " + fmt_bytes(s_max);
    return res;
  }
  // The plateau: the most lines any of its strides held (a stray miss can cost one).
  const uint64_t P = all_lines_flat ? C / b : std::max(seen[n - 1].second, seen[n - 2].second);
  // The plateau P of power-of-two strides is W times the odd part of the set count (lines
  // 2^j apart cycle through T / gcd(T, 2^j) sets). The true W is the smallest divisor W' of
  // P at whose stride C/W' (lines T'*b apart, T' = C / (b W')) a set holds exactly W' lines:
  // for W' < W that stride is a multiple of T*b and holds W lines, not W'.
  // A size measured a few lines long (random replacement, sampled passes) still names the
  // set count: round the line count to the nearest multiple of W' within 1 %.
  const uint64_t lines = C / b;
  auto sets_for = [&](uint64_t w) -> uint64_t {
    const uint64_t t = (lines + w / 2) / w;
    const double off = std::fabs(double(t * w) - double(lines)) / double(lines);
    return t > 0 && off <= 0.01 ? t : 0;
  };
  uint64_t W = 0;
  if (all_lines_flat) W = P;
  for (uint64_t w = 1; w <= P && !W; ++w) {
    if (P % w || !sets_for(w)) continue;
    const uint64_t Tw = sets_for(w);
    if (w == P || most_lines_without_misses(s, Tw * b, C, b) == w) W = w;
  }
  const bool rounded = W && sets_for(W) * W != lines;
  if (W == 0) {
    res.sets.note = res.ways.note = "the plateau (" + std::to_string(P) + " lines) does not divide the " +
                                    std::to_string(C / b) + " lines of the cache";
    return res;
  }
  uint64_t T = sets_for(W);
  // A size measured a few lines long leaves T a little off. The plateau says more: it is W
  // times the odd part of T, so T = odd * 2^j; take the j closest to the measured size.
  if (rounded && P % W == 0 && (P / W) % 2 == 1) {
    const uint64_t odd = P / W;
    const double j = std::round(std::log2(double(lines) / double(W) / double(odd)));
    const uint64_t snapped = odd << static_cast<int>(std::max(0.0, j));
    if (std::fabs(double(snapped) - double(T)) <= 0.01 * double(T)) T = snapped;
  }
  // Modulo mapping predicts k(S) = W * T / gcd(T, S/b) at every power-of-two stride. A hash
  // moves k by a large factor; a line or two less is a stray miss in the search (the H100's
  // texture path: 962 instead of 964 at 256 B in one run of three, which made it "hashed").
  auto modulo_prediction = [&](uint64_t S) { return W * (T / std::gcd(T, S / b)); };
  auto fits_modulo = [&](uint64_t S, uint64_t k) {
    const uint64_t want = std::min<uint64_t>(modulo_prediction(S), T * W);
    return (k > want ? k - want : want - k) <= std::max<uint64_t>(2, want / 100);
  };
  bool modulo = true;
  for (auto [S, k] : seen)
    if (!fits_modulo(S, k)) modulo = false;
  // Power-of-two strides cannot tell T modulo sets of W ways from T groups whose lines a hash
  // of higher address bits spreads over many smaller sets: every such stride reaches all sets
  // of a group. One set holding every line (T = 1) is the extreme case, a fully associative
  // cache or a hash of many bits. Lines at random places tell them apart: W - W/64 random lines
  // of each modulo set fit T x W, whereas under a hash some sets get more than their ways.
  // Few ways leave a hash little room to hide (the stride scan already sees it), so the test
  // runs for T = 1 or for sets of 8 ways or more.
  bool random_fit = false;
  if ((T == 1 && lines >= 16) || (T > 1 && modulo && W >= 8)) {
    const uint64_t span_cap = std::min(kArrayBytes, t.max_footprint_bytes ? t.max_footprint_bytes : kArrayBytes) / b;
    const uint64_t span = std::min<uint64_t>(8 * lines, span_cap) / T * T;  // whole rounds of the T sets
    const uint64_t per_set = W - W / 64;
    if (span / T >= 2 * per_set) {
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
      s.ctx().progress(0.95, t.element + " sets/ways: random lines");
      const auto o = s.run(counted_point(recipes::from_byte_offsets(offsets, span * b), 2, 4));
      s.ctx().raw(t.element + "-random-lines", {"lines", "span_bytes", "miss_fraction"},
                  {double(offsets.size()), double(span * b), o.miss_fraction});
      if (o.significant) {
        const std::string held =
            all_lines_flat ? "power-of-two strides from " + fmt_bytes(seen[0].first) + " to " +
                                 fmt_bytes(seen[flat - 1].first) + " hold all " + std::to_string(P) +
                                 " lines, as a fully associative cache would"
            : T == 1 ? "the plateau of power-of-two strides holds " + std::to_string(P) +
                           " lines, as a fully associative cache would"
                     : "power-of-two strides fit " + std::to_string(T) + " modulo sets of " + std::to_string(W) +
                           " ways";
        res.sets.note = res.ways.note =
            held + ", but " + std::to_string(offsets.size()) + " lines at random places in " + fmt_bytes(span * b) +
            (T == 1 ? " (63/64 of the size)" : " (" + std::to_string(per_set) + " in each of those sets)") +
            " miss (" + std::to_string(o.miss_fraction).substr(0, 6) +
            " of loads): a hash of address bits spreads power-of-two strides over " +
            (T == 1 ? "all sets" : "the sets of each group") + ", so they cannot single one out";
        return res;
      }
      random_fit = true;
    }
  }
  res.sets = {true, static_cast<int64_t>(T), rounded ? 0.8 : 0.95, Bound::Exact,
              std::string("lines of the cache / lines one set holds (the plateau of power-of-two strides)") +
                  (rounded ? "; the measured size was rounded to a whole number of sets" : "")};
  res.ways = {true, static_cast<int64_t>(W), 0.95, Bound::Exact,
              "most lines at a large power-of-two stride held without misses"};
  if (T == 1) {
    res.ways.note = std::string("every line fits at power-of-two strides") +
                    (random_fit ? " and at random places" : "") + ": fully associative";
  } else if (modulo) {
    res.set_mapping = {true, "modulo", 0.95, Bound::Exact,
                       std::string("lines at every power-of-two stride follow modulo mapping") +
                           (random_fit ? ", and lines at random places fill every set to its ways" : "")};
  } else {
    std::string where;
    for (auto [S, k] : seen)
      if (!fits_modulo(S, k)) where += (where.empty() ? "" : ", ") + fmt_bytes(S);
    res.set_mapping = {true, "hashed", 0.9, Bound::Exact,
                       "strides " + where + " spread over more sets than modulo mapping allows: higher address bits feed the set index"};
  }
  return res;
}

// ------------------------------------------------------------------ replacement policy

PolicyResult find_policy(Session& s, int64_t line_bytes, int64_t sets, int64_t ways) {
  const Target& t = s.target();
  PolicyResult res;
  const uint64_t b = static_cast<uint64_t>(line_bytes), T = static_cast<uint64_t>(sets),
                 W = static_cast<uint64_t>(ways);
  if (W < 2 || b < 12) {
    res.policy.note = "needs at least 2 ways and lines of 12 bytes or more";
    return res;
  }
  // Lines S apart share one set: T*b under modulo mapping; under a hashed mapping the
  // smallest larger power of two at which a set holds exactly W lines.
  uint64_t S = T * b;
  while (S <= (uint64_t(1) << 22) && most_lines_without_misses(s, S, T * W * b, b) != W) S *= 2;
  if (S > (uint64_t(1) << 22)) {
    res.policy.note = "found no stride at which lines share one set";
    return res;
  }
  // (a) W+1 lines of one set, chased cyclically: LRU and FIFO miss on every access, in a
  // periodic pattern; random-like policies keep some lines.
  s.ctx().progress(0.1, t.element + " policy: cyclic overflow");
  Session::Point cyc;
  cyc.chase = spaced_lines(W + 1, S);
  cyc.warmup_passes = 2;
  cyc.record_steps = 64 * (W + 1);
  cyc.miss_pattern = true;
  const auto oc = s.run(cyc);
  const an::Periodicity per = an::periodicity(oc.miss);
  res.periodicity_strength = per.strength;
  const bool all_miss = oc.miss_fraction > 0.95;

  // (b) A0..A(W-1), A0 again (another word of its line), a new line X, A0 again: LRU kept
  // A0 (hit), FIFO evicted it (miss). W flush lines first put the set in a known state.
  // Several sets at once, one trial each.
  s.ctx().progress(0.4, t.element + " policy: LRU against FIFO");
  const uint64_t trials = std::min<uint64_t>(T, 32);
  std::vector<uint64_t> offsets;
  std::vector<size_t> probe_pos;
  for (uint64_t set = 0; set < trials; ++set) {
    const uint64_t base = set * b;
    if (!t.max_footprint_bytes || (2 * W + 1) * S <= t.max_footprint_bytes)
      for (uint64_t j = 0; j < W; ++j) offsets.push_back(base + (W + 1 + j) * S);  // flush
    for (uint64_t j = 0; j < W; ++j) offsets.push_back(base + j * S);            // A0..A(W-1)
    offsets.push_back(base + 4);                                                   // A0 again
    offsets.push_back(base + W * S);                                               // X
    offsets.push_back(base + 8);                                                   // A0 again
    probe_pos.push_back(offsets.size() - 1);
  }
  Session::Point lf;
  lf.chase = recipes::from_byte_offsets(offsets);
  lf.warmup_passes = 0;
  lf.record_steps = offsets.size();
  lf.miss_pattern = true;
  // The same trials on every SM at once (per-SM caches): more trials, so one stray slow load
  // cannot tip the verdict.
  const auto ols = s.run(std::vector<Session::Point>(static_cast<size_t>(s.parallel_points()), lf));
  // Trials past the recorded (or kept) part of the pattern say nothing.
  size_t kept = 0, judged = 0;
  for (const auto& ol : ols) {
    for (size_t p : probe_pos) {
      if (p >= ol.miss.size()) break;
      ++judged;
      kept += ol.miss[p] ? 0 : 1;
    }
  }
  if (judged < std::min<size_t>(probe_pos.size() * ols.size(), 8)) {
    res.policy.note = "only " + std::to_string(judged) + " LRU-against-FIFO trials could be judged";
    return res;
  }

  const size_t clear = (judged * 9 + 9) / 10;
  s.ctx().debug(t.element + " policy: stride " + fmt_bytes(S) + "; cyclic overflow of " + std::to_string(W + 1) +
                " lines misses " + std::to_string(oc.miss_fraction) + " of loads (periodicity " +
                std::to_string(per.strength) + "); a re-used line survived a new one in " + std::to_string(kept) +
                " of " + std::to_string(judged) + " sets");
  if (all_miss && kept >= clear) {
    res.policy = {true, "lru", 0.95, Bound::Exact,
                  "cyclic overflow misses every access; a re-used line survives a new one"};
    return res;
  }
  if (all_miss && judged - kept >= clear) {
    res.policy = {true, "fifo", 0.95, Bound::Exact,
                  "cyclic overflow misses every access; a re-used line is still evicted first"};
    return res;
  }

  // (c) Victim census: fill W lines into an empty set in order, bring in one new line, probe
  // the W lines in fill order: the first miss is the victim. Many sets, several launches.
  s.ctx().progress(0.6, t.element + " policy: victim census");
  std::vector<double> counts(W, 0);
  size_t total = 0;
  for (int round = 0; round < 8 && total < 400; ++round) {
    std::vector<uint64_t> off;
    std::vector<size_t> first_probe;
    // About W + 3 misses a set: within what a counting chase keeps.
    const uint64_t nsets = std::min<uint64_t>({T, 64, std::max<uint64_t>(1024 / (W + 4), 1)});
    // Fresh lines every round (the caches keep the previous launch's lines), same sets, as
    // far as the path's footprint limit allows.
    const uint64_t span = (W + 1) * S;
    const uint64_t fit = t.max_footprint_bytes ? std::max<uint64_t>(t.max_footprint_bytes / (span + nsets * b), 1) : 8;
    const uint64_t shift = uint64_t(round) % fit * span;
    for (uint64_t set = 0; set < nsets; ++set) {
      const uint64_t base = shift + set * b;
      for (uint64_t j = 0; j < W; ++j) off.push_back(base + j * S);
      off.push_back(base + W * S);
      first_probe.push_back(off.size());
      for (uint64_t j = 0; j < W; ++j) off.push_back(base + j * S + 4);
    }
    Session::Point pc;
    pc.chase = recipes::from_byte_offsets(off);
    pc.warmup_passes = 0;
    pc.record_steps = off.size();
    pc.miss_pattern = true;
    std::vector<Session::Point> batch(static_cast<size_t>(s.parallel_points()), pc);
    const auto oo = s.run(batch);
    for (const auto& o : oo) {
      for (size_t fp : first_probe) {
        if (fp + W > o.miss.size()) break;
        for (uint64_t j = 0; j < W; ++j) {
          if (o.miss[fp + j]) {
            counts[j] += 1;
            ++total;
            break;
          }
        }
      }
    }
  }
  if (total < 20) {
    res.policy.note = "too few evictions observed for a census (" + std::to_string(total) + ")";
    return res;
  }
  std::vector<double> row;
  for (size_t j = 0; j < counts.size(); ++j) {
    row.push_back(double(j));
    row.push_back(counts[j] / double(total));
  }
  s.ctx().raw(t.element + "-victims", {"fill_position", "victim_probability"}, row);
  // The chi-square test needs about five expected evictions per cell: with many ways (the
  // H100's texture path: 482) the fill positions are grouped into equal bins, and the
  // probabilities are reported per bin.
  const size_t bins = total >= 5 * W ? size_t(W) : std::clamp<size_t>(total / 5, 2, 16);
  std::vector<double> binned(bins, 0);
  for (size_t j = 0; j < counts.size(); ++j) binned[j * bins / counts.size()] += counts[j];
  double chi2 = 0;
  for (size_t k = 0; k < bins; ++k) {
    // Positions in bin k: those j with j * bins / W == k.
    const double share = double((uint64_t(k + 1) * W + bins - 1) / bins - (uint64_t(k) * W + bins - 1) / bins) / double(W);
    const double expect = double(total) * share;
    chi2 += (binned[k] - expect) * (binned[k] - expect) / expect;
  }
  const boost::math::chi_squared dist(static_cast<double>(bins - 1));
  const double p_uniform = boost::math::cdf(boost::math::complement(dist, chi2));
  for (double c : binned) res.victim_probabilities.push_back(c / double(total));
  const std::string binning = bins == size_t(W) ? "" : ", per 1/" + std::to_string(bins) + " of the fill order";
  if (p_uniform > 0.01) {
    res.policy = {true, "random", 1 - 0.01, Bound::Exact,
                  "aperiodic misses; victims uniform over fill positions (chi-square p=" + std::to_string(p_uniform) +
                      ", " + std::to_string(total) + " evictions" + binning + ")"};
  } else {
    res.policy = {true, "non_uniform", 1 - p_uniform, Bound::Exact,
                  "aperiodic misses; victims skewed over fill positions (chi-square p=" + std::to_string(p_uniform) +
                      ", " + std::to_string(total) + " evictions" + binning + ")"};
  }
  return res;
}

// ------------------------------------------------------------------ latency

LatencyResult find_latency(Session& s, int64_t size_bytes, int64_t line_bytes) {
  const Target& t = s.target();
  LatencyResult res;
  // Hit: the plain P-chase over the warm reference footprint (no per-load timing overhead).
  s.ctx().progress(0.2, t.element + " latency: hit");
  // One load per line, so that a cache in front with shorter lines (constant L1 before
  // L1.5) never serves a second word of a line.
  const uint64_t hit_stride = line_bytes > 0 ? std::max<uint64_t>(uint64_t(line_bytes), t.stride_bytes) : t.stride_bytes;
  const uint64_t hit_foot = std::max<uint64_t>(t.latency_bytes ? t.latency_bytes : t.reference_bytes, 4 * hit_stride);
  const auto ref = recipes::constant_stride(hit_foot, hit_stride);
  const uint64_t cycle = cycle_of(ref);
  ChaseSpec spec;
  spec.space = t.space;
  spec.array = &ref.array;
  spec.start = ref.start;
  spec.warmup_steps = 2 * cycle;
  spec.steps = 4096;
  spec.shared_carveout_percent = t.shared_carveout_percent;
  const ChaseSamples fs = s.ctx().backend().fine_chase(spec);
  const double overhead = s.ctx().backend().timing_overhead();
  const double hit = an::median(an::to_doubles(fs.latency)) - overhead;
  res.latency_cycles = {true, hit, 0.99, Bound::Exact,
                        "median of fine-grained loads over a warm " + fmt_bytes(hit_foot) + " footprint, stride " +
                            fmt_bytes(hit_stride) + ", corrected for the timing overhead (" +
                            std::to_string(overhead) + " cycles)"};
  // Miss penalty: fine-grained loads over a footprint well past the size, one load per line:
  // the median miss minus the median hit (the timing overhead cancels out).
  s.ctx().progress(0.6, t.element + " latency: miss penalty");
  const uint64_t b = line_bytes > 0 ? uint64_t(line_bytes) : t.stride_bytes;
  uint64_t foot = size_bytes > 0 ? 4 * uint64_t(size_bytes) : t.search_limit_bytes;
  if (t.max_footprint_bytes) foot = std::min(foot, t.max_footprint_bytes);
  foot = std::max<uint64_t>(foot / b * b, 4 * b);
  Session::Point p;
  p.chase = foot <= (64ull << 20) ? recipes::random_lines(foot, b) : spaced_lines(foot / b, b);
  p.warmup_passes = 1;
  p.record_steps = std::min<uint64_t>(cycle_of(p.chase), 4096);
  // The next level's latency depends on where each line lands (L2 slices and partitions, by
  // physical address): one array of 4096 lines gives a median that moves by 6 % from run to
  // run on the H100. Eight arrays on eight SMs average over eight placements. (Per-SM caches
  // only: eight footprints of 4x a shared cache would not stay in the level behind it.)
  const size_t arrays = t.shared_between_sms ? 1 : std::min<size_t>(8, static_cast<size_t>(s.parallel_points()));
  const auto outs = s.run(std::vector<Session::Point>(arrays, p));
  std::vector<double> hits, misses;
  for (const auto& o : outs)
    for (size_t i = 0; i < o.latency.size(); ++i) (o.miss[i] ? misses : hits).push_back(o.latency[i]);
  if (misses.size() < 8) {
    res.miss_penalty_cycles.note = "a footprint of " + fmt_bytes(foot) + " produced too few misses";
    return res;
  }
  const double penalty = an::median(misses) - s.hit_latency_raw();
  res.miss_penalty_cycles = {true, penalty, 0.95, Bound::Exact,
                             "median fine-grained miss latency at " + fmt_bytes(foot) + " (" +
                                 std::to_string(arrays) + (arrays == 1 ? " array" : " arrays on as many SMs") +
                                 ") minus the median hit latency (raw; the timing overhead cancels)"};
  return res;
}

// ------------------------------------------------------------------ probe factory

namespace {

// An element the size probe found absent ("present = false") skips the rest.
void require_present(const Context& ctx, const std::string& element) {
  if (auto p = ctx.try_input<bool>(element + ".present"); p && !*p)
    throw Skip(element + " is not present on this device");
}

}  // namespace

std::vector<Probe> element_probes(const ElementSpec& spec) {
  const std::string e = spec.element;
  const std::string pre = spec.plugin + "/" + e;
  auto target = spec.target;
  std::vector<Probe> probes;

  // Keys the target builder reads go to every probe of the element; "<element>.present" is
  // used where some probe provides it, so an absent cache skips the whole element.
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<std::string> uses = with(spec.size_uses, {e + ".present"});
  std::vector<std::string> size_req = spec.size_requires;
  // The footprint the line and geometry steps start from: the first miss of the cyclic sweep.
  const std::string first_key = e + (spec.size_by_occupancy ? ".first_miss_bytes" : ".size_bytes");
  probes.push_back(
      Probe(pre + "-size")
          .summary(spec.title + (spec.size_by_occupancy ? ": first miss of a cyclic footprint sweep"
                                                        : ": size (largest footprint without capacity misses)"))
          .provides({first_key, e + ".full_miss_bytes"})
          .requires_keys(size_req)
          .uses(uses)
          .run([e, target, first_key](Context& ctx) {
            require_present(ctx, e);
            Session s(ctx, target(ctx));
            SizeResult r = find_size(s);
            report(ctx, first_key, r.size_bytes);
            report(ctx, e + ".full_miss_bytes", r.full_miss_bytes);
            ctx.debug(e + " size: " + std::to_string(s.launches()) + " launches");
          }));
  if (spec.size_by_occupancy)
    probes.push_back(
        Probe(pre + "-occupancy")
            .summary(spec.title + ": size as the lines held under random loads (every set full)")
            .provides({e + ".size_bytes"})
            .requires_keys(with(size_req, {first_key, e + ".line_bytes"}))
            .uses(with(with(uses, {e + ".full_miss_bytes"}), spec.candidate_uses))
            .run([e, target, first_key, candidates = spec.size_candidates](Context& ctx) {
              require_present(ctx, e);
              Session s(ctx, target(ctx));
              const OccupancyResult r =
                  find_occupancy(s, ctx.input<int64_t>(first_key), ctx.try_input<int64_t>(e + ".full_miss_bytes").value_or(0),
                                 ctx.input<int64_t>(e + ".line_bytes"),
                                 candidates ? candidates(ctx) : std::vector<SizeCandidate>{});
              report(ctx, e + ".size_bytes", r.size_bytes);
            }));

  probes.push_back(
      Probe(pre + "-line")
          .summary(spec.title + ": fetch granularity (sector) and line size")
          .provides({e + ".fetch_granularity_bytes", e + ".line_bytes"})
          .requires_keys(with(size_req, {first_key}))
          .uses(with(uses, {e + ".full_miss_bytes"}))
          .run([e, target, first_key](Context& ctx) {
            require_present(ctx, e);
            Session s(ctx, target(ctx));
            const LineResult r = find_line(s, ctx.input<int64_t>(first_key),
                                           ctx.try_input<int64_t>(e + ".full_miss_bytes").value_or(0));
            report(ctx, e + ".fetch_granularity_bytes", r.fetch_granularity_bytes);
            report(ctx, e + ".line_bytes", r.line_bytes);
            // A path too short for the line may still have shown the fetch unit (cold misses):
            // then the probe succeeds with that alone.
            if (!r.line_bytes.found && r.path_limited && !r.fetch_granularity_bytes.found)
              throw Skip("line size not determinable: " + r.line_bytes.note);
            if (!r.line_bytes.found && r.path_limited) return;
            if (!r.line_bytes.found) throw Error("line size not determined: " + r.line_bytes.note);
          }));

  probes.push_back(
      Probe(pre + "-geometry")
          .summary(spec.title + ": sets, ways and set-index mapping")
          .provides({e + ".sets", e + ".ways", e + ".set_mapping"})
          .requires_keys(with(size_req, {first_key, e + ".line_bytes"}))
          .uses(uses)
          .run([e, target, first_key](Context& ctx) {
            require_present(ctx, e);
            Session s(ctx, target(ctx));
            const GeometryResult r =
                find_geometry(s, ctx.input<int64_t>(first_key), ctx.input<int64_t>(e + ".line_bytes"));
            report(ctx, e + ".set_mapping", r.set_mapping);
            report(ctx, e + ".sets", r.sets);
            report(ctx, e + ".ways", r.ways);
            if (!r.sets.found) throw Skip("sets and ways not determinable: " + r.sets.note);
          }));

  probes.push_back(
      Probe(pre + "-policy")
          .summary(spec.title + ": replacement policy")
          .provides({e + ".replacement_policy", e + ".victim_probabilities"})
          .requires_keys(with(size_req, {e + ".line_bytes", e + ".sets", e + ".ways"}))
          .uses(uses)
          .run([e, target](Context& ctx) {
            require_present(ctx, e);
            Session s(ctx, target(ctx));
            const PolicyResult r = find_policy(s, ctx.input<int64_t>(e + ".line_bytes"),
                                               ctx.input<int64_t>(e + ".sets"), ctx.input<int64_t>(e + ".ways"));
            report(ctx, e + ".replacement_policy", r.policy);
            if (!r.victim_probabilities.empty())
              ctx.result(e + ".victim_probabilities", r.victim_probabilities,
                         ResultInfo{r.policy.confidence, Bound::Exact, "per fill position, from the victim census"});
            if (!r.policy.found) throw Error("replacement policy not determined: " + r.policy.note);
          }));

  if (!spec.latency_probe) return probes;
  probes.push_back(
      Probe(pre + "-latency")
          .summary(spec.title + ": hit latency and miss penalty")
          .provides({e + ".latency_cycles", e + ".miss_penalty_cycles"})
          .requires_keys(with(size_req, {e + ".size_bytes"}))
          .uses(with(uses, {e + ".line_bytes"}))
          .run([e, target](Context& ctx) {
            require_present(ctx, e);
            Session s(ctx, target(ctx));
            const LatencyResult r = find_latency(s, ctx.input<int64_t>(e + ".size_bytes"),
                                                 ctx.try_input<int64_t>(e + ".line_bytes").value_or(0));
            report(ctx, e + ".latency_cycles", r.latency_cycles);
            report(ctx, e + ".miss_penalty_cycles", r.miss_penalty_cycles);
          }));
  return probes;
}

}  // namespace memtopo::cache
