// Occupancy: the size of a shared cache as the lines it holds under loads to random lines
// (hit fraction x lines, whatever the replacement policy), measured at several load rates
// and extrapolated to an infinite rate where other clients displace lines over time.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "memtopo/analysis.hpp"
#include "memtopo/cache/steps.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace an = memtopo::analysis;
namespace {

struct Held {
  double lines = 0, se = 0, cycles_per_load = 0;
};

std::string describe(const Rate& r) {
  if (r.pump_warps) return "one stream with a pump of " + std::to_string(r.pump_total()) + " lanes";
  return std::to_string(r.streams) + (r.streams == 1 ? " stream" : " streams") + (r.gap_cycles ? " with a gap" : "");
}

bool agree(const Held& x, const Held& y) { return std::fabs(x.lines - y.lines) <= 3 * std::hypot(x.se, y.se); }

// Random loads over footprints of whole lines, each measurement kept in the result's series.
class LinesHeld {
 public:
  LinesHeld(Measurer& m, uint64_t line, OccupancyResult& res) : m_(m), line_(line), res_(res) {}

  // Lines held of `footprint` at rate `r`, and whether any load missed.
  std::pair<Held, bool> measure(uint64_t footprint, const Rate& r, uint64_t loads, uint64_t seed, double progress) {
    const uint64_t n = footprint / line_;
    m_.ctx().progress(progress, m_.target().element + " occupancy: " + describe(r) + " over " + fmt_bytes(n * line_));
    // Warm-up: every line drawn a few times (the pump draws most of them when there is one).
    const uint64_t warm = r.pump_warps ? std::max<uint64_t>(n / 8, 64 * uint64_t(r.probe_loads)) : 2 * n;
    const FootprintResult o = m_.run_random(n * line_, line_, warm, loads, seed, r);
    // A hit that noise made slow counts as a miss, as often as the reference's hits were slow
    // (stray_slow_rate): the hit fraction is divided by what that leaves. Random devices with
    // 0.4 % of loads interrupted held 0.43 % fewer lines than their L2 (8157 of 8192).
    const double stray = std::min(m_.stray_slow_rate(), 0.5);
    const double h = o.loads ? std::min(1.0, (1.0 - o.miss_fraction) / (1.0 - stray)) : 0.0;
    // Binomial: the loads are independent draws.
    const double se = double(n) * an::proportion_standard_error(h, double(std::max<size_t>(o.loads, 1)));
    res_.footprints.push_back(n * line_);
    res_.streams.push_back(r.streams);
    res_.gap_cycles.push_back(r.gap_cycles);
    res_.pump_lanes.push_back(r.pump_total());
    res_.cycles_per_load.push_back(o.cycles_per_load);
    res_.lines_held.push_back(double(n) * h);
    res_.standard_errors.push_back(se);
    return {Held{double(n) * h, se, o.cycles_per_load}, o.significant};
  }
  void write_raw() const {
    std::vector<double> row;
    for (size_t i = 0; i < res_.footprints.size(); ++i)
      for (double v : {double(res_.footprints[i]), double(res_.streams[i]), double(res_.gap_cycles[i]),
                       double(res_.pump_lanes[i]), res_.cycles_per_load[i], res_.lines_held[i], res_.standard_errors[i]})
        row.push_back(v);
    m_.ctx().raw(m_.target().element + "-occupancy",
                 {"footprint_bytes", "streams", "gap_cycles", "pump_lanes", "cycles_per_load", "lines_held",
                  "standard_error_lines"},
                 row);
  }

