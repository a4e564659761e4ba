// Size: the largest footprint without capacity misses. Doubling and bisection bracket the
// transition; a window of fine steps around it finds the size to the stride; footprints
// past it show whether the transition is gradual (full_miss_bytes).
#include <algorithm>
#include <chrono>
#include <cmath>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/steps.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;
namespace {

// The footprints of one size search and how each is judged.
class SizeSearch {
 public:
  explicit SizeSearch(Measurer& m) : m_(m), t_(m.target()), stride_(t_.stride_bytes), per_sm_(!t_.shared_between_sms) {}

  // Whether each footprint has capacity misses, judged on several SMs (per-SM caches).
  std::vector<bool> has_misses(const std::vector<uint64_t>& sizes) {
    std::vector<bool> r;
    for (const auto& x : middle_of(sizes, per_sm_ ? 3 : 1)) r.push_back(x.significant);
    return r;
  }
  an::SearchOptions options() const {
    an::SearchOptions so;
    so.start = t_.search_start_bytes;
    so.limit = t_.search_limit_bytes;
    so.granularity = stride_;
    so.points_per_round = std::max<size_t>(1, static_cast<size_t>(m_.parallel_footprints()) / (per_sm_ ? 3 : 1));
    return so;
  }
  // A per-SM cache misses now and then at footprints a few lines below its size, on one SM
  // and not on the others (docs/results/log/h100.md: one footprint in eight on the H100's L1
  // paths). So each footprint runs on `copies` SMs of one launch and the middle copy (by
  // significance, then by misses) stands for it: most SMs must miss.
  std::vector<FootprintResult> middle_of(const std::vector<uint64_t>& sizes, size_t copies) {
    std::vector<uint64_t> runs;  // copy-major: a launch holds copies of many footprints
    for (size_t c = 0; c < copies; ++c) runs.insert(runs.end(), sizes.begin(), sizes.end());
    std::vector<FootprintResult> got = measure(runs);
    std::vector<FootprintResult> out;
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<FootprintResult*> v;
      for (size_t c = 0; c < copies; ++c) v.push_back(&got[c * sizes.size() + i]);
      std::sort(v.begin(), v.end(), [](const FootprintResult* a, const FootprintResult* b) {
        return std::make_pair(a->significant, a->misses) < std::make_pair(b->significant, b->misses);
      });
      out.push_back(std::move(*v[copies / 2]));
    }
    return out;
  }
  // Per-SM caches are cheap to chase: three warm-up passes let the path's own data lines
  // settle, and four counted passes must all miss. A shared cache of many MiB gets one of
  // each: one counted pass over the L2 is some 800 k loads, far more than its misses need.
  // A small one (the constant L1.5) gets passes up to 8192 loads, at most 8: a footprint a
  // line past a randomly replaced cache misses about once a pass in each set it overfills,
  // which one pass of 500 loads did not tell from stray slow loads (the size read 1.5 lines
  // over at confidence 1 on random devices).
  std::vector<FootprintResult> measure(const std::vector<uint64_t>& sizes) {
    std::vector<Footprint> fs;
    for (uint64_t sz : sizes) {
      const uint64_t loads = std::max<uint64_t>(sz / stride_, 1);
      const uint64_t shared_passes = std::clamp<uint64_t>(kSharedCountedLoads / loads, 1, 8);
      fs.push_back(counted_footprint(stride_chase(sz, stride_), per_sm_ ? 3 : 1, per_sm_ ? 4 : shared_passes));
    }
    return m_.run(fs);
  }
  static constexpr uint64_t kSharedCountedLoads = 8192;

  // The sweep around the transition found at `size` and the position of the size in it.
  struct Window {
    std::vector<uint64_t> sizes;
    std::vector<FootprintResult> results;
    size_t size_pos = 0;
    bool stochastic_onset = false;  // shared cache whose misses come and go near the size
    uint64_t onset_low = UINT64_MAX, onset_high = 0;  // the size from each measurement alone
  };
  Window per_sm_window(uint64_t size);
  Window shared_window(uint64_t size);

  // Footprints past the path's reach (the constant path's 95 KiB) cannot be chased: the
  // windows stop there.
  uint64_t reach() const { return t_.max_footprint_bytes ? t_.max_footprint_bytes : UINT64_MAX; }
  std::vector<uint64_t> within_reach(std::vector<uint64_t> sizes) const {
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [this](uint64_t x) { return x > reach(); }), sizes.end());
    return sizes;
  }

  Measurer& m_;
  const Target& t_;
  const uint64_t stride_;
  const bool per_sm_;
};

