// hopper-dsmem/clusters: the largest thread-block cluster that runs, how many clusters of each
// size are resident at once, and the GPC map from where the blocks of clusters land.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

#include "gpc_map.hpp"
#include "probes.hpp"

namespace hopper_dsmem {
namespace {

// Thread 0 of every block notes its SM and arrives; with `expected` > 0 it waits until that
// many blocks have arrived (all of them resident at once) or `timeout_ns` passes, and notes
// whether they did. Then the block stays for its cluster's share of `hold_ns`, so that the
// next clusters of a large grid land where earlier ones left at different times.
MEMTOPO_KERNEL void cluster_residency(unsigned* arrived, unsigned expected, unsigned long long timeout_ns,
                                      unsigned long long hold_ns, int* sm_of_block, unsigned* all_met) {
  namespace md = memtopo::device;
  if (md::thread_index() != 0) return;
  sm_of_block[md::block_index()] = int(md::smid());
  const unsigned long long t0 = md::globaltimer_ns();
  md::atomic_add(arrived, 1u);
  if (expected > 0) {
    unsigned n = 0;
    do {
      n = md::atomic_add(arrived, 0u);
    } while (n < expected && md::globaltimer_ns() - t0 < timeout_ns);
    if (n >= expected) md::atomic_add(all_met, 1u);
  }
  const unsigned cluster = md::block_index() / md::cluster_blocks();
  const unsigned long long hold = hold_ns * (1 + (cluster * 2654435761u >> 28)) / 16;  // 1/16 to 1 of hold_ns
  while (md::globaltimer_ns() - t0 < hold) {
  }
}

struct Residency {
  memtopo::device::Buffer<unsigned> arrived, met;
  memtopo::device::Buffer<int> sm_of_block;
  Residency(const memtopo::Context& ctx, size_t blocks) : arrived(ctx, 1), met(ctx, 1), sm_of_block(ctx, blocks) {}
};

memtopo::device::LaunchConfig one_block_per_sm(const memtopo::Context& ctx, unsigned cluster_blocks) {
  const int64_t optin = ctx.device().shared_per_block_optin_bytes;
  memtopo::device::LaunchConfig cfg;
  cfg.block = {32};
  // More than half of an SM's shared memory: one block per SM, so clusters compete for SMs.
  cfg.dynamic_shared_bytes = unsigned(std::min<int64_t>(ctx.device().shared_per_sm_bytes / 2 + 1024, optin));
  cfg.cluster = {cluster_blocks};
  cfg.non_portable_cluster = cluster_blocks > 8;
  cfg.warmup_launches = 0;
  return cfg;
}

// Launches `clusters` clusters; returns the SM of every block, or nothing when the launch is
// refused (a cluster size the device cannot run). `all_resident` says whether every block
// saw every other arrive within the timeout.
std::optional<std::vector<int>> place(const memtopo::Context& ctx, memtopo::device::LaunchConfig cfg, unsigned clusters,
                                      bool wait_for_all, unsigned long long hold_ns, bool* all_resident = nullptr) {
  const unsigned blocks = clusters * cfg.cluster.x;
  // A GPU starts a launch's resident blocks over microseconds and more: 5 ms is many times that.
  const unsigned long long timeout_ns = 5'000'000ull;
  cfg.grid = {blocks};
  Residency r(ctx, blocks);
  r.arrived.zero();
  r.met.zero();
  try {
    memtopo::device::launch<cluster_residency>(ctx, "cluster_residency", cfg, r.arrived.get(), wait_for_all ? blocks : 0u,
                                               timeout_ns, hold_ns, r.sm_of_block.get(), r.met.get());
  } catch (const memtopo::device::LaunchRefused&) {
    return std::nullopt;
  }
  if (all_resident) *all_resident = r.met.download()[0] == blocks;
  return r.sm_of_block.download();
}

// The largest number of clusters all resident at once, starting from the occupancy API's
// answer and moving up or down by launches that wait for every block.
int64_t measured_resident(const memtopo::Context& ctx, unsigned size, int api_answer) {
  const memtopo::device::LaunchConfig cfg = one_block_per_sm(ctx, size);
  const unsigned most = unsigned(ctx.device().sm_count) / size;
  auto all_resident = [&](unsigned n) {
    bool ok = false;
    return n == 0 || (place(ctx, cfg, n, true, 0, &ok) && ok);
  };
  unsigned n = std::min(unsigned(std::max(api_answer, 1)), most);
  if (all_resident(n)) {
    while (n < most && all_resident(n + 1)) ++n;
    return n;
  }
  while (n > 0 && !all_resident(n - 1)) --n;
  return n > 0 ? n - 1 : 0;
}

// The GPCs that clusters larger than one TPC reveal. SMs that only ever ran the smallest
// clusters get their GPC from the constant L1.5's groups where those agree with every placed
// GPC (`l15`, constant_l15.group_of_sm, when that probe ran); the rest are listed apart, and the
// count is then a lower bound. The residency check and the cluster domains use the placements.
void store_gpc_map(memtopo::Context& ctx, const GpcMap& placed, const std::optional<std::vector<int64_t>>& l15,
                   const std::vector<int64_t>& resident, int64_t launches) {
  const std::string mismatch = check_against_residency(placed, resident);
  GroupResolution r{placed, {}, "constant_l15.group_of_sm was not measured"};
  if (l15 && !placed.unresolved_sms().empty()) r = resolve_with_groups(placed, *l15);
  const GpcMap& map = r.disagreement.empty() ? r.map : placed;
  const std::vector<int64_t> unresolved = map.unresolved_sms();
  std::string note = "SMs that shared a cluster in " + std::to_string(launches) + " launches of clusters of 2 to " +
                     std::to_string(resident.size()) + " blocks";
  note += mismatch.empty() ? "; the placements predict every measured count of resident clusters"
                           : "; the placements disagree with the resident clusters: " + mismatch;
  if (!r.placed_sms.empty())
    note += "; " + std::to_string(r.placed_sms.size()) +
            " SMs (gpc.sms_placed_by_constant_l15) only ever ran clusters of one TPC: their GPC is their constant "
            "L1.5 group's, which holds one placed GPC each";
  if (!unresolved.empty())
    note += "; " + std::to_string(unresolved.size()) +
            " SMs (gpc.unresolved_sms) only ever ran clusters of 2 blocks, one TPC: no larger cluster is placed on "
            "them and the constant L1.5 groups do not place them (" + r.disagreement +
            "), so their GPC is unknown and the count is a lower bound";
  const double confidence = mismatch.empty() ? 0.95 : 0.6;
  const memtopo::ResultInfo info{confidence, memtopo::Bound::Exact, note};
  ctx.result("gpc.count", int64_t(map.gpcs.size()),
             {confidence, unresolved.empty() ? memtopo::Bound::Exact : memtopo::Bound::AtLeast, note});
  // Unresolved SMs belong to some GPC: each count is then a lower bound, and they add up to
  // fewer than device.sm_count.
  ctx.result("gpc.sm_counts", map.sm_counts(),
             {confidence, unresolved.empty() ? memtopo::Bound::Exact : memtopo::Bound::AtLeast, note});
  ctx.result("gpc.index_of_sm", map.gpc_of_sm(ctx.device().sm_count), info);
  ctx.result("gpc.cluster_domain_of_sm", cluster_domain_of_sm(placed, ctx.device().sm_count), info);
  if (!r.placed_sms.empty()) ctx.result("gpc.sms_placed_by_constant_l15", r.placed_sms, info);
  else if (placed.unresolved_sms().empty())
    ctx.absent("gpc.sms_placed_by_constant_l15", "no SM: every SM placed by clusters alone");
  else
    ctx.absent("gpc.sms_placed_by_constant_l15", "no SM: the constant L1.5 groups place none of the SMs clusters "
                                                  "left unplaced (" + r.disagreement + ")");
  if (!unresolved.empty()) ctx.result("gpc.unresolved_sms", unresolved, info);
  else ctx.absent("gpc.unresolved_sms", "no SM: every SM's GPC found");
}

}  // namespace

void measure_clusters(memtopo::Context& ctx) {
  // Sizes that run: the portable ones without the non-portable attribute, then up to 32.
  int64_t max_portable = 0, max_blocks = 0;
  for (unsigned s = 1; s <= 32; ++s) {
    memtopo::device::LaunchConfig cfg = one_block_per_sm(ctx, s);
    cfg.non_portable_cluster = false;
    if (s <= 8 && place(ctx, cfg, 1, false, 0)) max_portable = s;
    cfg.non_portable_cluster = true;
    if (place(ctx, cfg, 1, false, 0)) max_blocks = s;
  }
  if (max_blocks < 2) throw memtopo::Skip("no cluster of 2 or more blocks runs on this device");
  ctx.progress(0.2, "resident clusters");
  std::vector<int64_t> resident, api;
  std::vector<double> rows;
  for (unsigned s = 1; s <= unsigned(max_blocks); ++s) {
    const int answer = memtopo::device::max_active_clusters<cluster_residency>(ctx, "cluster_residency", one_block_per_sm(ctx, s));
    resident.push_back(measured_resident(ctx, s, answer));
    api.push_back(answer);
    rows.insert(rows.end(), {double(s), double(answer), double(resident.back())});
  }
  ctx.raw("resident-clusters", {"cluster_blocks", "occupancy_api", "measured"}, rows);
  ctx.result("dsmem.max_cluster_blocks", max_blocks,
             {0.99, memtopo::Bound::Exact, "largest cluster that launched, with the non-portable attribute above 8"});
  ctx.result("dsmem.max_portable_cluster_blocks", max_portable,
             {0.99, memtopo::Bound::Exact, "largest cluster that launched without the non-portable attribute"});
  ctx.result("dsmem.resident_clusters", resident,
             {0.95, memtopo::Bound::Exact,
              "clusters of 1, 2, ... max blocks all resident at once (one block per SM), by launches that wait for "
              "every block"});

  ctx.progress(0.6, "GPC map");
  std::vector<Placement> placements;
  std::vector<double> placed;
  int64_t launch_id = 0;
  std::vector<unsigned> sizes_tried;
  for (unsigned s : {unsigned(max_blocks), 8u, 4u, 2u}) {
    if (s > unsigned(max_blocks) || resident[s - 1] == 0 || std::count(sizes_tried.begin(), sizes_tried.end(), s)) continue;
    sizes_tried.push_back(s);
    for (int rep = 0; rep < 3; ++rep, ++launch_id) {
      const auto sms = place(ctx, one_block_per_sm(ctx, s), unsigned(6 * resident[s - 1]), false, 40'000);
      if (!sms) continue;
      for (size_t b = 0; b < sms->size(); ++b) {
        placements.push_back({int64_t(s), launch_id, int64_t(b / s), (*sms)[b]});
        placed.insert(placed.end(), {double(s), double(launch_id), double(b / s), double((*sms)[b])});
      }
    }
  }
  ctx.raw("placements", {"cluster_blocks", "launch", "cluster", "sm"}, placed);
  const GpcMap map = gpc_map(placements, ctx.device().sm_count);
  if (!map.unseen.empty() || map.gpcs.empty())
    throw memtopo::NotDeterminable(
        std::to_string(map.alone.size()) + " SMs never shared a cluster with another SM, " +
        std::to_string(map.unseen.size()) + " ran no block and " + std::to_string(map.gpcs.size()) +
        " groups ran clusters larger than " + std::to_string(sizes_tried.back()) + " blocks in " +
        std::to_string(launch_id) + " launches: the GPCs are unknown");
  store_gpc_map(ctx, map, ctx.try_input<std::vector<int64_t>>("constant_l15.group_of_sm"), resident, launch_id);
}

}  // namespace hopper_dsmem