 private:
  Measurer& m_;
  uint64_t line_;
  OccupancyResult& res_;
};

// The rates faster than one stream, fastest first: a pump (its share of the time about the
// timed stream's) where the backend has one, else several timed streams, whose hits queue
// behind each other's loads (some then pass the threshold).
std::vector<Rate> fast_rates(const Backend& backend, const Held& one_stream) {
  std::vector<Rate> fast;
  if (backend.has(MT_CAP_PUMP)) {
    const uint32_t warps = std::min<uint32_t>(16, backend.pump_warps_max());
    Rate p;
    p.pump_warps = warps;
    p.pump_lanes = 32;
    p.pump_cycles = uint32_t(std::min(1e9, std::ceil(double(p.probe_loads) * one_stream.cycles_per_load)));
    fast.push_back(p);
    Rate q = p;  // an eighth of the lanes
    q.pump_warps = std::max<uint32_t>(1, warps / 8);
    q.pump_lanes = warps >= 8 ? 32 : 4;
    fast.push_back(q);
    return fast;
  }
  for (uint32_t k = std::min<uint32_t>(8, backend.streams_max()); k >= 2; k /= 2) {
    Rate r;
    r.streams = k;
    fast.push_back(r);
  }
  return fast;
}

// The series (cycles per load, lines held, standard error, how) the extrapolation reads.
struct Series {
  std::vector<double> t, y, e;
  std::vector<std::string> how;
  void add(const Held& h, const Rate& r) {
    t.push_back(h.cycles_per_load);
    y.push_back(h.lines);
    e.push_back(h.se);
    how.push_back(describe(r));
  }
};

// The size the fit says: the first miss, a candidate, or the lines held; with its note.
void settle(Measured<int64_t>& m, const an::RateFit& fit, const Series& s, uint64_t first, uint64_t line,
            uint64_t footprint, bool plateau, const std::vector<SizeCandidate>& candidates) {
  const double lines = fit.limit, se = fit.standard_error;
  std::ostringstream note;
  note.setf(std::ios::fixed);
  note.precision(1);
  note << "lines held under loads to uniformly random lines (hit fraction x lines) over " << fmt_bytes(footprint);
  for (size_t i = 0; i < s.t.size(); ++i)
    note << (i ? ", " : ": ") << s.y[i] << " +- " << s.e[i] << " at " << s.t[i] << " cycles per load (" << s.how[i] << ")";
  note << " (lines of " << line << " B)";
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
  // Of the candidates that agree, the one nearest the lines held.
  auto off = [&](int64_t bytes) { return std::fabs(lines - double(bytes) / double(line)); };
  auto c = candidates.end();
  for (auto it = candidates.begin(); it != candidates.end(); ++it) {
    const bool agrees = it->bytes > 0 && within_three_se(double(it->bytes) / double(line));
    if (agrees && (c == candidates.end() || off(it->bytes) < off(c->bytes))) c = it;
  }
  // The first miss, where it agrees and no candidate does: other clients' lines make it come
  // a little early, a random victim a few lines late (a random device's 1049632 B for its
  // 1 MiB L2, nearer the lines held than the API's size, both within their error).
  if (within_three_se(double(first) / double(line)) && c == candidates.end()) {
    m.value = int64_t(first);
    m.confidence = 0.95;
    note << "; agrees with the first miss of the cyclic sweep, which is the size";
  } else if (c != candidates.end()) {
    m.value = c->bytes;
    m.confidence = std::min(confidence, 0.9);
    note << "; agrees within three standard errors with " << c->source << " (" << c->bytes << " B), which is reported";
  } else {
    m.value = int64_t(std::llround(lines)) * int64_t(line);
    m.confidence = confidence;
    note << (plateau ? "" : " (still growing with the footprint)") << "; not exact to the line; the cyclic sweep misses from "
         << first << " B on (conflict misses: the set index fills sets unevenly)";
    for (const SizeCandidate& x : candidates) note << "; " << x.source << ": " << x.bytes << " B";
  }
  m.note = note.str();
}

}  // namespace

