// The lines of a cache of partitions whose homes a hash spreads (the L2 of an H100): one line
// of each chunk of the home granule, loaded twice from the measuring SM, hits at the near
// latency where the chunk is homed in the SM's own partition and later elsewhere. The chunks
// that hit near, in order, are the own partition's address space: a stride there singles out
// one of its sets (docs/cache-probes.md, "L2: sets and ways under hashed homes").
#include <algorithm>
#include <cmath>

#include "memtopo/cache/steps.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace {

constexpr uint64_t kLineStep = 256;

// Rounds of loads over the chunks whose load an interruption or a miss made unclear.
constexpr int kRounds = 3;

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, size_t(q * double(v.size())));
  return v[i];
}

// Raw cycles of the second load of one line in each chunk, batches of lines a quarter of the
// cache long (the first load brings them in, the second hits wherever they are homed).
std::vector<double> chunk_latencies(Measurer& m, const std::vector<uint64_t>& chunks, uint64_t chunk_bytes,
                                    uint64_t region_bytes, uint64_t batch) {
  std::vector<double> out(chunks.size(), 0.0);
  std::vector<Footprint> fs;
  for (size_t first = 0; first < chunks.size(); first += batch) {
    std::vector<uint64_t> offsets;
    // The line of each chunk 256 B further in than the chunk's before: lines at one offset of
    // chunks a power of two apart would fill a few sets only.
    for (size_t i = first; i < std::min(chunks.size(), first + batch); ++i)
      offsets.push_back(chunks[i] * chunk_bytes + chunks[i] * kLineStep % chunk_bytes);
    Footprint f;
    f.chase = recipes::from_byte_offsets(offsets, region_bytes);
    f.warmup_passes = 1;
    f.record_steps = offsets.size();
    fs.push_back(std::move(f));
  }
  const std::vector<FootprintResult> rs = m.run(fs);
  for (size_t b = 0; b < rs.size(); ++b) {
    const size_t first = b * batch;
    for (size_t i = 0; i < rs[b].index.size() && i < rs[b].latency.size(); ++i) {
      const uint64_t chunk = uint64_t(rs[b].index[i]) * 4 / chunk_bytes;
      const auto at = std::lower_bound(chunks.begin() + long(first), chunks.end(), chunk);
      if (at != chunks.end() && *at == chunk) out[size_t(at - chunks.begin())] = double(rs[b].latency[i]);
    }
  }
  return out;
}

}  // namespace

OwnLines find_own_partition_lines(Measurer& m, uint32_t partitions, uint64_t chunk_bytes, uint64_t reach_bytes,
                                  uint64_t cache_bytes, uint64_t line_bytes) {
  OwnLines o;
  if (partitions < 2 || chunk_bytes < line_bytes || chunk_bytes % kLineStep || line_bytes == 0) {
    o.why_not = "needs two partitions or more and a home granule of at least a line";
    return o;
  }
  // Enough chunks that a quarter more than the own partition's share covers the reach.
  const uint64_t wanted = (reach_bytes + chunk_bytes - 1) / chunk_bytes;
  const uint64_t count = wanted * partitions + wanted / 4 + 1;
  const uint64_t region = count * chunk_bytes;
  const uint64_t batch =
      std::max<uint64_t>(16, std::min<uint64_t>(m.target().max_record_steps, cache_bytes / 4 / line_bytes));
  std::vector<uint64_t> all(count);
  for (uint64_t c = 0; c < count; ++c) all[c] = c;
  std::vector<double> cycles = chunk_latencies(m, all, chunk_bytes, region, batch);
  // A load an interruption held (past the measurer's ceiling) or that missed tells nothing:
  // measured again.
  for (int round = 1; round < kRounds; ++round) {
    std::vector<uint64_t> unclear;
    for (uint64_t c = 0; c < count; ++c)
      if (cycles[c] <= 0 || cycles[c] > m.ceiling()) unclear.push_back(c);
    if (unclear.empty()) break;
    const std::vector<double> again = chunk_latencies(m, unclear, chunk_bytes, region, batch);
    for (size_t i = 0; i < unclear.size(); ++i) cycles[unclear[i]] = again[i];
  }
  std::vector<double> clear;
  for (double c : cycles)
    if (c > 0 && c <= m.ceiling()) clear.push_back(c);
  if (clear.size() < count * 9 / 10) {
    o.why_not = "the chunks' loads were interrupted too often to tell their homes";
    return o;
  }
  // The own partition holds about 1/n of the chunks: its level is the middle of the fastest
  // 1/n, the others' that of the rest.
  const double n = double(partitions);
  o.near_cycles = quantile(clear, 0.5 / n);
  o.far_cycles = quantile(clear, 1.0 / n + 0.5 * (1.0 - 1.0 / n));
  const double spread = quantile(clear, 0.9 / n) - quantile(clear, 0.1 / n);
  if (o.far_cycles - o.near_cycles < std::max(8.0, 4.0 * spread)) {
    o.why_not = "the chunks' hit latencies do not split into a near and a far level (" +
                std::to_string(std::lround(o.near_cycles)) + " and " + std::to_string(std::lround(o.far_cycles)) +
                " raw cycles)";
    return o;
  }
  const double threshold = 0.5 * (o.near_cycles + o.far_cycles);
  std::vector<uint64_t> near;
  for (uint64_t c = 0; c < count; ++c) {
    // An unclear chunk left out would shift every later line by a chunk: none may remain.
    if (cycles[c] <= 0 || cycles[c] > m.ceiling()) {
      o.why_not = "a chunk's load stayed interrupted in " + std::to_string(kRounds) + " rounds";
      return o;
    }
    if (cycles[c] < threshold) near.push_back(c);
  }
  const double share = double(near.size()) / double(count);
  if (share < 0.6 / n || share > 1.4 / n) {
    o.why_not = std::to_string(near.size()) + " of " + std::to_string(count) + " chunks hit near, not about 1 in " +
                std::to_string(partitions);
    return o;
  }
  near.resize(std::min<size_t>(near.size(), wanted));
  o.map.chunk_bytes = chunk_bytes;
  o.map.region_bytes = region;
  o.map.chunks = std::move(near);
  return o;
}

}  // namespace memtopo::cache
