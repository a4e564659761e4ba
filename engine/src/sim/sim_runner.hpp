// Executes the jobs of one run_jobs call on the simulated GPU (docs/simulator.md,
// "Measurement semantics").
#pragma once

#include "engine/jobs.hpp"
#include "sim/sim_gpu.hpp"

namespace memtopo::sim {

// Pump warps the simulator runs: each pump load is simulated one by one, so a pump of many
// warps costs many times the timed loads in CPU time.
constexpr uint32_t kSimPumpWarpsMax = 1;

// Jobs of order 0: interleaved, one load of every stream of every job in turn, as concurrent
// SMs share the L2.
// Throws memtopo::Error when the arrays do not fit the simulated address space.
void run_concurrent(Gpu& gpu, engine::JobCall& call);
// A sequence: every job in order, alone.
void run_sequence(Gpu& gpu, engine::JobCall& call);

}  // namespace memtopo::sim
