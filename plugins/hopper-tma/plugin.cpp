// hopper-tma: the Tensor Memory Accelerator on compute capability 9.0. Two probes: the latency
// of bulk copies (1D and 2D tiles) by size from L2 and DRAM, and their throughput by size and
// copies in flight against cp.async and ld.global + st.shared.
#include <memtopo/probe.hpp>

#include "probes.hpp"

namespace {

constexpr const char* kNotSimulated = "TMA bulk copies (cp.async.bulk, mbarrier transaction counts) are not modelled by "
                                      "the simulated GPU";

memtopo::Probe latency() {
  return memtopo::Probe("hopper-tma/latency")
      .roles({{"tma.max_transfer_bytes", "async_copy.max_transfer_bytes"}})
      .summary("Cycles from issuing cp.async.bulk (1D) or cp.async.bulk.tensor (2D) to mbarrier completion, by size")
      .provides({"tma.max_transfer_bytes", "tma.latency_sizes_bytes", "tma.tensor_tile_bytes",
                 "tma.bulk_l2_latency_cycles", "tma.bulk_l2_latency_p10_cycles", "tma.bulk_l2_latency_p90_cycles",
                 "tma.bulk_dram_latency_cycles", "tma.bulk_dram_latency_p10_cycles", "tma.bulk_dram_latency_p90_cycles",
                 "tma.tensor_l2_latency_cycles", "tma.tensor_l2_latency_p10_cycles", "tma.tensor_l2_latency_p90_cycles",
                 "tma.tensor_dram_latency_cycles", "tma.tensor_dram_latency_p10_cycles",
                 "tma.tensor_dram_latency_p90_cycles"})
      .plot(memtopo::Probe::Plot::lines("latency", "bytes", "cycles", "series")
                .named("series=cp.async.bulk from L2,cp.async.bulk from DRAM,tensor tile from L2,tensor tile from DRAM"))
      .option("repeats", MT_VALUE_INT, "256", "timed copies per size and source, each of another region")
      .range("1", "65536")
      .key("tma.max_transfer_bytes", MT_VALUE_INT, "bytes", "largest bulk copy into one block's shared memory",
           MT_KEY_HEADLINE)
      .key("tma.latency_sizes_bytes", MT_VALUE_INT_ARRAY, "bytes", "copy sizes of the bulk latency arrays")
      .key("tma.bulk_l2_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles", "cp.async.bulk issue to completion, source in L2")
      // From DRAM the copies fall in two levels, lines homed near and far, whose shares are the
      // buffer's pages': any centre of them moves with the run (docs/format.md, "Values that
      // vary"; the shares seen: docs/results/log/h100.md, "Figures behind comments").
      .key("tma.bulk_dram_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "cp.async.bulk issue to completion, source in DRAM (interquartile mean)", MT_KEY_VARIES)
      .key("tma.tensor_tile_bytes", MT_VALUE_INT_ARRAY, "bytes", "tile sizes (float tiles) of the tensor latency arrays")
      .key("tma.tensor_l2_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "cp.async.bulk.tensor.2d issue to completion, source in L2")
      .key("tma.tensor_dram_latency_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "cp.async.bulk.tensor.2d issue to completion, source in DRAM (interquartile mean)", MT_KEY_VARIES)
      // Percentiles of 256 copies a size: the tail of the far home, a level's edge, move them by
      // up to 7 % between runs from L2 and 20 % from DRAM (docs/format.md, "Values that vary").
      .key("tma.bulk_l2_latency_p10_cycles", MT_VALUE_FLOAT_ARRAY, "cycles", "from L2, 10th percentile per size",
           MT_KEY_VARIES)
      .key("tma.bulk_l2_latency_p90_cycles", MT_VALUE_FLOAT_ARRAY, "cycles", "from L2, 90th percentile per size",
           MT_KEY_VARIES)
      .key("tma.tensor_l2_latency_p10_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "tensor tiles from L2, 10th percentile per tile size", MT_KEY_VARIES)
      .key("tma.tensor_l2_latency_p90_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "tensor tiles from L2, 90th percentile per tile size", MT_KEY_VARIES)
      .key("tma.bulk_dram_latency_p10_cycles", MT_VALUE_FLOAT_ARRAY, "cycles", "the same, 10th percentile per size",
           MT_KEY_VARIES)
      .key("tma.bulk_dram_latency_p90_cycles", MT_VALUE_FLOAT_ARRAY, "cycles", "the same, 90th percentile per size",
           MT_KEY_VARIES)
      .key("tma.tensor_dram_latency_p10_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "tensor tiles from DRAM, 10th percentile per tile size", MT_KEY_VARIES)
      .key("tma.tensor_dram_latency_p90_cycles", MT_VALUE_FLOAT_ARRAY, "cycles",
           "tensor tiles from DRAM, 90th percentile per tile size", MT_KEY_VARIES)
      .backends(MT_BACKEND_CUDA, kNotSimulated)
      .min_compute_capability(9, 0)
      .budget_seconds(60)
      .run(hopper_tma::measure_latency);
}

memtopo::Probe throughput() {
  const std::vector<std::string> keys = {
      "tma.throughput_sizes_bytes", "tma.sm_bulk_gbps", "tma.sm_ldgsts_gbps", "tma.sm_ld_st_gbps", "tma.gpu_bulk_gbps",
      "tma.gpu_ldgsts_gbps", "tma.gpu_ld_st_gbps", "tma.sm_bulk_beats_ldgsts_from_bytes",
      "tma.sm_bulk_beats_ld_st_from_bytes", "tma.gpu_bulk_beats_ldgsts_from_bytes", "tma.gpu_bulk_beats_ld_st_from_bytes"};
  memtopo::Probe p("hopper-tma/throughput");
  // One SM's rates and the GPU's are 132 times apart: a panel each.
  p.plot(memtopo::Probe::Plot::panels("throughput", "scope", "bytes_per_transfer", "gbps", "method")
             .named("scope=one SM,every SM;method=cp.async.bulk,cp.async 16 B (LDGSTS),ld.global + st.shared"));
  p.summary("Global to shared memory throughput of cp.async.bulk against cp.async and ld+st, per SM and per GPU")
      .provides(keys)
      .key("tma.throughput_sizes_bytes", MT_VALUE_INT_ARRAY, "bytes", "transfer sizes of the throughput arrays");
  for (const char* scope : {"sm", "gpu"}) {
    const std::string s = scope, who = s == "sm" ? "one SM" : "all SMs together";
    p.key("tma." + s + "_bulk_gbps", MT_VALUE_FLOAT_ARRAY, "gbps", who + ", cp.async.bulk, per transfer size")
        .key("tma." + s + "_ldgsts_gbps", MT_VALUE_FLOAT_ARRAY, "gbps", who + ", cp.async (LDGSTS), per transfer size")
        // All SMs' ld + st copies of 64 KiB sit on the knee of the rate, where it moves between
        // runs (docs/format.md, "Values that vary"; docs/results/log/h100.md, "Validity").
        .key("tma." + s + "_ld_st_gbps", MT_VALUE_FLOAT_ARRAY, "gbps", who + ", ld.global + st.shared, per transfer size",
             s == "gpu" ? MT_KEY_VARIES : 0u)
        .key("tma." + s + "_bulk_beats_ldgsts_from_bytes", MT_VALUE_INT, "bytes",
             who + ": transfer size from which cp.async.bulk is faster than cp.async")
        .key("tma." + s + "_bulk_beats_ld_st_from_bytes", MT_VALUE_INT, "bytes",
             who + ": transfer size from which cp.async.bulk is faster than ld.global + st.shared");
  }
  return p.backends(MT_BACKEND_CUDA, kNotSimulated).min_compute_capability(9, 0).budget_seconds(60).run(hopper_tma::measure_throughput);
}

}  // namespace

MEMTOPO_PLUGIN("hopper-tma", "1.0.0", latency(), throughput())
