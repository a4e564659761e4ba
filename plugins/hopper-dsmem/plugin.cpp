// hopper-dsmem: thread-block clusters and distributed shared memory on compute capability 9.0.
// Three probes: which clusters run and where (the GPC map), the latency of a load from another
// block's shared memory, and the bandwidth between SMs of one cluster.
#include <memtopo/probe.hpp>

#include "probes.hpp"

namespace {

memtopo::Probe clusters() {
  return memtopo::Probe("hopper-dsmem/clusters")
      .roles({{"dsmem.max_cluster_blocks", "cluster.max_blocks"},
              {"dsmem.max_portable_cluster_blocks", "cluster.max_portable_blocks"},
              {"gpc.count", "chip.gpc_count"},
              {"gpc.sm_counts", "chip.gpc_sm_counts"},
              {"gpc.index_of_sm", "chip.gpc_of_sm"},
              {"gpc.unresolved_sms", "chip.gpc_unresolved_sms"}})
      .summary("Largest thread-block cluster, resident clusters per size, and the GPC map from cluster placement")
      .provides({"dsmem.max_cluster_blocks", "dsmem.max_portable_cluster_blocks", "dsmem.resident_clusters",
                 "gpc.count", "gpc.sm_counts", "gpc.index_of_sm", "gpc.cluster_domain_of_sm", "gpc.sms_placed_by_constant_l15",
                 "gpc.unresolved_sms"})
      // Which SMs share a constant L1.5 places the SMs that only ever ran clusters of one TPC.
      .uses({"constant_l15.group_of_sm"})
      .key("dsmem.max_cluster_blocks", MT_VALUE_INT, "", "largest cluster that launches (non-portable sizes allowed)",
           MT_KEY_HEADLINE)
      .key("dsmem.max_portable_cluster_blocks", MT_VALUE_INT, "", "largest cluster that launches without the non-portable attribute")
      .key("dsmem.resident_clusters", MT_VALUE_INT_ARRAY, "",
           "clusters of 1, 2, ... blocks resident at once with one block per SM")
      .replays("gpc.cluster_domain_of_sm", "sim.gpc_of_sm")
      .not_replayed({"gpc.index_of_sm", "gpc.sms_placed_by_constant_l15"})
      .key("gpc.count", MT_VALUE_INT, "", "GPCs: groups of SMs that the blocks of one cluster never leave", MT_KEY_HEADLINE)
      .key("gpc.sm_counts", MT_VALUE_INT_ARRAY, "", "SMs of each GPC, GPCs ordered by their lowest SM",
           MT_KEY_HEADLINE | MT_KEY_CONFIGURATION)
      .key("gpc.index_of_sm", MT_VALUE_INT_ARRAY, "", "the GPC (index into gpc.sm_counts) of SM 0, 1, ...; -1: unknown",
           MT_KEY_CONFIGURATION)
      .key("gpc.cluster_domain_of_sm", MT_VALUE_INT_ARRAY, "",
           "the group of SMs within which clusters were placed, per SM: the GPC, or a part of one where only clusters "
           "of one TPC ran (numbered after the GPCs); -1: no block ran",
           MT_KEY_CONFIGURATION)
      .key("gpc.sms_placed_by_constant_l15", MT_VALUE_INT_ARRAY, "",
           "SMs on which only clusters of one TPC ran, placed in the GPC of their constant L1.5 group",
           MT_KEY_CONFIGURATION)
      .key("gpc.unresolved_sms", MT_VALUE_INT_ARRAY, "",
           "SMs on which only clusters of one TPC ran and whose GPC no other evidence gives")
      .invariant(MT_INVARIANT_SUM_EQUALS, "gpc.sm_counts", "device.sm_count", "every SM is in one GPC")
      .min_compute_capability(9, 0)
      .budget_seconds(60)
      .run(hopper_dsmem::measure_clusters);
}

memtopo::Probe latency() {
  return memtopo::Probe("hopper-dsmem/latency")
      .roles({{"dsmem.remote_latency_cycles", "memory.latency_cycles@distributed_shared"}})
      .summary("Load-to-use latency of another block's shared memory (ld.shared::cluster) per rank distance")
      .provides({"dsmem.remote_latency_cycles", "dsmem.latency_by_distance_cycles", "dsmem.local_cluster_latency_cycles",
                 "dsmem.local_latency_cycles"})
      .requires_keys({"dsmem.max_cluster_blocks", "dsmem.resident_clusters"})
      .uses({"shared.latency_cycles"})
      .option("loads", MT_VALUE_INT, "512", "dependent loads timed per chase, in 16 runs (docs/hopper.md)")
      .range("1", "65536")
      .option("repeats", MT_VALUE_INT, "3", "launches at least, each with every resident cluster chasing")
      .range("1", "1000")
      .option("max_repeats", MT_VALUE_INT, "12", "launches at most, while the median remote latency is not stable")
      .range("1", "1000")
      .option("max_noise_percent", MT_VALUE_FLOAT, "0.2",
              "stable: the median's noise (MAD over sqrt(n)) of the launches' medians, relative")
      .range("0", "100")
      .replays("dsmem.remote_latency_cycles", "sim.cluster.remote_latency_cycles")
      .replays("dsmem.local_cluster_latency_cycles", "sim.cluster.local_latency_cycles")
      .key("dsmem.remote_latency_cycles", MT_VALUE_FLOAT, "cycles",
           "dependent ld.shared::cluster from another block of the cluster, median over the distances",
           MT_KEY_HEADLINE)
      .key("dsmem.latency_by_distance_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "the same per rank distance 0, 1, ... (0: the block's own shared memory through its cluster address)",
           MT_KEY_CONFIGURATION)
      .key("dsmem.local_cluster_latency_cycles", MT_VALUE_FLOAT, "cycles",
           "dependent ld.shared::cluster into the block's own shared memory")
      .key("dsmem.local_latency_cycles", MT_VALUE_FLOAT, "cycles", "dependent ld.shared with a shared::cta address")
      .min_compute_capability(9, 0)
      .budget_seconds(60)
      .run(hopper_dsmem::measure_latency);
}

memtopo::Probe bandwidth() {
  return memtopo::Probe("hopper-dsmem/bandwidth")
      .roles({{"dsmem.sm_to_sm_gbps", "memory.sm_to_sm_gbps@distributed_shared"}})
      .summary("SM-to-SM bandwidth of distributed shared memory by cluster size and width, against shared memory and L2")
      .provides({"dsmem.bandwidth_widths_bytes", "dsmem.bandwidth_cluster_blocks", "dsmem.sm_to_sm_gbps",
                 "dsmem.sm_to_sm_by_cluster_gbps", "dsmem.local_shared_gbps", "dsmem.l2_gbps"})
      .requires_keys({"dsmem.max_cluster_blocks", "dsmem.resident_clusters"})
      .plot(memtopo::Probe::Plot::panels("sweeps", "width_bytes", "cluster_blocks", "median_gbps", "source")
                .named("source=another block of the cluster,the block's own shared memory,global memory via L2"))
      .option("rounds", MT_VALUE_INT, "64", "sweeps of the 64 KiB buffer per block")
      .range("1", "65536")
      .key("dsmem.bandwidth_widths_bytes", MT_VALUE_INT_ARRAY, "bytes", "access widths of the bandwidth arrays")
      .key("dsmem.bandwidth_cluster_blocks", MT_VALUE_INT_ARRAY, "", "cluster sizes of dsmem.sm_to_sm_by_cluster_gbps")
      .key("dsmem.sm_to_sm_gbps", MT_VALUE_FLOAT_ARRAY, "gbps",
           "one SM reading another block's shared memory, per width, the best cluster size")
      .key("dsmem.sm_to_sm_by_cluster_gbps", MT_VALUE_FLOAT_ARRAY, "gbps", "the same with 16 B loads per cluster size")
      .key("dsmem.local_shared_gbps", MT_VALUE_FLOAT_ARRAY, "gbps", "one SM reading its own shared memory, per width")
      .key("dsmem.l2_gbps", MT_VALUE_FLOAT_ARRAY, "gbps", "one SM reading L2 (ld.global.cg) while every SM does, per width")
      .min_compute_capability(9, 0)
      .budget_seconds(60)
      .run(hopper_dsmem::measure_bandwidth);
}

}  // namespace

MEMTOPO_PLUGIN("hopper-dsmem", "1.0.0", clusters(), latency(), bandwidth())
