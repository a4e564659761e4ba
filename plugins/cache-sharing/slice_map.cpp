// The L2 slice map from an SM x line matrix (slice_map.hpp). On an H100 an SM term plus a line
// term leaves 16 cycles s.d.; one rank-1 factor, an SM-side sign times a line-side sign,
// explains 86 % of that (docs/results/log/h100.md, "L2 latency by SM and line"). The factor is the
// first singular pair of the doubly centred matrix, found by power iteration.
#include "slice_map.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cache_sharing {
namespace {

using Matrix = std::vector<std::vector<double>>;

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + long(h), v.end());
  const double hi = v[h];
  if (v.size() % 2) return hi;
  return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + long(h)));
}

// The matrix less its row and column means (an SM term plus a line term): the residual.
Matrix doubly_centred(const Matrix& m) {
  const size_t rows = m.size(), cols = m[0].size();
  std::vector<double> row(rows, 0), col(cols, 0);
  double all = 0;
  for (size_t s = 0; s < rows; ++s)
    for (size_t l = 0; l < cols; ++l) row[s] += m[s][l], col[l] += m[s][l], all += m[s][l];
  for (double& r : row) r /= double(cols);
  for (double& c : col) c /= double(rows);
  all /= double(rows * cols);
  Matrix r(rows, std::vector<double>(cols));
  for (size_t s = 0; s < rows; ++s)
    for (size_t l = 0; l < cols; ++l) r[s][l] = m[s][l] - row[s] - col[l] + all;
  return r;
}

double norm(const std::vector<double>& v) {
  double n = 0;
  for (double x : v) n += x * x;
  return std::sqrt(n);
}

struct Factor {
  std::vector<double> sm, line;  // unit vectors
  double singular = 0;
};

// The first singular pair by power iteration from the row of largest norm: deterministic, and
// a few dozen rounds suffice where the first factor stands out (the only case that is used).
Factor first_factor(const Matrix& r) {
  const size_t rows = r.size(), cols = r[0].size();
  size_t start = 0;
  for (size_t s = 1; s < rows; ++s)
    if (norm(r[s]) > norm(r[start])) start = s;
  Factor f{std::vector<double>(rows, 0), r[start], 0};
  for (int round = 0; round < 200; ++round) {
    const double n = norm(f.line);
    if (n == 0) return f;
    for (double& x : f.line) x /= n;
    for (size_t s = 0; s < rows; ++s) {
      double d = 0;
      for (size_t l = 0; l < cols; ++l) d += r[s][l] * f.line[l];
      f.sm[s] = d;
    }
    const double u = norm(f.sm);
    if (u == 0) return f;
    for (double& x : f.sm) x /= u;
    std::vector<double> next(cols, 0);
    for (size_t s = 0; s < rows; ++s)
      for (size_t l = 0; l < cols; ++l) next[l] += r[s][l] * f.sm[s];
    const double previous = f.singular;
    f.singular = norm(next);
    f.line = std::move(next);
    if (round > 8 && std::fabs(f.singular - previous) <= 1e-12 * f.singular) break;
  }
  const double n = norm(f.line);
  if (n > 0)
    for (double& x : f.line) x /= n;
  return f;
}

// The largest power of two, from twice the stride, whose aligned runs of lines nine in ten
// hold one class; a run that holds one class holds it in every half too, so the first failure
// ends the search.
void find_granule(SliceMap& m, uint64_t stride) {
  const size_t lines = m.class_of_line.size();
  m.granule_bytes = stride;
  for (size_t per = 2; per * 2 <= lines; per *= 2) {
    size_t uniform = 0, runs = 0;
    for (size_t first = 0; first + per <= lines; first += per, ++runs) {
      const auto b = m.class_of_line.begin() + long(first);
      uniform += std::all_of(b, b + long(per), [&](int64_t c) { return c == *b; });
    }
    if (uniform * 10 < runs * 9) break;
    m.granule_bytes = per * stride;
    m.granule_exact = true;
  }
}

