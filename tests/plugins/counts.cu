// t-counts: a stream whose bytes are checked against the hardware counters (the simulated GPU:
// its model), once with the bytes it moves and once with a deliberately wrong count, which the
// check must catch: the rate is then not reported and a warning gives both numbers.
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

namespace {

namespace md = memtopo::device;

constexpr uint64_t kBytes = uint64_t(1) << 20;  // read once through .cg by one block

MEMTOPO_KERNEL void read_once(const char* src, unsigned* sink) {
  const unsigned acc =
      md::sweep<MT_SWEEP_READ, md::Path::GlobalCg, 16, 1>(src, nullptr, md::thread_index(), kBytes / 16, md::block_threads(), 0, 0);
  if (acc == 0x9e3779b9u) sink[0] = acc;
}

void measure(memtopo::Context& ctx, double believed_factor, const std::string& key) {
  md::Buffer<char> src(ctx, kBytes);
  src.zero();
  md::Buffer<unsigned> sink(ctx, 1);
  md::LaunchConfig cfg;
  cfg.block = {256};
  md::launch<read_once>(ctx, "read_once (warm-up)", cfg, src.get(), sink.get());
  cfg.warmup_launches = 0;
  md::LaunchReport r;
  const memtopo::Counted c = ctx.backend().count(
      [&] { r = md::launch<read_once>(ctx, "read_once", cfg, src.get(), sink.get()); }, MT_COUNT_L2_READ);
  memtopo::ResultInfo info{0.9, memtopo::Bound::Exact, "one block reads 1 MiB once through .cg"};
  if (!c.counted) {
    memtopo::mark_unverified(info, c.why_not);
  } else {
    memtopo::Believed b;
    b.l2_read_bytes = believed_factor * double(kBytes);
    const memtopo::Verdict v = memtopo::compare_counts(c.counts, b, memtopo::CountedLevel::L2Read);
    if (!v.agrees) {
      ctx.warn(key + " not reported: the counters disagree (" + v.disagreement + ")");
      return;
    }
    memtopo::mark_verified(info, v, "the read under the counters");
  }
  ctx.result(key, double(kBytes) / std::max(r.elapsed_ms, 1e-9) * 1e3, info);
}

memtopo::Probe probe(const std::string& name, double factor) {
  const std::string key = "t_counts." + name + "_bytes_per_second";
  return memtopo::Probe("t-counts/" + name)
      .summary("a 1 MiB read checked against the counters")
      .provides({key})
      .key(key, MT_VALUE_FLOAT, "", "a read's rate")
      .run([factor, key](memtopo::Context& ctx) { measure(ctx, factor, key); });
}

}  // namespace

MEMTOPO_PLUGIN("t-counts", "1.0.0", probe("right", 1.0), probe("wrong", 2.0))
