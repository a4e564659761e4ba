// The kernel of shared-memory/banks (banks_run.cu): warps of lanes, each re-reading one word of
// shared memory in a timed dependent chain, written with the device toolkit so that it runs on
// a CUDA GPU and on the simulated GPU. docs/shared-memory.md.
#pragma once

#include <cstdint>
#include <vector>

#include <memtopo/probe.hpp>

namespace shmem {

// Raw cycles per load (the timing's own cost included) of `warps` warps of `lanes` lanes, lane
// c = warp x lanes + lane re-reading the `width`-byte word at 4-byte word c x stride of a 16 KiB
// shared array, 8 loads untimed then 256 timed each; interruptions of the warp (the SM was
// away) are left out: above twice the thread's fastest load, or `ceiling`.
double bank_load_cycles(const memtopo::Context& ctx, uint32_t stride, uint32_t lanes, uint32_t warps, uint32_t width,
                        uint32_t ceiling);

// Cycles of each of `repeats` windows of one lane's pointer chase of `loads` (a multiple of 32)
// dependent 4-byte shared loads, the window's clock reads included.
// Each of `loads` timed loads of one lane re-reading one word, raw cycles (the timing's cost
// included): the samples whose spread tells a chase's noise (analysis::noise_excess).
std::vector<double> one_lane_samples(const memtopo::Context& ctx, uint32_t loads);

std::vector<double> chase_window_cycles(const memtopo::Context& ctx, uint32_t loads, uint32_t repeats);

}  // namespace shmem
