// cache-sharing/storage: which SM caches (L1, texture, read-only, constant L1) share one
// storage (the thesis' two-actor test). In one
// block, one launch: path Y reads a few lines (untimed), path X then reads twice what either
// cache holds, and Y re-reads its lines, timed. When X and Y share a storage, X's lines evicted
// Y's and the re-read costs what a cold read costs; else it costs a hit. docs/cache-sharing.md.
#include <algorithm>
#include <string>
#include <vector>

#include <memtopo/analysis.hpp>
#include <memtopo/probe.hpp>
#include <memtopo/recipes.hpp>

namespace {

namespace an = memtopo::analysis;

struct Path {
  std::string element;  // "l1d", "texture", "readonly", "constant_l1"
  mt_space space;
  uint64_t size = 0, line = 128;
};

struct Pair {
  const memtopo::Context& ctx;

  memtopo::Job job(const Path& p, const memtopo::ChaseArray& a, uint32_t order, uint64_t steps, bool timed) const {
    memtopo::Job j;
    j.space = p.space;
    j.array = &a;
    j.sm = 0;
    j.block = 0;
    j.order = order;
    j.steps = steps;
    j.timed = timed;
    j.want_index = false;
    return j;
  }

  // Y's small footprint (at Y's line), and a footprint of twice either cache.
  // Medians of Y's re-read after X's fill, after nothing (a hit) and after Y's own fill of the
  // same size (evicted: where Y's misses go); true when X's fill evicted like Y's own.
  bool shared(const Path& y, const Path& x, std::vector<double>& rows) const {
    const uint64_t small = std::max<uint64_t>(std::min<uint64_t>(y.size / 4, 16384) / y.line * y.line, 4 * y.line);
    const uint64_t big = std::max(x.size, y.size) * 2;
    const auto v = memtopo::recipes::constant_stride(small, y.line);
    // Fills step by 32 B, the narrowest line any GPU cache has: a storage whose lines are
    // narrower than a path's line_bytes (the Kepler's read-only loads in the 32 B texture
    // lines), or than the 128 B assumed where no line was measured, still fills.
    const uint64_t step = 32;
    const auto fx = memtopo::recipes::constant_stride(big / step * step, step);
    // The constant path reaches little past constant memory: its own fill is four times its
    // cache, enough to evict under any policy that keeps recent lines, and no more than the path
    // reaches (a constant L1 found nowhere within it has the reach as its size bound).
    const uint64_t reach = ctx.constant_reach_bytes();
    const uint64_t own = y.space != MT_SPACE_CONSTANT ? big : reach > 0 ? std::min(4 * y.size, reach) : 4 * y.size;
    const auto fy = memtopo::recipes::constant_stride(own / step * step, step);
    const uint64_t nv = small / y.line;
    const auto med = [](const memtopo::JobResult& r) { return an::median(an::to_doubles(r.latency)); };
    const auto refill = [&](const Path& filler, const memtopo::recipes::Chase& f) {
      const uint64_t nf = f.footprint_bytes / step;
      return med(ctx.backend()
                     .run(std::vector<memtopo::Job>{job(y, v.array, 1, 2 * nv, false), job(filler, f.array, 2, 2 * nf, false),
                                                    job(y, v.array, 3, nv, true)})
                     .at(2));
    };
    const double a = refill(x, fx), evicted = refill(y, fy);
    const double h = med(ctx.backend().run(std::vector<memtopo::Job>{job(y, v.array, 1, 2 * nv, false),
                                                                     job(y, v.array, 2, nv, true)}).at(1));
    rows.insert(rows.end(), {double(rows.size() / 7), double(small), double(big), double(own), h, a, evicted});
    if (!(evicted > 1.3 * h))
      throw memtopo::NotDeterminable(y.element + ": its lines re-read after its own fill of " + std::to_string(own) +
                                     " B (" + std::to_string(int(evicted + 0.5)) + " cycles) cost no more than a hit (" +
                                     std::to_string(int(h + 0.5)) + ")");
    return a > 0.5 * (h + evicted);
  }
};

void measure_storage(memtopo::Context& ctx) {
  if (!ctx.backend().has(MT_CAP_SEQUENCE)) throw memtopo::Skip("the backend runs no sequences of jobs");
  auto path = [&](const std::string& e, mt_space s) {
    Path p{e, s};
    p.size = uint64_t(ctx.input<int64_t>(e + ".size_bytes"));
    p.line = uint64_t(ctx.try_input<int64_t>(e + ".line_bytes").value_or(128));
    return p;
  };
  const Path l1 = path("l1d", MT_SPACE_GLOBAL_CA), tex = path("texture", MT_SPACE_TEXTURE),
             ro = path("readonly", MT_SPACE_READONLY), c1 = path("constant_l1", MT_SPACE_CONSTANT);
  const Pair pair{ctx};
  std::vector<double> rows;
  const bool tex_l1 = pair.shared(tex, l1, rows), ro_l1 = pair.shared(ro, l1, rows), ro_tex = pair.shared(ro, tex, rows);
  // A constant path whose own fill evicts nothing it can tell (no constant L1 within its
  // reach) leaves its own storage undetermined, not the others'.
  bool c1_l1 = false, c1_tex = false;
  std::string constant_unknown;
  try {
    c1_l1 = pair.shared(c1, l1, rows);
    c1_tex = pair.shared(c1, tex, rows);
  } catch (const memtopo::NotDeterminable& e) {
    constant_unknown = e.what();
    ctx.info("constant_l1.storage not determined: " + constant_unknown);
  }
  ctx.raw("pairs",
          {"pair", "victim_bytes", "filler_bytes", "own_filler_bytes", "hit_median", "after_fill_median",
           "after_own_fill_median"},
          rows);
  auto seen = [](bool missed) { return std::string(missed ? "missed" : "hit"); };
  const std::string how = "the victim re-reads its lines after the other path read twice what either cache holds, "
                          "in one block: texture after .ca loads " + seen(tex_l1) + ", read-only after .ca " +
                          seen(ro_l1) + ", read-only after texture " + seen(ro_tex) +
                          (constant_unknown.empty() ? ", constant after .ca " + seen(c1_l1) + ", constant after texture " +
                                                          seen(c1_tex)
                                                    : "; constant: " + constant_unknown);
  const memtopo::ResultInfo info{0.9, memtopo::Bound::Exact, how};
  ctx.result("texture.storage", std::string(tex_l1 ? "l1d" : "own"), info);
  ctx.result("readonly.storage", std::string(ro_l1 ? "l1d" : ro_tex ? "texture" : "own"), info);
  if (constant_unknown.empty())
    ctx.result("constant_l1.storage", std::string(c1_l1 ? "l1d" : c1_tex ? "texture" : "own"), info);
  else
    ctx.absent("constant_l1.storage", constant_unknown);
}

}  // namespace

