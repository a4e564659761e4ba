// occupancy-roofline: Lemeire's occupancy roofline and pipeline model (paper 004) on NVIDIA
// GPUs. Three probes: per compute instruction type and per load type (two probes, since only
// the loads run on the simulated GPU) the peak, the ridge point and the issue and completion
// latencies; and the FFMA throughput when warps diverge into 2 .. 32 paths.
#include <cstdint>

#include <memtopo/probe.hpp>

#include "probes.hpp"
#include "roofline_analysis.hpp"

namespace {

using occupancy_roofline::OpInfo;

// The roofline probe of one family of instruction types: the compute types (`loads` false) or
// the load types. Their keys, options and plot are alike; only the types differ.
memtopo::Probe roofline_probe(const std::string& name, bool loads) {
  std::vector<const OpInfo*> family;
  for (const OpInfo& o : occupancy_roofline::ops())
    if (occupancy_roofline::is_load(o.op) == loads) family.push_back(&o);
  std::vector<std::string> keys;
  std::string all;
  for (const OpInfo* o : family) {
    const std::string k = std::string("roofline.") + o->name + "_";
    for (const std::string& suffix : occupancy_roofline::key_suffixes()) keys.push_back(k + suffix);
    all += (all.empty() ? "" : ",") + std::string(o->name);
  }
  std::vector<std::string> names(occupancy_roofline::ops().size());
  for (const OpInfo& o : occupancy_roofline::ops())
    if (size_t(o.op) < names.size()) names[size_t(o.op)] = o.name;
  std::string labels;  // the names of the `op` column's values 0, 1, ... (of every type)
  for (const std::string& n : names) labels += (labels.empty() ? "" : ",") + n;
  memtopo::Probe p(name);
  p.plot(memtopo::Probe::Plot::panels("instructions", "op", "warps", "ops_per_cycle_per_sm", "ilp")
             .named(labels)
             .marks("y:roofline.{panel}_peak_ops_per_cycle_per_sm;x:roofline.{panel}_ridge_warps_per_sm"));
  p.summary(loads ? "Occupancy roofline of the loads from shared memory, the L1, the L2 and DRAM: peak loads per cycle per "
                    "SM, ridge point, issue and completion latency"
                  : "Occupancy roofline per compute instruction type: peak ops per cycle per SM, ridge point, issue and "
                    "completion latency")
      .provides(keys)
      .option("ops", MT_VALUE_STRING_ARRAY, all, "instruction types measured (of " + all + ")")
      .option("instructions_per_thread", MT_VALUE_INT, "0",
              "timed instructions per thread and point (multiples of 128); 0: 4096 on a GPU, 128 on the simulated GPU")
      .range("0", "1048576");
  for (const OpInfo* o : family) {
    const std::string k = std::string("roofline.") + o->name + "_", what = std::string(o->sass) + " (" + o->ptx + ")";
    // The headline peaks: single, double and half precision FMA.
    const bool headline = std::string(o->name) == "ffma" || std::string(o->name) == "dfma" || std::string(o->name) == "hfma2";
    // DRAM's plateau is flat and its height moves with each run's rows (4.7 % between two runs
    // of one H200), and the ridge with it: 16 or 32 warps (docs/occupancy-roofline.md).
    const bool dram = o->op == occupancy_roofline::Op::GlobalLoadDram;
    const uint32_t ridge_flags = MT_KEY_ESTIMATE | (dram ? MT_KEY_VARIES : 0u);
    p.role(k + "peak_ops_per_cycle_per_sm", std::string("compute.peak_ops_per_cycle_per_sm@") + o->name)
        .key(k + "peak_ops_per_cycle_per_sm", MT_VALUE_FLOAT, "", what + ": most thread instructions per cycle per SM",
             headline ? MT_KEY_HEADLINE : 0u)
        .key(k + "ridge_warps_per_sm", MT_VALUE_INT, "", what + ": fewest warps per SM reaching 95 % of the peak",
             ridge_flags)
        .key(k + "ridge_ilp", MT_VALUE_FLOAT, "",
             what + ": independent chains per thread needed at the ridge warps (where the rates cross the mark)",
             ridge_flags)
        .key(k + "ilp1_ridge_warps_per_sm", MT_VALUE_INT, "",
             what + ": fewest warps per SM reaching 95 % of the peak with one chain per thread", ridge_flags)
        .key(k + "completion_latency_cycles", MT_VALUE_FLOAT, "cycles",
             what + ": cycles from one instruction to a dependent one, one warp")
        .key(k + "issue_latency_cycles", MT_VALUE_FLOAT, "cycles",
             what + ": cycles between independent instructions of one warp alone");
  }
  // The compute chains never reach the simulated GPU: skipped there at once, not after the
  // load types' minutes of simulated warps.
  if (!loads)
    p.backends(MT_BACKEND_CUDA,
               "compute chains: the simulated GPU models the memory hierarchy, not the instruction pipelines "
               "(occupancy-roofline/loads measures the load types there)");
  // The load types on the simulated GPU run every resident thread's chains, SM by SM: the
  // longest probe of a large simulated device, which the runner starts early for a budget this
  // size (docs/occupancy-roofline.md).
  return p.budget_seconds(loads ? 90 : 30)
      .run(loads ? occupancy_roofline::measure_loads : occupancy_roofline::measure_instructions);
}

memtopo::Probe instructions() { return roofline_probe("occupancy-roofline/instructions", false); }
memtopo::Probe loads() { return roofline_probe("occupancy-roofline/loads", true); }

memtopo::Probe divergence() {
  return memtopo::Probe("occupancy-roofline/divergence")
      .summary("FFMA throughput with warps split into 1, 2, 4, 8, 16 and 32 lane-dependent paths")
      .provides({"roofline.divergence_paths", "roofline.divergence_ops_per_cycle_per_sm", "roofline.divergence_slowdown"})
      .option("instructions_per_thread", MT_VALUE_INT, "4096", "timed FFMAs per thread and path count (multiples of 128)")
      .range("128", "1048576")
      .key("roofline.divergence_paths", MT_VALUE_INT_ARRAY, "", "paths per warp of the divergence arrays (1: none)")
      .key("roofline.divergence_ops_per_cycle_per_sm", MT_VALUE_FLOAT_ARRAY, "",
           "FFMA thread instructions per cycle per SM with the warps split into that many paths")
      .key("roofline.divergence_slowdown", MT_VALUE_FLOAT_ARRAY, "",
           "FFMA ops per cycle with one path over those with that many paths")
      .backends(MT_BACKEND_CUDA, "FFMA chains: the simulated GPU models the memory hierarchy, not the instruction pipelines")
      .budget_seconds(30)
      .run(occupancy_roofline::measure_divergence);
}

}  // namespace

MEMTOPO_PLUGIN("occupancy-roofline", "1.1.0", instructions(), loads(), divergence())
