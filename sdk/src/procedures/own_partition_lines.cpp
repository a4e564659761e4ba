// The lines of a cache of partitions whose homes a hash spreads (the L2 of an H100): lines of
// each chunk of the home granule, loaded twice from the measuring SM, hit at the near latency
// where the chunk is homed in the SM's own partition and later elsewhere. The chunks that hit
// near, in order, are the own partition's address space: a stride there singles out one of its
// sets (docs/cache-probes.md, "The L2 under hashed partition homes").
#include <algorithm>
#include <cmath>

#include "memtopo/cache/steps.hpp"
#include "procedure_util.hpp"

namespace memtopo::cache {
namespace {

constexpr uint64_t kLineStep = 256;

// The line of each chunk at a place of its own (a fixed mix of the chunk's number): lines at
// one offset of chunks a power of two apart fill a few sets only, and lines a fixed step
// further in each chunk repeat their sets every chunk/256 chunks (a 512 KiB random device's
// second loads missed, and a near chunk read as far moved every later line by a chunk).
uint64_t line_in_chunk(uint64_t chunk, uint64_t chunk_bytes) {
  uint64_t x = chunk + 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x % (chunk_bytes / kLineStep) * kLineStep;
}

// Rounds of loads over the chunks whose load an interruption or a miss made unclear.
constexpr int kRounds = 4;

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, size_t(q * double(v.size())));
  return v[i];
}

// Raw cycles of the second load of a line in each chunk, batches of lines a quarter of the
// cache long (the first load brings them in, the second hits wherever they are homed).
std::vector<double> chunk_latencies(Measurer& m, const std::vector<uint64_t>& chunks, uint64_t chunk_bytes,
                                    uint64_t region_bytes, uint64_t batch) {
  std::vector<double> out(chunks.size(), 0.0);
  std::vector<Footprint> fs;
  for (size_t first = 0; first < chunks.size(); first += batch) {
    std::vector<uint64_t> offsets;
    // Two lines of each chunk, one after the other: the second finds the page's translation
    // that the first brought in, and its time alone is kept (a page's first load paid a TLB
    // miss: 53 cycles over the near level on a random device, read as a third level).
    for (size_t i = first; i < std::min(chunks.size(), first + batch); ++i) {
      const uint64_t a = line_in_chunk(chunks[i], chunk_bytes);
      offsets.push_back(chunks[i] * chunk_bytes + a);
      offsets.push_back(chunks[i] * chunk_bytes + (a + chunk_bytes / 2) % chunk_bytes);
    }
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
      // A chunk's second line comes later in the chase and overwrites its first.
      if (at != chunks.end() && *at == chunk) out[size_t(at - chunks.begin())] = double(rs[b].latency[i]);
    }
  }
  return out;
}

}  // namespace

OwnLines find_own_partition_lines(Measurer& m, uint32_t partitions, uint64_t chunk_bytes, uint64_t reach_bytes,
                                  uint64_t cache_bytes, uint64_t line_bytes) {
  OwnLines o;
  if (partitions < 2 || chunk_bytes < std::max(line_bytes, 2 * kLineStep) || chunk_bytes % (2 * kLineStep) || line_bytes == 0) {
    o.why_not = "needs two partitions or more and a home granule of at least a line";
    return o;
  }
  // Enough chunks that a quarter more than the own partition's share covers the reach.
  const uint64_t wanted = (reach_bytes + chunk_bytes - 1) / chunk_bytes;
  const uint64_t count = wanted * partitions + wanted / 4 + 1;
  const uint64_t region = count * chunk_bytes;
  const uint64_t batch =
      std::max<uint64_t>(16, std::min<uint64_t>(m.target().max_record_steps / 2, cache_bytes / 4 / line_bytes / 2));
  std::vector<uint64_t> all(count);
  for (uint64_t c = 0; c < count; ++c) all[c] = c;
  std::vector<double> cycles = chunk_latencies(m, all, chunk_bytes, region, batch);
  // A load an interruption held (past the measurer's ceiling), one that missed (slower than the
  // far hits by half the gap to the near ones) and one between the levels (noise: a near load
  // 60 cycles late) tell nothing: measured again.
  const double n = double(partitions);
  double near_level = 0, far_level = m.ceiling();
  auto unclear_at = [&](double c) {
    const double gap = far_level - near_level;
    return c <= 0 || c > m.ceiling() || c > far_level + std::max(8.0, 0.5 * gap) ||
           (c > near_level + 0.25 * gap && c < far_level - 0.25 * gap);
  };
  for (int round = 1; round <= kRounds; ++round) {
    std::vector<double> seen;
    for (double c : cycles)
      if (c > 0 && c <= m.ceiling()) seen.push_back(c);
    if (!seen.empty()) {
      near_level = quantile(seen, 0.5 / n);
      far_level = quantile(seen, 1.0 / n + 0.5 * (1.0 - 1.0 / n));
    }
    if (round == kRounds) break;
    std::vector<uint64_t> unclear;
    for (uint64_t c = 0; c < count; ++c)
      if (unclear_at(cycles[c])) unclear.push_back(c);
    if (unclear.empty()) break;
    const std::vector<double> again = chunk_latencies(m, unclear, chunk_bytes, region, batch);
    for (size_t i = 0; i < unclear.size(); ++i) cycles[unclear[i]] = again[i];
  }
  std::vector<double> clear;
  for (double c : cycles)
    if (!unclear_at(c)) clear.push_back(c);
  if (clear.size() < count * 9 / 10) {
    o.why_not = "the chunks' loads were interrupted too often to tell their homes";
    return o;
  }
  // The own partition holds about 1/n of the chunks: its level is the middle of the fastest
  // 1/n, the others' that of the rest.
  o.near_cycles = quantile(clear, 0.5 / n);
  o.far_cycles = quantile(clear, 1.0 / n + 0.5 * (1.0 - 1.0 / n));
  const double spread = quantile(clear, 0.9 / n) - quantile(clear, 0.1 / n);
  if (o.far_cycles - o.near_cycles < std::max(8.0, 2.0 * spread)) {
    o.why_not = "the chunks' hit latencies do not split into a near and a far level (" +
                std::to_string(std::lround(o.near_cycles)) + " and " + std::to_string(std::lround(o.far_cycles)) +
                " raw cycles)";
    return o;
  }
  const double threshold = 0.5 * (o.near_cycles + o.far_cycles);
  std::vector<uint64_t> near;
  for (uint64_t c = 0; c < count; ++c) {
    // An unclear chunk left out would shift every later line by a chunk: none may remain.
    if (unclear_at(cycles[c])) {
      o.why_not = "a chunk's load stayed interrupted or missed in " + std::to_string(kRounds) + " rounds";
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