// Per-SM caches (one launch on many SMs): 16 steps below, 32 past the bracket, each on nine
// SMs (the stray misses land anywhere in the last lines before the size, so the bracket can
// too), then up to 2x. The window must show the transition: a clean footprint followed by at
// least four missing ones. When it does not, stray misses that beat the search's three
// copies moved the bracket: search again past the window (or below it) and measure a new
// window, twice at most.
SizeSearch::Window SizeSearch::per_sm_window(uint64_t size) {
  constexpr size_t kCopies = 9;
  const uint64_t g = stride_;
  const an::SearchOptions so = options();
  auto pred = an::BatchPredicate([this](const std::vector<uint64_t>& s) { return has_misses(s); });
  Window w;
  uint64_t at = size;
  for (int attempt = 0;; ++attempt) {
    w.sizes.clear();
    const uint64_t below = std::min<uint64_t>(16, at / g - 1);
    for (uint64_t k = below; k >= 1; --k) w.sizes.push_back(at - k * g);
    w.sizes.push_back(at);
    for (uint64_t k = 1; k <= 32; ++k) w.sizes.push_back(at + k * g);
    w.sizes = within_reach(std::move(w.sizes));
    w.results = middle_of(w.sizes, kCopies);
    w.size_pos = below;
    // The largest footprint without misses after which every fine step misses: misses that
    // come and go below it are not capacity misses of the steady state, since a footprint
    // past the capacity misses in every pass.
    size_t last_clean = w.sizes.size();
    for (size_t i = 0; i < w.sizes.size(); ++i)
      if (!w.results[i].significant) last_clean = i;
    const bool shown = last_clean < w.sizes.size() && w.sizes.size() - last_clean - 1 >= 4;
    if (shown) w.size_pos = last_clean;
    if (shown || attempt == 2) break;
    if (last_clean == w.sizes.size()) {  // all missing: the transition lies below the window
      const an::Bracket again = an::bisect(pred, w.sizes.front() / 2, w.sizes.front(), so);
      if (!again.found) break;
      at = std::max(again.low, 2 * g);
    } else if (last_clean + 1 == w.sizes.size()) {  // clean at the top: it lies above
      an::SearchOptions up = so;
      up.start = w.sizes.back();  // doubling from the clean top, then bisection
      const an::Bracket again = an::find_transition(pred, up);
      at = again.found ? again.low : w.sizes.back();  // not found: the top itself missed now
    } else {
      at = w.sizes[last_clean];  // near the top: centre the window on it
    }
    m_.ctx().debug(t_.element + " size: the window did not show the transition; measuring one at " + fmt_bytes(at));
  }
  // The shape past it, on a grid anchored at the size found (not at the bracket, which
  // stray misses move), so that full_miss_bytes is the same from run to run.
  const uint64_t found = w.sizes[w.size_pos];
  std::vector<uint64_t> coarse;
  for (uint64_t k = 1; k <= 8; ++k) {
    const uint64_t f = found + found * k / 8 / g * g;
    if (f > w.sizes.back() && (coarse.empty() || f > coarse.back())) coarse.push_back(f);
  }
  coarse = within_reach(std::move(coarse));
  for (auto& x : measure(coarse)) w.results.push_back(std::move(x));
  w.sizes.insert(w.sizes.end(), coarse.begin(), coarse.end());
  return w;
}