void per_sm_latencies(const Matrix& m, SliceMap& out) {
  std::vector<double> gaps;
  size_t agree = 0;
  for (size_t s = 0; s < m.size(); ++s) {
    std::vector<double> same, other;
    for (size_t l = 0; l < m[s].size(); ++l) (out.class_of_line[l] == out.class_of_sm[s] ? same : other).push_back(m[s][l]);
    out.same_class_cycles.push_back(median_of(same));
    out.other_class_cycles.push_back(median_of(other));
    gaps.push_back(out.other_class_cycles.back() - out.same_class_cycles.back());
    agree += gaps.back() > 0;
  }
  out.gap_cycles = median_of(gaps);
  out.sms_agreeing_fraction = m.empty() ? 0 : double(agree) / double(m.size());
}

}  // namespace

std::string class_fingerprint(const std::vector<int64_t>& classes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < classes.size(); i += 4) {
    unsigned d = 0;
    for (size_t k = 0; k < 4; ++k) d = (d << 1) | (i + k < classes.size() && classes[i + k] ? 1u : 0u);
    out.push_back(digits[d]);
  }
  return out;
}

SliceMap slice_map(const Matrix& cycles, uint64_t stride_bytes, double min_fraction) {
  SliceMap out;
  if (cycles.size() < 2 || cycles[0].size() < 4) {
    out.why_not = "fewer than 2 SMs or 4 lines";
    return out;
  }
  for (const auto& row : cycles)
    if (row.size() != cycles[0].size()) {
      out.why_not = "the SMs read different numbers of lines";
      return out;
    }
  const Matrix r = doubly_centred(cycles);
  double total = 0;
  for (const auto& row : r)
    for (double x : row) total += x * x;
  const double cells = double(r.size() * r[0].size());
  out.additive_residual_sd = std::sqrt(total / cells);
  if (total <= 1e-9 * cells) {
    out.why_not = "every read is an SM term plus a line term: no SM reads some lines faster than other SMs do";
    return out;
  }
  const Factor f = first_factor(r);
  const double explained = std::min(f.singular * f.singular, total);
  out.variance_fraction = explained / total;
  out.factor_residual_sd = std::sqrt((total - explained) / cells);
  // Canonical signs: SM 0 in class 0, and line class 0 the lines class-0 SMs read faster (where
  // SM 0's side of the factor times the line's side is negative).
  const bool sm0_positive = f.sm[0] >= 0;
  for (double u : f.sm) out.class_of_sm.push_back((u >= 0) == sm0_positive ? 0 : 1);
  for (double v : f.line) out.class_of_line.push_back((sm0_positive ? v < 0 : v > 0) ? 0 : 1);
  for (int64_t c : out.class_of_sm) ++out.sm_counts[size_t(c)];
  for (int64_t c : out.class_of_line) ++out.line_counts[size_t(c)];
  out.fingerprint = class_fingerprint(out.class_of_sm);
  per_sm_latencies(cycles, out);
  find_granule(out, stride_bytes);
  char buf[160];
  if (out.variance_fraction < min_fraction) {
    std::snprintf(buf, sizeof buf, "the first factor takes %.0f %% of what an SM term plus a line term leave (%.1f "
                  "cycles s.d.), under %.0f %%: no division of SMs by lines stands out",
                  100 * out.variance_fraction, out.additive_residual_sd, 100 * min_fraction);
    out.why_not = buf;
  } else if (!out.sm_counts[0] || !out.sm_counts[1] || !out.line_counts[0] || !out.line_counts[1]) {
    out.why_not = "the first factor puts every SM or every line on one side";
  } else if (out.sms_agreeing_fraction < 0.9) {
    std::snprintf(buf, sizeof buf, "only %.0f %% of the SMs read their own class's lines faster",
                  100 * out.sms_agreeing_fraction);
    out.why_not = buf;
  }
  return out;
}

}  // namespace cache_sharing
