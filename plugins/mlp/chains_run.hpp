// One point of mlp/loads-in-flight on the device: `warps` x `lanes` threads of one block, each
// with `lane_chains` chains of random .cg loads in lockstep (chains_run.cu, written with the
// device toolkit's random chains, so that it runs on a CUDA GPU and on the simulated GPU).
// docs/mlp.md.
#pragma once

#include <cstdint>

#include <memtopo/probe.hpp>

namespace mlp {

struct ChainsLaunch {
  uint32_t warps = 1, lanes = 1, lane_chains = 1;  // lane_chains: 1, 2, 4 or 8
  uint64_t footprint_bytes = 0;                    // random lines over this many bytes
  uint64_t warmup_steps = 0, steps = 0;            // of each chain (lockstep steps of each lane)
  uint64_t cool_steps = 0;                         // untimed steps of each chain after its timed ones
  uint32_t ceiling_cycles = 0;                     // a step above it is an interruption (0: none)
  uint64_t seed = 1;
};

struct ChainsRun {
  uint64_t cycles = 0;    // of every timed load that was no outlier (a step's cycles per chain)
  uint64_t outliers = 0;  // loads of steps above the ceiling
  uint64_t span_cycles = 0;  // the first chain's first timed step to the last chain's end
  double present_chains = 0; // chains with a load out, on average (present_chains())
};

ChainsRun run_chains(const memtopo::Context& ctx, const ChainsLaunch& l);

}  // namespace mlp
