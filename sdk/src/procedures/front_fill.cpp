#include "front_fill.hpp"

#include <algorithm>
#include <numeric>
#include <vector>

#include "procedure_util.hpp"

namespace memtopo::cache {
namespace {

// The front's fill for any k: what one line needs.
uint64_t wanted_fillers(const Target::Front& f, uint64_t k) {
  const uint64_t cycle = f.random ? 4 * f.ways : f.ways + 1;
  return cycle > k ? cycle - k : 0;
}

}  // namespace

FrontFill front_fill(const Target& t, uint64_t k, uint64_t stride, uint64_t line_bytes) {
  const Target::Front& f = t.front;
  FrontFill out;
  if (!f.set_stride_bytes || !f.ways || !line_bytes || !t.line_map.empty()) return out;
  out.spacing_bytes = std::lcm(f.set_stride_bytes, line_bytes);
  if (stride % (2 * out.spacing_bytes)) return {};
  out.count = wanted_fillers(f, k);
  if (f.most_fillers) out.count = std::min(out.count, f.most_fillers);
  // Within the path's reach, past which a chase cannot go.
  const uint64_t reach = planned_reach_bytes(t);
  if (reach && out.count && (2 * out.count - 1) * out.spacing_bytes >= reach)
    out.count = (reach / out.spacing_bytes + 1) / 2 - 1;
  return out;
}

recipes::Chase front_filled_lines(const Target& t, uint64_t k, uint64_t stride, uint64_t line_bytes) {
  const FrontFill fill = front_fill(t, k, stride, line_bytes);
  if (!fill.count) return mapped_lines(t, k, stride);
  std::vector<uint64_t> offsets;
  offsets.reserve(k + fill.count);
  for (uint64_t i = 0; i < k; ++i) offsets.push_back(i * stride);
  for (uint64_t j = 0; j < fill.count; ++j) offsets.push_back((2 * j + 1) * fill.spacing_bytes);
  return recipes::from_byte_offsets(offsets, std::max(k * stride, 2 * fill.count * fill.spacing_bytes));
}

void calibrate_front_fill(Measurer& m, uint64_t line_bytes) {
  Target::Front f = m.target().front;
  if (!f.set_stride_bytes || !f.ways) return;
  f.most_fillers = 0;
  m.set_front(f);
  const uint64_t spacing = std::lcm(f.set_stride_bytes, line_bytes);
  uint64_t most = front_fill(m.target(), 1, 2 * spacing, line_bytes).count;
  while (most > 0) {
    f.most_fillers = most;
    m.set_front(f);
    const recipes::Chase c = front_filled_lines(m.target(), 1, 2 * spacing, line_bytes);
    if (!m.run(counted_footprint(c, 2, 4, !m.target().shared_between_sms)).significant) break;
    most /= 2;
  }
  // None fit: the scans run without fillers (most_fillers 0 would mean no cap).
  if (most == 0) f = {};
  m.set_front(f);
}

}  // namespace memtopo::cache
