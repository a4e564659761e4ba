#include "tlb_chase.hpp"

#include <algorithm>
#include <optional>

#include <memtopo/analysis.hpp>
#include <memtopo/recipes.hpp>

#include "tlb_analysis.hpp"

namespace tlb {

namespace an = memtopo::analysis;

uint64_t page_stride(uint64_t page_bytes, uint64_t loads) {
  for (uint64_t step : {uint64_t(4096 + 128), uint64_t(128), uint64_t(64), uint64_t(32)})
    if (loads * step < page_bytes) return page_bytes + step;
  return page_bytes;
}

namespace {

// The explicit arrays' most bytes: their next-element table is as long as the footprint.
constexpr uint64_t kMostWrappedFootprint = uint64_t(64) << 20;

// Whether the loads of a chase `stride` apart wrap their line within the page (page_stride
// found no step that keeps every load in its page): load i at i x stride plus (i x 128) modulo
// the stride, a line of its own in the L2 each. Lines a small page apart with a step of 32 B or
// none fell into a few L2 sets, whose misses read as the TLB's (random devices 9, 35: misses
// down to 4 KiB pages for pages of 2 MiB).
bool wraps(uint64_t loads, uint64_t stride) {
  return stride % 4096 < 128 && loads * 128 > stride - stride % 4096 && loads > 1 &&
         loads * stride <= kMostWrappedFootprint;
}

memtopo::ChaseArray page_array(uint64_t loads, uint64_t stride) {
  if (!wraps(loads, stride)) return memtopo::ChaseArray::stride(loads * stride, stride);
  const uint64_t page = stride - stride % 4096;
  std::vector<uint64_t> offsets;
  offsets.reserve(loads);
  for (uint64_t i = 0; i < loads; ++i) offsets.push_back(i * stride + (i * 128) % page);
  return memtopo::recipes::from_byte_offsets(offsets, loads * stride).array;
}

}  // namespace

memtopo::Job Chaser::job(const memtopo::ChaseArray& a, uint64_t loads) const {
  memtopo::Job j;
  j.space = space_;
  j.array = &a;
  j.warmup_steps = loads;
  j.want_index = false;
  return j;
}

double Chaser::cycles(uint64_t loads, uint64_t stride) const {
  const auto a = page_array(loads, stride);
  memtopo::Job j = job(a, loads);
  j.pattern = MT_PATTERN_POINTERS;  // also past 16 GiB (MT_CAP_WIDE_STRIDE)
  j.record = MT_RECORD_TOTAL;
  j.steps = loads * std::max<uint64_t>(1, (1024 + loads - 1) / loads);
  return ctx_.backend().run(j).average_cycles;
}

WindowCounts Chaser::window_counts(uint64_t loads, uint64_t stride, const std::vector<Window>& windows,
                                   uint64_t passes, bool spread) const {
  const auto a = page_array(loads, stride);
  // From the starts spread_samples takes, averaged: the windows come of every kind of L2 hit,
  // and a chase from its first line alone may hold near lines only (16 pages a little over
  // 2 MiB apart in one 2 KiB partition granule), whose rate of slow hits then understates
  // that of a longer chase with far lines (random device 114: 27 L1 TLB entries for 32).
  const uint64_t starts = spread ? spread_chases(loads, stride) : 1;
  WindowCounts out;
  auto count = [&](uint32_t above, uint32_t at_most) {
    double slow = 0;
    for (uint64_t c = 0; c < starts; ++c) {
      memtopo::Job j = job(a, loads);
      j.record = MT_RECORD_COUNTS;
      j.start = uint32_t(c * kLineShiftElems);
      j.slow_cycles = above;
      j.slow_max_cycles = at_most;
      j.steps = loads * passes;
      slow += double(ctx_.backend().run(j).slow);
    }
    return slow / double(passes * starts);
  };
  for (const Window& w : windows) {
    out.slow.push_back(count(w.slow_raw, w.max_raw));
    out.level.push_back(count(w.floor_raw, w.max_raw));
  }
  return out;
}

double Chaser::low_cycles(uint64_t loads, uint64_t stride) const {
  return low_level_cycles(spread_samples(loads, stride, 512));
}

uint64_t Chaser::spread_chases(uint64_t loads, uint64_t stride) {
  // At least 64 lines: chases of few pages run again from other lines of the same pages, so
  // that the L2 slices and partitions of a handful of lines do not set the level.
  // The stride is a page (a multiple of 64 KiB) and a step below it; every start stays in the
  // first page with the step of every load after it.
  const uint64_t step = stride % (64 * KiB), page = stride - step;
  // Wrapped lines (page_array) take every line of their pages: one chase, from the first.
  const uint64_t room = wraps(loads, stride) ? 1 : page > loads * step ? (page - loads * step) / (4 * kLineShiftElems) : 1;
  return std::clamp<uint64_t>((64 + loads - 1) / loads, 1, std::clamp<uint64_t>(room, 1, 64));
}

std::vector<uint32_t> Chaser::spread_samples(uint64_t loads, uint64_t stride, uint64_t count) const {
  const uint64_t chases = spread_chases(loads, stride);
  std::vector<uint32_t> all;
  for (uint64_t c = 0; c < chases; ++c) {
    const std::vector<uint32_t> s = samples(loads, stride, std::max<uint64_t>(count / chases, 1), uint32_t(c * kLineShiftElems));
    all.insert(all.end(), s.begin(), s.end());
  }
  return all;
}

std::vector<uint32_t> Chaser::samples(uint64_t loads, uint64_t stride, uint64_t count, uint32_t start) const {
  const auto a = page_array(loads, stride);
  memtopo::Job j = job(a, loads);
  j.start = start;
  j.steps = count;
  return ctx_.backend().run(j).latency;
}

namespace {

// Where noise with a long tail fills the gap between hits and misses, no latency levels part
// them; then a load is slow above the held chase's 95th percentile (its hits are slow there at
// the base rate the miss test measures), up to `ceiling` (0: none). A window only when the
// overflowing chase has clearly more such loads: a fifth of them at least, and three times the
// held one's.
std::optional<Window> threshold_window(const std::vector<uint32_t>& held, const std::vector<uint32_t>& missed,
                                       uint32_t ceiling) {
  if (held.empty() || missed.empty()) return std::nullopt;
  const double t = an::percentile(an::to_doubles(held), 95);
  auto share = [&](const std::vector<uint32_t>& v) {
    return double(std::count_if(v.begin(), v.end(), [&](uint32_t x) { return double(x) > t; })) / double(v.size());
  };
  const double h = share(held), m = share(missed);
  if (m < 0.2 || m < 3 * h) return std::nullopt;
  return Window{uint32_t(t), ceiling};
}

// The same within each level of hits (a near and a far L2 hit each blended with its misses):
// one percentile over both would lie in the far hits, and a chase with more far lines than the
// held one would count its far hits as misses (random device 57). The window of a level ends
// where the next level of hits begins (rare levels, interrupts, are passed over).
std::vector<Window> threshold_windows(const an::Levels& lv, const std::vector<uint32_t>& held,
                                      const std::vector<uint32_t>& missed, const std::vector<bool>& hit) {
  std::vector<Window> out;
  const size_t n = lv.levels.size();
  for (size_t i = 0; i < n; ++i) {
    if (!hit[i]) continue;
    size_t next = i + 1;
    while (next < n && !hit[next]) ++next;
    const uint32_t ceiling = next < n ? uint32_t(lv.boundaries[next - 1]) : 0;
    std::vector<uint32_t> h, m;
    for (uint32_t v : held)
      if (lv.classify(v) == i) h.push_back(v);
    for (uint32_t v : missed)
      if (lv.classify(v) >= i && (next == n || lv.classify(v) < next)) m.push_back(v);
    if (m.size() * 20 < missed.size()) continue;  // a level the overflowing chase barely has
    if (auto w = threshold_window(h, m, ceiling)) {
      w->floor_raw = i == 0 ? 0 : uint32_t(lv.boundaries[i - 1]);
      out.push_back(*w);
    }
  }
  return out;
}

}  // namespace

std::vector<Window> miss_windows(const Chaser& chase, uint64_t stride, uint64_t hit_loads, uint64_t miss_loads) {
  // Both from many lines of their pages: a chase of few pages may hold lines of one L2
  // partition only, and its far hits would then read as misses.
  const std::vector<uint32_t> held = chase.spread_samples(hit_loads, stride, 512),
                              missed = chase.spread_samples(miss_loads, stride, 512);
  std::vector<uint32_t> both = held;
  both.insert(both.end(), missed.begin(), missed.end());
  const an::Levels lv = an::find_levels(both);
  if (!lv.found) {
    const auto w = threshold_window(held, missed, 0);
    return w ? std::vector<Window>{*w} : std::vector<Window>{};
  }
  const size_t n = lv.levels.size();
  std::vector<size_t> in_held(n), in_missed(n);
  for (uint32_t v : held) ++in_held[lv.classify(v)];
  for (uint32_t v : missed) ++in_missed[lv.classify(v)];
  std::vector<bool> hits(n);
  for (size_t i = 0; i < n; ++i) hits[i] = in_held[i] * 100 >= held.size();
  // A level of misses: a share of the overflowing chase, next to none of the held one. A level
  // of hits closes a window; a rare one (interrupts) does not, and above the last hits a window
  // has no ceiling, so that a miss that an interrupt slowed still counts.
  std::vector<Window> out;
  bool open = false;
  uint32_t hit_floor = 0;  // where the last level of hits begins
  for (size_t i = 0; i < n; ++i) {
    const bool hit = hits[i];
    const bool miss = !hit && in_missed[i] * 20 >= missed.size();
    const uint32_t high = i + 1 < n ? uint32_t(lv.boundaries[i]) : 0;
    if (hit) {
      open = false;
      hit_floor = i == 0 ? 0 : uint32_t(lv.boundaries[i - 1]);
    } else if (miss && !open) {
      out.push_back(Window{i == 0 ? 0 : uint32_t(lv.boundaries[i - 1]), high, hit_floor});
      open = true;
    } else if (open) {
      out.back().max_raw = high;
    }
  }
  return out.empty() ? threshold_windows(lv, held, missed, hits) : out;
}

std::string crowds_l2(const memtopo::Context& ctx, uint64_t entries) {
  const int64_t l2 = ctx.device().l2_bytes;
  const uint64_t lines = 2 * entries, line = 128;
  if (l2 <= 0 || lines * line < uint64_t(l2) / 2) return "";
  return " (the chases of " + std::to_string(lines) + " pages touch " + std::to_string(lines * line >> 10) +
         " KiB of lines, half the " + std::to_string(l2 >> 10) + " KiB L2 or more: its misses may read as this level's)";
}

uint64_t footprint_limit(const memtopo::Context& ctx) {
  uint64_t limit = uint64_t(std::max<int64_t>(ctx.device().global_memory_bytes, 0)) / 4 * 3;
  const int64_t opt = ctx.option<int64_t>("max_footprint_bytes");
  if (opt > 0) limit = std::min(limit, uint64_t(opt));
  return limit;
}

}  // namespace tlb