OccupancyResult find_occupancy(Measurer& meter, int64_t first_miss_bytes, int64_t full_miss_bytes, int64_t line_bytes,
                               const std::vector<SizeCandidate>& candidates) {
  const Target& t = meter.target();
  OccupancyResult res;
  Measured<int64_t>& m = res.size_bytes;
  const uint64_t L = uint64_t(line_bytes), first = uint64_t(first_miss_bytes);
  auto first_miss_only = [&](const std::string& why) {
    m = {true, first_miss_bytes, 0.5, Bound::Exact,
         "first miss of the cyclic sweep (" + std::to_string(first) + " B); occupancy not measured: " + why};
    return res;
  };
  if (L == 0) return first_miss_only("no line size");
  if (first < L) return first_miss_only("the first miss is below one line");
  const Backend& backend = meter.ctx().backend();
  if (!backend.has(MT_CAP_RANDOM | MT_CAP_COUNTS)) return first_miss_only("the backend has no counted random loads");
  // Every set full: twice the first miss, and past where every cyclic access misses.
  uint64_t F = std::max<uint64_t>(2 * first, uint64_t(std::max<int64_t>(full_miss_bytes, 0)) * 5 / 4);
  const uint64_t most = std::min<uint64_t>(t.max_footprint_bytes ? t.max_footprint_bytes : kArrayBytes, kArrayBytes);
  if (F > most) return first_miss_only("the footprint it needs (" + fmt_bytes(F) + ") exceeds " + fmt_bytes(most));
  // 64 loads per line give a standard error near 0.1 % of the lines held; at most the
  // target's. (min, then max: std::clamp is undefined when the target allows fewer than 2^20.)
  const uint64_t base = std::max<uint64_t>(std::min<uint64_t>(64 * (F / L), t.occupancy_loads), uint64_t(1) << 20);
  LinesHeld held(meter, L, res);
  const Rate one;
  auto [a, missed] = held.measure(F, one, base / 2, 1, 0.1);
  if (!missed) {
    m = {true, int64_t(F / L * L), 0.7, Bound::AtLeast, "random loads over " + fmt_bytes(F / L * L) + " all hit"};
    return res;
  }
  // Whether the rate matters (other clients displace lines over time, so the slower the
  // loads come, the fewer lines are held): one stream against one that waits 8 hits after
  // each load. Where it matters, faster rates and an extrapolation to an infinite rate.
  Rate slow = one;
  slow.gap_cycles = uint32_t(std::llround(8 * meter.hit_latency_raw()));
  const bool paced = backend.has(MT_CAP_STREAMS);
  Held g{};
  if (paced) g = held.measure(F, slow, base / 16, 2, 0.2).first;
  const bool rate_dependent = paced && !agree(a, g);
  const std::vector<Rate> fast = rate_dependent ? fast_rates(backend, a) : std::vector<Rate>{};
  // The lines held must not grow past F (every set full): the rate the size is read at, at
  // F and 1.25 F; F moves up (three times at most) while they grow.
  const Rate top = fast.empty() ? one : fast[0];
  Held at_top = fast.empty() ? a : held.measure(F, top, base / 2, 3, 0.3).first;
  bool plateau = false, moved = false;
  Held beyond{};
  for (int more = 0; more < 3; ++more) {
    const uint64_t G = F + F / 4;
    if (G > most) break;
    beyond = held.measure(G, top, base / 4, 4 + uint64_t(more), 0.4 + 0.05 * more).first;
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
  Series s;
  s.add(at_top, top);
  if (plateau) s.add(beyond, top);
  if (rate_dependent) {
    for (size_t k = 1; k < fast.size(); ++k) s.add(held.measure(F, fast[k], base / 4, 10 + k, 0.6).first, fast[k]);
    if (moved) {
      a = held.measure(F, one, base / 2, 20, 0.8).first;
      g = held.measure(F, slow, base / 16, 21, 0.9).first;
    }
    s.add(a, one);
    s.add(g, slow);
  } else if (paced && !moved) {
    s.add(g, slow);  // the same at both rates: both count
  }
  held.write_raw();
  settle(m, an::extrapolate_to_infinite_rate(s.t, s.y, s.e), s, first, L, F / L * L, plateau, candidates);
  return res;
}

}  // namespace memtopo::cache
