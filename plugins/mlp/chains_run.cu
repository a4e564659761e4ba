// The kernel of mlp/loads-in-flight: lanes 0 .. lanes-1 of each warp of one block, each with K
// chains of random .cg loads in lockstep, one line each (docs/mlp.md). Chain i of lane l of
// warp w draws from generator w + 32 l + 1024 i of the seed, as the measurement engine's
// random loads always have, so that the places are the same on every backend.
#include <algorithm>
#include <vector>

#include <memtopo/device/kernel.hpp>

#include "chains_run.hpp"
#include "mlp_analysis.hpp"

namespace mlp {
namespace {

namespace md = memtopo::device;

constexpr uint64_t kLine = 128;

// out: four words per thread: cycles, outliers, the clock at the first timed step, at the end.
template <uint32_t K>
MEMTOPO_KERNEL void chains_kernel(const char* base, unsigned candidates, unsigned long long state, unsigned lanes,
                                  unsigned long long warmup, unsigned long long steps, unsigned long long cool,
                                  unsigned ceiling, unsigned mask, unsigned long long* out) {
  MEMTOPO_SHARED(unsigned, scratch, 32);  // one timing word per warp: its lanes' stores may race, harmlessly
  const unsigned t = md::thread_index(), w = t / 32, lane = t % 32;
  if (lane >= lanes) return;
  md::RandomPlaces places[K];
  for (uint32_t i = 0; i < K; ++i)
    places[i] = {md::RandomPlaces::stream_state(state, w + 32 * lane + 1024 * i), candidates, unsigned(kLine)};
  const md::ChainTally y = md::random_chains<md::Path::GlobalCg, K>(base, places, mask, warmup, steps, ceiling,
                                                                     md::shared_address(&scratch[w]));
  // Untimed steps after the timed ones: a lane that ends its timed steps early keeps loading,
  // so that every lane's timed steps meet all the others' loads.
  if (cool > 0) md::random_chains<md::Path::GlobalCg, K>(base, places, mask, cool, 0, 0, md::shared_address(&scratch[w]));
  unsigned long long* mine = out + 4ull * t;
  md::store_cg(mine + 0, (unsigned long long)y.cycles);
  md::store_cg(mine + 1, (unsigned long long)y.outliers);
  md::store_cg(mine + 2, (unsigned long long)y.first);
  md::store_cg(mine + 3, (unsigned long long)y.last);
}

template <uint32_t K>
void launch_chains(const memtopo::Context& ctx, const ChainsLaunch& l, const char* base, unsigned long long* out) {
  md::LaunchConfig cfg;
  cfg.block = {l.warps * 32};
  cfg.warmup_launches = 0;  // the chains' own warm-up steps bring the lines in
  const unsigned candidates = unsigned(l.footprint_bytes / kLine);
  md::launch<chains_kernel<K>>(ctx, "chains", cfg, base, candidates, md::RandomPlaces::mix(l.seed), l.lanes,
                               l.warmup_steps, l.steps, l.cool_steps, l.ceiling_cycles, 0u, out);
}

}  // namespace

ChainsRun run_chains(const memtopo::Context& ctx, const ChainsLaunch& l) {
  md::Buffer<char> lines(ctx, l.footprint_bytes);
  // Written before it is read, as an application's data is: a buffer nothing ever wrote reads
  // faster from DRAM, so the chains measured whether an earlier probe had written the buffer
  // the pool gave (docs/mlp.md, "The buffer"; docs/results/log/h100.md, "Figures behind comments").
  lines.zero();
  md::Buffer<unsigned long long> out(ctx, 4ull * l.warps * 32);
  out.zero();
  switch (l.lane_chains) {
    case 8: launch_chains<8>(ctx, l, lines.get(), out.get()); break;
    case 4: launch_chains<4>(ctx, l, lines.get(), out.get()); break;
    case 2: launch_chains<2>(ctx, l, lines.get(), out.get()); break;
    default: launch_chains<1>(ctx, l, lines.get(), out.get()); break;
  }
  const std::vector<unsigned long long> o = out.download();
  ChainsRun r;
  unsigned long long first = ~0ull, last = 0;
  std::vector<LaneTally> lanes;
  for (uint32_t w = 0; w < l.warps; ++w)
    for (uint32_t lane = 0; lane < l.lanes; ++lane) {
      const unsigned long long* y = o.data() + 4ull * (w * 32 + lane);
      r.cycles += y[0];
      r.outliers += y[1];
      first = std::min(first, y[2]);
      last = std::max(last, y[3]);
      lanes.push_back({double(y[0]) / l.lane_chains, double(y[1]) / l.lane_chains, y[3] > y[2] ? double(y[3] - y[2]) : 0});
    }
  r.span_cycles = last > first ? last - first : 0;
  r.present_chains = present_chains(lanes, double(l.steps)) * l.lane_chains;
  return r;
}

}  // namespace mlp
