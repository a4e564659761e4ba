// Replacement policy: a cyclic overflow of one set (LRU and FIFO miss on every access),
// a re-used line against a new one (LRU keeps it, FIFO does not), and for the rest a victim
// census whose uniformity a chi-square test judges (random against non-uniform).
#include <algorithm>
#include <map>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/steps.hpp"
#include "front_fill.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;
namespace {

// A footprint whose every load is recorded as hit or miss from a cold start; its lines where
// the target's line map puts them.
Footprint pattern_of(const Target& t, std::vector<uint64_t> offsets) {
  Footprint f;
  if (!t.line_map.empty())
    for (uint64_t& o : offsets) o = t.line_map.place(o);
  f.chase = recipes::from_byte_offsets(offsets, t.line_map.region_bytes);
  f.warmup_passes = 0;
  f.record_steps = offsets.size();
  f.miss_pattern = true;
  return f;
}

// The front cache's fill where a pattern needs one: a line is used again after the W lines of
// its set at most, which the front may keep (fewer than its ways plus one, or four times its
// ways where its victims are random); then the fill for one line.
FrontFill pattern_fill(const Target& t, uint64_t S, uint64_t b, uint64_t W) {
  return front_fill(t, W, S, b).count ? front_fill(t, 1, S, b) : FrontFill{};
}

// The pattern with the front cache's fill (pattern_fill: lines of that front set in sets of
// this cache no access uses) after the accesses at `after`, so that the front keeps none of the
// lines before them; `pos` (indexes of accesses) move with them. A fill line comes again
// through its next word, and past its last word as the line a row (S) further.
std::vector<uint64_t> with_fill(const Target& t, const std::vector<uint64_t>& offsets, const std::vector<size_t>& after,
                                uint64_t S, uint64_t b, uint64_t W, std::vector<size_t>& pos) {
  const FrontFill fill = pattern_fill(t, S, b, W);
  if (!fill.count) return offsets;
  const uint64_t words = std::max<uint64_t>(t.front.line_bytes / 4, 1), cap = footprint_cap(t);
  std::map<uint64_t, uint64_t> visits;
  std::vector<uint64_t> out;
  std::vector<size_t> moved(offsets.size());
  for (size_t i = 0, next = 0; i < offsets.size(); ++i) {
    moved[i] = out.size();
    out.push_back(offsets[i]);
    if (next == after.size() || after[next] != i) continue;
    ++next;
    const uint64_t base = offsets[i] / S * S + offsets[i] % S / (2 * fill.spacing_bytes) * 2 * fill.spacing_bytes;
    for (uint64_t j = 0; j < fill.count; ++j) {
      uint64_t line = base + (2 * j + 1) * fill.spacing_bytes;
      while (visits[line] >= words) line += S;
      if (cap && line + fill.spacing_bytes > cap) continue;  // past the path's reach: a shorter fill
      out.push_back(line + 4 * visits[line]++);
    }
  }
  for (size_t& p : pos) p = moved[p];
  return out;
}

// Sets of the trials, b apart, or, where the front cache needs a fill, 2 x spacing apart: the
// fill's lines take the sets between them.
uint64_t trial_set_step(const Target& t, uint64_t S, uint64_t b, uint64_t W) {
  const FrontFill fill = pattern_fill(t, S, b, W);
  return fill.count ? 2 * fill.spacing_bytes : b;
}

// A0..A(W-1), A0 again (another word of its line), a new line X, A0 again: LRU kept A0
// (hit), FIFO evicted it (miss). W flush lines first put the set in a known state. Several
// sets at once, one trial each, on every SM (per-SM caches): more trials, so one stray slow
// load cannot tip the verdict.
struct Trials {
  size_t kept = 0, judged = 0, run = 0;  // re-used lines kept, trials judged, trials run
};
Trials reused_line_trials(Measurer& m, uint64_t b, uint64_t T, uint64_t W, uint64_t S) {
  const Target& t = m.target();
  const uint64_t step = trial_set_step(t, S, b, W);
  const uint64_t trials = std::min<uint64_t>(T * b / step, 32);
  std::vector<uint64_t> offsets;
  std::vector<size_t> probe_pos, fill_after;
  for (uint64_t set = 0; set < trials; ++set) {
    const uint64_t base = set * step;
    if (!footprint_cap(t) || (2 * W + 1) * S <= footprint_cap(t))
      for (uint64_t j = 0; j < W; ++j) offsets.push_back(base + (W + 1 + j) * S);  // flush
    for (uint64_t j = 0; j < W; ++j) offsets.push_back(base + j * S);            // A0..A(W-1)
    fill_after.push_back(offsets.size() - 1);
    offsets.push_back(base + 4);                                                   // A0 again
    offsets.push_back(base + W * S);                                               // X
    fill_after.push_back(offsets.size() - 1);
    offsets.push_back(base + 8);                                                   // A0 again
    probe_pos.push_back(offsets.size() - 1);
  }
  offsets = with_fill(t, offsets, fill_after, S, b, W, probe_pos);
  const auto results = m.run(std::vector<Footprint>(static_cast<size_t>(m.parallel_footprints()), pattern_of(t, offsets)));
  // Trials past the recorded (or kept) part of the pattern say nothing.
  Trials tr;
  tr.run = probe_pos.size() * results.size();
  for (const auto& r : results) {
    for (size_t p : probe_pos) {
      if (p >= r.miss.size()) break;
      ++tr.judged;
      tr.kept += r.miss[p] ? 0 : 1;
    }
  }
  return tr;
}

// Fill W lines into an empty set in order, bring in one new line, probe the W lines in fill
// order: the first miss is the victim. Many sets, several launches. Victims per fill position.
std::vector<double> victim_census(Measurer& m, uint64_t b, uint64_t T, uint64_t W, uint64_t S, size_t* total) {
  const Target& t = m.target();
  std::vector<double> counts(W, 0);
  *total = 0;
  for (int round = 0; round < 8 && *total < 400; ++round) {
    std::vector<uint64_t> off;
    std::vector<size_t> probes, fill_after;  // probes: W a set, in fill order
    const uint64_t step = trial_set_step(t, S, b, W);
    // About W + 3 misses a set: within what a counted job keeps.
    const uint64_t nsets = std::min<uint64_t>({T * b / step, 64, std::max<uint64_t>(1024 / (W + 4), 1)});
    // Fresh lines every round (the caches keep the previous launch's lines), same sets, as
    // far as the path's footprint limit allows.
    const uint64_t span = (W + 1) * S;
    const uint64_t fit = footprint_cap(t) ? std::max<uint64_t>(footprint_cap(t) / (span + nsets * step), 1) : 8;
    const uint64_t shift = uint64_t(round) % fit * span;
    for (uint64_t set = 0; set < nsets; ++set) {
      const uint64_t base = shift + set * step;
      for (uint64_t j = 0; j < W; ++j) off.push_back(base + j * S);
      off.push_back(base + W * S);
      fill_after.push_back(off.size() - 1);
      for (uint64_t j = 0; j < W; ++j) {
        probes.push_back(off.size());
        off.push_back(base + j * S + 4);
      }
    }
    off = with_fill(t, off, fill_after, S, b, W, probes);
    const auto results = m.run(std::vector<Footprint>(static_cast<size_t>(m.parallel_footprints()), pattern_of(t, off)));
    for (const auto& r : results) {
      for (size_t first = 0; first < probes.size(); first += W) {
        if (probes[first + W - 1] >= r.miss.size()) break;
        for (uint64_t j = 0; j < W; ++j) {
          if (!r.miss[probes[first + j]]) continue;
          counts[j] += 1;
          ++*total;
          break;
        }
      }
    }
  }
  return counts;
}

// Random against non-uniform: the chi-square test of the census against uniform victims.
// It needs about five expected evictions per cell: with many ways the fill positions are
// grouped into equal bins, and the probabilities are reported per bin.
void judge_census(const std::vector<double>& counts, size_t total, PolicyResult& res) {
  const size_t W = counts.size();
  const size_t bins = total >= 5 * W ? W : std::clamp<size_t>(total / 5, 2, 16);
  const an::UniformityTest u = an::chi_square_uniform(counts, bins);
  for (double c : u.binned) res.victim_probabilities.push_back(c / double(total));
  const std::string binning = u.binned.size() == W ? "" : ", per 1/" + std::to_string(u.binned.size()) + " of the fill order";
  const std::string evidence = " (chi-square p=" + std::to_string(u.p_value) + ", " + std::to_string(total) +
                               " evictions" + binning + ")";
  if (u.p_value > 0.01)
    res.policy = {true, "random", 1 - 0.01, Bound::Exact, "aperiodic misses; victims uniform over fill positions" + evidence};
  else
    res.policy = {true, "non_uniform", 1 - u.p_value, Bound::Exact,
                  "aperiodic misses; victims skewed over fill positions" + evidence};
}

// Victims of a set filled in order, nothing re-used, nearly all at the first filled line:
// the oldest goes first, as under LRU and FIFO, whose cyclic overflow should have missed every
// access. That it did not says a level in front served some loads (a randomly replacing
// constant L1 keeps lines of the cycle); the re-used line's trials then tell LRU from FIFO,
// with less confidence, since that level may have served the re-use too. Skewed victims read
// "non_uniform" at confidence 1 for an LRU constant L1.5 behind such an L1 (random devices).
constexpr double kOldestFirst = 0.9;
void oldest_first(PolicyResult& res, double share, double cyclic_misses, size_t kept, size_t judged) {
  const size_t clear = (judged * 9 + 9) / 10;
  const std::string why = "victims of a set filled in order: " + std::to_string(int(share * 100 + 0.5)) +
                          " % the first filled line (oldest first, as LRU and FIFO); the cyclic overflow missed " +
                          std::to_string(cyclic_misses).substr(0, 5) +
                          " of its loads, not all: a level in front served some; a re-used line survived a new one in " +
                          std::to_string(kept) + " of " + std::to_string(judged) + " sets";
  if (kept >= clear) {
    res.policy = {true, "lru", 0.7, Bound::Exact, why};
  } else if (judged - kept >= clear) {
    res.policy = {true, "fifo", 0.7, Bound::Exact, why};
  } else {
    res.policy = {};
    res.policy.note = why + ", which tells neither LRU nor FIFO";
  }
}

}  // namespace