// A shared cache: one footprint at a time, around the bracket 1/64 of the size apart. On the
// simulator (and any cache that misses by its own data alone) the window is clean up to the
// bracket and misses past it: the bracket stands. Where other traffic evicts a few lines of
// sets the data has filled near the capacity, and one footprint past it misses 0 or a few
// percent of its loads from one measurement to the next (the H100's L2), the size is where
// the rolling median of five neighbours (each the mean of three measurements) first passes
// an eighth of the window's largest miss fraction and stays above it: the last footprint
// before that (to 1/64 of the size).
SizeSearch::Window SizeSearch::shared_window(uint64_t size) {
  const uint64_t g = stride_;
  const uint64_t fine = std::max<uint64_t>(size / 64 / g * g, g);
  Window w;
  auto add = [&](const std::vector<uint64_t>& more) {
    for (auto& x : measure(more)) w.results.push_back(std::move(x));
    w.sizes.insert(w.sizes.end(), more.begin(), more.end());
  };
  std::vector<uint64_t> first;
  for (uint64_t k = 4; k >= 1; --k)
    if (size > k * fine) first.push_back(size - k * fine);
  first.push_back(size);
  first.push_back(size + g);
  for (uint64_t k = 1; k <= 8; ++k) first.push_back(size + k * fine);
  add(within_reach(std::move(first)));
  const size_t at = static_cast<size_t>(std::find(w.sizes.begin(), w.sizes.end(), size) - w.sizes.begin());
  w.size_pos = at;
  bool clean_below = true, missing_above = true;
  for (size_t i = 0; i <= at; ++i) clean_below = clean_below && !w.results[i].significant;
  for (size_t i = at + 2; i < w.sizes.size(); ++i) missing_above = missing_above && w.results[i].significant;
  if (!clean_below || !missing_above) {
    // Two more measurements of the window; each footprint's miss fraction is their mean.
    const std::vector<uint64_t> window(w.sizes.begin(), w.sizes.end());
    std::vector<std::vector<double>> single(1);
    for (const auto& x : w.results) single[0].push_back(x.miss_fraction);
    for (int again = 0; again < 2; ++again) {
      const auto more = measure(window);
      single.emplace_back();
      for (size_t i = 0; i < window.size(); ++i) {
        w.results[i].miss_fraction += more[i].miss_fraction;
        single.back().push_back(more[i].miss_fraction);
      }
    }
    std::vector<double> mf;
    for (auto& x : w.results) mf.push_back(x.miss_fraction /= 3);
    const size_t onset = an::lasting_onset(mf, 1.0 / 8, 5);
    if (onset > 0 && onset < w.sizes.size()) {
      w.size_pos = onset - 1;
      w.stochastic_onset = true;
      m_.ctx().debug(t_.element + " size: misses come and go near the size; their rolling median stays above 1/8 "
                     "of the largest from " + fmt_bytes(w.sizes[onset]));
      // How far one measurement alone would move the answer: the spread a user should
      // expect between runs (the size is then not exact to the line).
      for (const auto& one : single) {
        const size_t k = an::lasting_onset(one, 1.0 / 8, 5);
        if (k > 0 && k < w.sizes.size()) {
          w.onset_low = std::min(w.onset_low, w.sizes[k - 1]);
          w.onset_high = std::max(w.onset_high, w.sizes[k - 1]);
        }
      }
    }
  }
  for (uint64_t f = w.sizes.back() + 2 * fine; f <= 2 * size && f + 2 * fine <= reach(); f += 4 * fine) {
    add({f, f + 2 * fine});
    const size_t n = w.results.size();
    const double a = w.results[n - 3].miss_fraction, b = w.results[n - 2].miss_fraction, c = w.results[n - 1].miss_fraction;
    if (a > 0 && std::max({a, b, c}) <= 1.03 * std::min({a, b, c}) && w.results[n - 3].significant) break;
  }
  return w;
}

// No transition within the search range: a bound, with the reason.
SizeResult size_as_bound(const an::Bracket& b, const an::SearchOptions& so, const Target& t) {
  SizeResult res;
  res.size_bytes.found = true;
  if (b.low == 0) {
    res.size_bytes.value = static_cast<int64_t>(so.start);
    res.size_bytes.bound = Bound::AtMost;
    res.size_bytes.confidence = 0.5;
    res.size_bytes.note = "misses already at the smallest footprint tried (" + fmt_bytes(so.start) + ")";
  } else {
    res.size_bytes.value = static_cast<int64_t>(b.low);
    res.size_bytes.bound = Bound::AtLeast;
    res.size_bytes.confidence = 0.9;
    res.size_bytes.note = "no capacity misses up to " + fmt_bytes(b.low) + ", the largest footprint searched" +
                          (t.search_limit_reason.empty() ? std::string() : " (" + t.search_limit_reason + ")");
  }
  return res;
}

