// links/copies: what the GPU's links move. Copies of page-locked host memory to and from the GPU
// (from the GPU's own NUMA node and from the farthest), and from this GPU to each peer it
// reaches, timed one by one by the backend (CUDA events; the simulated GPU prices them from its
// description). The rate is the bytes over the median copy's time.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "link_verdicts.hpp"
#include "probes.hpp"

namespace links {

namespace {

constexpr uint64_t kLatencyBytes = 8;
// Small copies are cheap and their times scatter with the host's state: many, for a median
// that holds from run to run (docs/results/links.md).
constexpr uint32_t kLatencyCopies = 200;
constexpr uint32_t kMostPeers = 16;

std::string gbps(double bytes_per_second) {
  char s[32];
  std::snprintf(s, sizeof s, "%.2f", bytes_per_second / 1e9);
  return s;
}

struct Series {
  std::vector<double> rows;  // direction, numa_node, bytes, median_ns, p10_ns, p90_ns, bytes_per_second
};

// The copies of one direction and host node: a sweep of sizes up to `bytes` into the raw
// series, the rate at `bytes` and the latency of a small copy. False (and `why`) where there
// is no such copy.
struct Direction {
  CopyRate large, small;
  int node = -1;
  std::string why_not;
};

Direction sweep(memtopo::Context& ctx, uint32_t direction, int32_t numa, uint64_t bytes, uint32_t repeats, Series& s) {
  Direction d;
  for (uint64_t size = 4096; size <= bytes; size = size * 4 > bytes && size < bytes ? bytes : size * 4) {
    const memtopo::LinkCopies c = ctx.backend().time_link_copies(direction, size, repeats, numa);
    if (!c.why_not.empty()) {
      d.why_not = c.why_not;
      return d;
    }
    const CopyRate r = copy_rate(size, c.elapsed_ns);
    d.node = c.numa_node_used;
    s.rows.insert(s.rows.end(), {double(direction), double(numa), double(size), r.median_ns, r.p10_ns, r.p90_ns,
                                 r.bytes_per_second});
    if (size == bytes) d.large = r;
  }
  const memtopo::LinkCopies c = ctx.backend().time_link_copies(direction, kLatencyBytes, kLatencyCopies, numa);
  if (!c.why_not.empty()) d.why_not = c.why_not;
  else d.small = copy_rate(kLatencyBytes, c.elapsed_ns);
  return d;
}

std::string how(const Direction& d, uint64_t bytes, uint32_t repeats) {
  return "median of " + std::to_string(repeats) + " copies of " + std::to_string(bytes >> 20) + " MiB, page-locked host memory" +
         (d.node >= 0 ? " on NUMA node " + std::to_string(d.node) : "") + ", timed by the GPU; p10..p90 " +
         gbps(double(bytes) / d.large.p90_ns * 1e9) + ".." + gbps(double(bytes) / d.large.p10_ns * 1e9) + " GB/s";
}

void host_copies(memtopo::Context& ctx, uint64_t bytes, uint32_t repeats, Series& s) {
  for (const bool in : {true, false}) {
    const uint32_t dir = in ? MT_LINK_HOST_TO_DEVICE : MT_LINK_DEVICE_TO_HOST;
    const std::string name = in ? "link.host_to_device" : "link.device_to_host";
    const Direction near = sweep(ctx, dir, MT_HOST_NUMA_NEAR, bytes, repeats, s);
    if (!near.why_not.empty()) throw memtopo::Skip(near.why_not);
    ctx.result(name + "_bytes_per_second", near.large.bytes_per_second, {0.9, memtopo::Bound::Exact, how(near, bytes, repeats)});
    char spread[64];
    std::snprintf(spread, sizeof spread, "; p10..p90 %.2f..%.2f us", near.small.p10_ns / 1e3, near.small.p90_ns / 1e3);
    ctx.result(name + "_latency_s", near.small.median_ns * 1e-9,
               {0.9, memtopo::Bound::Exact,
                "median of " + std::to_string(kLatencyCopies) + " copies of " + std::to_string(kLatencyBytes) +
                    " B, enqueue to completion on the GPU's clock (CUDA events)" + spread});
    const Direction far = sweep(ctx, dir, MT_HOST_NUMA_FAR, bytes, repeats, s);
    if (far.why_not.empty())
      ctx.result(name + "_far_bytes_per_second", far.large.bytes_per_second, {0.9, memtopo::Bound::Exact, how(far, bytes, repeats)});
    else
      ctx.absent(name + "_far_bytes_per_second", far.why_not);
  }
}

void peer_copies(memtopo::Context& ctx, uint64_t bytes, uint32_t repeats) {
  const memtopo::LinkCopies first = ctx.backend().time_link_copies(MT_LINK_PEER, bytes, repeats, MT_HOST_NUMA_NEAR, 0);
  ctx.result("link.peers", int64_t(first.peers), {1.0, memtopo::Bound::Exact, "GPUs this one copies to directly"});
  if (!first.why_not.empty()) {
    ctx.absent("link.peer_bytes_per_second", first.why_not);
    return;
  }
  std::vector<double> rows, rates;
  const uint32_t peers = std::min<uint32_t>(uint32_t(first.peers), kMostPeers);
  for (uint32_t p = 0; p < peers; ++p) {
    const memtopo::LinkCopies c = p == 0 ? first : ctx.backend().time_link_copies(MT_LINK_PEER, bytes, repeats, MT_HOST_NUMA_NEAR, p);
    if (!c.why_not.empty()) continue;
    const CopyRate r = copy_rate(bytes, c.elapsed_ns);
    rates.push_back(r.bytes_per_second);
    rows.insert(rows.end(), {double(p), r.median_ns, r.p10_ns, r.p90_ns, r.bytes_per_second});
  }
  ctx.raw("peers", {"peer", "median_ns", "p10_ns", "p90_ns", "bytes_per_second"}, rows);
  std::sort(rates.begin(), rates.end());
  ctx.result("link.peer_bytes_per_second", rates[rates.size() / 2],
             {0.9, memtopo::Bound::Exact,
              "median over " + std::to_string(rates.size()) + " peers of each one's median of " + std::to_string(repeats) +
                  " copies of " + std::to_string(bytes >> 20) + " MiB from this GPU's memory to the peer's; range " +
                  gbps(rates.front()) + ".." + gbps(rates.back()) + " GB/s"});
}

void measure(memtopo::Context& ctx) {
  const uint64_t bytes = uint64_t(ctx.option<int64_t>("copy_bytes"));
  const uint32_t repeats = uint32_t(ctx.option<int64_t>("repeats"));
  Series s;
  host_copies(ctx, bytes, repeats, s);
  ctx.raw("sizes", {"direction", "numa_node", "bytes", "median_ns", "p10_ns", "p90_ns", "bytes_per_second"}, s.rows);
  ctx.result("link.copy_bytes", int64_t(bytes), {1.0, memtopo::Bound::Exact, "the size of each timed copy (option copy_bytes)"});
  peer_copies(ctx, bytes, repeats);
}

}  // namespace

memtopo::Probe copies_probe() {
  return memtopo::Probe("links/copies")
      .roles({{"link.host_to_device_bytes_per_second", "bus.host_to_device_bytes_per_second"},
              {"link.device_to_host_bytes_per_second", "bus.device_to_host_bytes_per_second"},
              {"link.host_to_device_far_bytes_per_second", "bus.host_to_device_far_bytes_per_second"},
              {"link.device_to_host_far_bytes_per_second", "bus.device_to_host_far_bytes_per_second"},
              {"link.host_to_device_latency_s", "bus.host_to_device_latency_s"},
              {"link.device_to_host_latency_s", "bus.device_to_host_latency_s"},
              {"link.peer_bytes_per_second", "bus.peer_bytes_per_second"}})
      .summary("Host-to-device and device-to-host copy rate and latency (near and far NUMA node), peer copy rate")
      .provides({"link.host_to_device_bytes_per_second", "link.device_to_host_bytes_per_second",
                 "link.host_to_device_far_bytes_per_second", "link.device_to_host_far_bytes_per_second",
                 "link.host_to_device_latency_s", "link.device_to_host_latency_s", "link.copy_bytes", "link.peers",
                 "link.peer_bytes_per_second"})
      .option("copy_bytes", MT_VALUE_INT, "67108864", "bytes of each timed copy (the sizes below it are swept by 4)")
      .range("4096", "4294967296")
      .option("repeats", MT_VALUE_INT, "10", "copies timed per size")
      .range("1", "1000")
      .key("link.host_to_device_bytes_per_second", MT_VALUE_FLOAT, "",
           "page-locked host memory on the GPU's NUMA node to the GPU", MT_KEY_RATED | MT_KEY_HEADLINE)
      .key("link.device_to_host_bytes_per_second", MT_VALUE_FLOAT, "",
           "the GPU to page-locked host memory on its NUMA node", MT_KEY_RATED | MT_KEY_HEADLINE)
      .key("link.host_to_device_far_bytes_per_second", MT_VALUE_FLOAT, "",
           "the same from host memory on the farthest NUMA node")
      .key("link.device_to_host_far_bytes_per_second", MT_VALUE_FLOAT, "", "the same to the farthest NUMA node")
      .key("link.host_to_device_latency_s", MT_VALUE_FLOAT, "s", "a copy of 8 B to the GPU, enqueue to completion",
           MT_KEY_VARIES)
      .key("link.device_to_host_latency_s", MT_VALUE_FLOAT, "s", "a copy of 8 B from the GPU, enqueue to completion",
           MT_KEY_VARIES)
      .key("link.copy_bytes", MT_VALUE_INT, "bytes", "the size of each timed copy", MT_KEY_SETTING)
      .key("link.peers", MT_VALUE_INT, "", "GPUs this one copies to directly (peer access)", MT_KEY_CONFIGURATION)
      .key("link.peer_bytes_per_second", MT_VALUE_FLOAT, "", "this GPU's memory to a peer's, median over the peers")
      .not_replayed({"link.copy_bytes"})
      .replays("link.peers", "sim.link.peers")
      .plot(memtopo::Probe::Plot::panels("sizes", "direction", "bytes", "bytes_per_second", "numa_node"))
      .budget_seconds(20)
      .run(measure);
}

}  // namespace links