namespace cache_sharing {

memtopo::Probe storage_probe() {
  return memtopo::Probe("cache-sharing/storage")
      .roles({{"texture.storage", "cache.storage@texture_cache"},
              {"readonly.storage", "cache.storage@readonly_cache"},
              {"constant_l1.storage", "cache.storage@constant_cache"}})
      .summary("Which of the L1, texture, read-only and constant caches share one storage per SM (two actors, one launch)")
      .provides({"texture.storage", "readonly.storage", "constant_l1.storage"})
      .requires_keys({"l1d.size_bytes", "texture.size_bytes", "readonly.size_bytes", "constant_l1.size_bytes"})
      .uses({"l1d.line_bytes", "texture.line_bytes", "readonly.line_bytes", "constant_l1.line_bytes"})
      .replays("texture.storage", "sim.texture.storage")
      .replays("readonly.storage", "sim.readonly.storage")
      .not_replayed({"constant_l1.storage"})  // the simulator's constant L1 has a storage of its own
      .key("texture.storage", MT_VALUE_STRING, "", "\"l1d\": texture loads use the L1's storage; \"own\": a storage of their own")
      .key("readonly.storage", MT_VALUE_STRING, "", "\"l1d\", \"texture\" (whatever texture loads use) or \"own\"")
      .key("constant_l1.storage", MT_VALUE_STRING, "", "\"l1d\", \"texture\" or \"own\": the storage constant loads use")
      .budget_seconds(30)
      .run(measure_storage);
}

}  // namespace cache_sharing