PolicyResult find_policy(Measurer& m, int64_t line_bytes, int64_t sets, int64_t ways) {
  const Target& t = m.target();
  PolicyResult res;
  const uint64_t b = static_cast<uint64_t>(line_bytes), T = static_cast<uint64_t>(sets), W = static_cast<uint64_t>(ways);
  if (W < 2 || b < 12) {
    res.policy.note = "needs at least 2 ways and lines of 12 bytes or more";
    return res;
  }
  // Lines S apart share one set: T*b under modulo mapping; under a hashed mapping the
  // smallest larger power of two at which a set holds exactly W lines.
  calibrate_front_fill(m, b);
  uint64_t S = T * b;
  while (S <= (uint64_t(1) << 22) && most_lines_without_misses(m, S, T * W * b, b) != W) S *= 2;
  if (S > (uint64_t(1) << 22)) {
    res.policy.note = "found no stride at which lines share one set";
    return res;
  }
  // (a) W+1 lines of one set, chased cyclically: LRU and FIFO miss on every access, in a
  // periodic pattern; random-like policies keep some lines.
  m.ctx().progress(0.1, t.element + " policy: cyclic overflow");
  Footprint cyc;
  cyc.chase = front_filled_lines(t, W + 1, S, b);
  const uint64_t cycle = W + 1 + front_fill(t, W + 1, S, b).count;
  cyc.warmup_passes = 2;
  cyc.record_steps = 64 * cycle;
  cyc.miss_pattern = true;
  FootprintResult oc = m.run(cyc);
  if (cycle > W + 1) {  // the cycle's own lines only: the fill's hit where it lies
    std::vector<uint8_t> own;
    for (size_t i = 0; i < oc.miss.size(); ++i)
      if (i % cycle < W + 1) own.push_back(oc.miss[i]);
    oc.miss = own;
    oc.miss_fraction = own.empty() ? 0 : double(std::count(own.begin(), own.end(), 1)) / double(own.size());
  }
  const an::Periodicity per = an::periodicity(oc.miss);
  res.periodicity_strength = per.strength;
  const bool all_miss = oc.miss_fraction > 0.95;
  // (b) LRU against FIFO.
  m.ctx().progress(0.4, t.element + " policy: LRU against FIFO");
  const auto [kept, judged, run] = reused_line_trials(m, b, T, W, S);
  if (judged < std::min<size_t>(run, 8)) {
    res.policy.note = "only " + std::to_string(judged) + " LRU-against-FIFO trials could be judged";
    return res;
  }
  const size_t clear = (judged * 9 + 9) / 10;
  m.ctx().debug(t.element + " policy: stride " + fmt_bytes(S) + "; cyclic overflow of " + std::to_string(W + 1) +
                " lines misses " + std::to_string(oc.miss_fraction) + " of loads (periodicity " +
                std::to_string(per.strength) + "); a re-used line survived a new one in " + std::to_string(kept) +
                " of " + std::to_string(judged) + " sets");
  if (all_miss && kept >= clear) {
    res.policy = {true, "lru", 0.95, Bound::Exact, "cyclic overflow misses every access; a re-used line survives a new one"};
    return res;
  }
  if (all_miss && judged - kept >= clear) {
    res.policy = {true, "fifo", 0.95, Bound::Exact,
                  "cyclic overflow misses every access; a re-used line is still evicted first"};
    return res;
  }
  // (c) The victim census.
  m.ctx().progress(0.6, t.element + " policy: victim census");
  size_t total = 0;
  const std::vector<double> counts = victim_census(m, b, T, W, S, &total);
  if (total < 20) {
    res.policy.note = "too few evictions observed for a census (" + std::to_string(total) + ")";
    return res;
  }
  std::vector<double> row;
  for (size_t j = 0; j < counts.size(); ++j) {
    row.push_back(double(j));
    row.push_back(counts[j] / double(total));
  }
  m.ctx().raw(t.element + "-victims", {"fill_position", "victim_probability"}, row);
  judge_census(counts, total, res);
  if (!all_miss && counts[0] >= kOldestFirst * double(total))
    oldest_first(res, counts[0] / double(total), oc.miss_fraction, kept, judged);
  return res;
}

}  // namespace memtopo::cache
