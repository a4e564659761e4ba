// memtopo probe SDK: checking what a probe believes its work moved against what the hardware
// counters (the simulated GPU: its model) counted at each level (docs/measurement.md,
// "Counters"). Header-only: nothing here is part of a shared library's ABI.
//
//   const memtopo::Counted c = ctx.backend().count([&] { run_point(); });
//   memtopo::Believed b;
//   b.l2_read_bytes = bytes;          // every read asked the L2
//   b.dram_read_bytes = 0;            // and the L2 held it all
//   const memtopo::Verdict v = memtopo::compare_counts(c.counts, b, memtopo::CountedLevel::L2Read);
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "memtopo/errors.hpp"
#include "memtopo/measure.hpp"

namespace memtopo {

// Bytes a probe believes counted work moved at each level (negative: no claim about it).
struct Believed {
  double l1_hit_bytes = -1;    // global loads the L1 answered
  double l2_read_bytes = -1;   // read sectors the SMs asked of the L2
  double l2_read_hit_bytes = -1;  // of them, the L2 held
  double l2_write_bytes = -1;
  double l2_to_sm_bytes = -1;  // bytes the L2 side delivered to the SMs
  double dram_read_bytes = -1;
  double dram_write_bytes = -1;
  double dram_bytes = -1;      // read and written together
  // The traffic a difference is a share of (0: the largest claim): a claim of no DRAM traffic
  // under an L2 stream is checked against the stream's bytes.
  double of_bytes = 0;
};

enum class CountedLevel { L1Hit, L2Read, L2ReadHit, L2Write, L2ToSm, DramRead, DramWrite, Dram };

struct Verdict {
  bool agrees = false;
  // Every claim had its count. A claim whose level went uncounted (not asked for, or a counter
  // that gave no number) neither refutes nor confirms: the value is unverified, not wrong.
  bool complete = true;
  double counted_bytes = 0;  // at the level the value names
  std::string note;          // every claim against its count
  std::string disagreement;  // the first claim the counts refute
};

namespace detail {
inline std::string gbytes(double b) {
  char s[48];
  std::snprintf(s, sizeof s, "%.4g GB", b / 1e9);
  return s;
}
inline double counted_at(const Counts& c, CountedLevel l) {
  switch (l) {
    case CountedLevel::L1Hit: return c.l1_load_hit_bytes;
    case CountedLevel::L2Read: return c.l2_read_bytes;
    case CountedLevel::L2ReadHit: return c.l2_read_hit_bytes;
    case CountedLevel::L2Write: return c.l2_write_bytes;
    case CountedLevel::L2ToSm: return c.l2_to_sm_bytes;
    case CountedLevel::DramRead: return c.dram_read_bytes;
    case CountedLevel::DramWrite: return c.dram_write_bytes;
    default: return c.dram_read_bytes < 0 || c.dram_write_bytes < 0 ? -1 : c.dram_read_bytes + c.dram_write_bytes;
  }
}
inline const char* level_name(CountedLevel l) {
  switch (l) {
    case CountedLevel::L1Hit: return "L1 load hits";
    case CountedLevel::L2Read: return "L2 reads";
    case CountedLevel::L2ReadHit: return "L2 read hits";
    case CountedLevel::L2Write: return "L2 writes";
    case CountedLevel::L2ToSm: return "L2-to-SM bytes";
    case CountedLevel::DramRead: return "DRAM reads";
    case CountedLevel::DramWrite: return "DRAM writes";
    default: return "DRAM reads and writes";
  }
}
}  // namespace detail

// Each claim of `b` against its count: they agree where every count lies within `share` of the
// traffic (b.of_bytes, else the largest claim) of the claim. A claim whose count was not taken
// (the count asked for other levels) refutes nothing but verifies nothing either: no agreement.
inline Verdict compare_counts(const Counts& c, const Believed& b, CountedLevel primary, double share = 0.05) {
  struct Claim {
    CountedLevel level;
    double believed;
  };
  std::vector<Claim> claims;
  const std::pair<CountedLevel, double> all[] = {
      {CountedLevel::L1Hit, b.l1_hit_bytes},       {CountedLevel::L2Read, b.l2_read_bytes},
      {CountedLevel::L2ReadHit, b.l2_read_hit_bytes},
      {CountedLevel::L2Write, b.l2_write_bytes},   {CountedLevel::L2ToSm, b.l2_to_sm_bytes},
      {CountedLevel::DramRead, b.dram_read_bytes}, {CountedLevel::DramWrite, b.dram_write_bytes},
      {CountedLevel::Dram, b.dram_bytes}};
  double scale = b.of_bytes;
  for (const auto& [level, bytes] : all)
    if (bytes >= 0) {
      claims.push_back({level, bytes});
      if (b.of_bytes <= 0) scale = std::max(scale, bytes);
    }
  Verdict v;
  v.counted_bytes = detail::counted_at(c, primary);
  v.agrees = !claims.empty() && scale > 0;
  for (const Claim& k : claims) {
    const double counted = detail::counted_at(c, k.level), off = counted - k.believed;
    if (!(counted >= 0) || !std::isfinite(counted)) {  // not asked for, or no number came back
      const std::string line = std::string(detail::level_name(k.level)) + " not counted";
      v.note += (v.note.empty() ? "" : "; ") + line;
      if (v.disagreement.empty()) v.disagreement = line;
      v.agrees = false;
      v.complete = false;
      continue;
    }
    char pct[32];
    std::snprintf(pct, sizeof pct, " (%+.1f %% of %s)", 100.0 * off / std::max(scale, 1.0), detail::gbytes(scale).c_str());
    const std::string line = std::string(detail::level_name(k.level)) + " " + detail::gbytes(counted) + " counted, " +
                             detail::gbytes(k.believed) + " believed" + pct;
    v.note += (v.note.empty() ? "" : "; ") + line;
    if (!(std::fabs(off) <= share * scale)) {
      if (v.disagreement.empty()) v.disagreement = line;
      v.agrees = false;
    }
  }
  if (claims.empty()) v.disagreement = "nothing believed to compare";
  return v;
}

inline void mark_verified(ResultInfo& info, const Verdict& v, const std::string& how) {
  info.verified = "counters";
  info.counted_bytes = v.counted_bytes;
  info.verify_note = how + ": " + v.note;
}
inline void mark_unverified(ResultInfo& info, const std::string& why) {
  info.verified = "unverified";
  info.counted_bytes = 0;
  info.verify_note = why;
}

}  // namespace memtopo