// The size from the window: the KS test must put one change exactly at the size; where the
// miss fractions keep rising past it, the transition is gradual (full_miss_bytes).
SizeResult size_from_window(const SizeSearch::Window& w, uint64_t stride) {
  SizeResult res;
  for (size_t i = 0; i < w.sizes.size(); ++i) {
    res.footprints.push_back(w.sizes[i]);
    res.miss_fractions.push_back(w.results[i].miss_fraction);
  }
  const size_t pos = w.size_pos;
  res.size_bytes.found = true;
  res.size_bytes.value = static_cast<int64_t>(w.sizes[pos]);
  const an::ChangeConfirmation cc = an::confirm_change(res.miss_fractions, pos + 1, 0.01);
  res.size_bytes.confidence = cc.confirmed ? cc.ks.confidence : 0.5;
  const bool spread = w.stochastic_onset && w.onset_high > w.onset_low;
  // Measurements that disagree: the value is not exact to the line, whatever the KS test says.
  if (spread) res.size_bytes.confidence = std::min(res.size_bytes.confidence, 0.5);
  const std::string how =
      w.stochastic_onset
          ? "last footprint before the misses (which come and go near the size) stay above 1/8 of the largest seen, "
            "to 1/64 of the size (stride " + fmt_bytes(stride) + "); " +
                (spread ? "not exact to the line: each of the three measurements alone gives " +
                              std::to_string(w.onset_low) + " to " + std::to_string(w.onset_high) + " B; "
                        : std::string())
          : "largest footprint without capacity misses (stride " + fmt_bytes(stride) + "); ";
  res.size_bytes.note = how + (cc.confirmed ? "change at the size confirmed, KS p=" + std::to_string(cc.ks.p_value)
                                            : "change at the size not confirmed: " + cc.reason);
  // Gradual transition: where the miss fraction reaches 95 % of the largest, interpolated
  // between the footprints either side: the first footprint past it jumps a grid step (1/8 of
  // the size) when the fraction before it is near the mark in one run and not in another.
  // The plateau is the median of the largest footprints' fractions (up to four past the size),
  // not the largest fraction, which one noisy point raises and the mark with it.
  const size_t tail = std::min<size_t>(4, res.miss_fractions.size() - pos - 1);
  const double top = tail ? an::median(std::vector<double>(res.miss_fractions.end() - std::ptrdiff_t(tail),
                                                              res.miss_fractions.end()))
                          : *std::max_element(res.miss_fractions.begin(), res.miss_fractions.end());
  const double mark = 0.95 * top;
  for (size_t i = pos + 1; i < w.sizes.size(); ++i) {
    if (res.miss_fractions[i] < mark) continue;
    const double f0 = res.miss_fractions[i - 1], f1 = res.miss_fractions[i];
    const double x0 = double(w.sizes[i - 1]), x1 = double(w.sizes[i]);
    const double at = f1 > f0 ? x0 + (x1 - x0) * std::clamp((mark - f0) / (f1 - f0), 0.0, 1.0) : x1;
    const uint64_t crossing = std::max<uint64_t>(stride, uint64_t(at / double(stride) + 0.5) * stride);
    if (crossing > w.sizes[pos] + 4 * stride) {
      res.full_miss_bytes.found = true;
      res.full_miss_bytes.value = static_cast<int64_t>(crossing);
      res.full_miss_bytes.confidence = res.size_bytes.confidence;
      res.full_miss_bytes.note = "footprint where the miss fraction reaches 95 % of its plateau (the median of the largest footprints' fractions), interpolated";
    }
    break;
  }
  return res;
}

}  // namespace

SizeResult find_size(Measurer& m) {
  const Target& t = m.target();
  SizeSearch search(m);
  const an::SearchOptions so = search.options();
  m.ctx().progress(0.05, t.element + " size: doubling and bisection");
  const auto t0 = std::chrono::steady_clock::now();
  const an::Bracket b = an::find_transition(
      an::BatchPredicate([&](const std::vector<uint64_t>& s) { return search.has_misses(s); }), so);
  if (!b.found) return size_as_bound(b, so, t);
  const size_t bracket_launches = m.launches();
  const double bracket_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.ctx().progress(0.5, t.element + " size: confirming sweep");
  const SizeSearch::Window w = t.shared_between_sms ? search.shared_window(b.low) : search.per_sm_window(b.low);
  // Where the time goes (docs/results: the run time per model).
  m.ctx().debug(t.element + " size: bracket " + std::to_string(bracket_launches) + " launches in " +
                std::to_string(bracket_s) + " s, window and tail " + std::to_string(m.launches() - bracket_launches) +
                " launches (" + std::to_string(w.sizes.size()) + " footprints) by " +
                std::to_string(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) + " s");
  std::vector<double> row;
  for (size_t i = 0; i < w.sizes.size(); ++i) {
    row.push_back(double(w.sizes[i]));
    row.push_back(w.results[i].miss_fraction);
  }
  m.ctx().raw(t.element + "-size-sweep", {"footprint_bytes", "miss_fraction"}, row);
  return size_from_window(w, t.stride_bytes);
}

}  // namespace memtopo::cache
