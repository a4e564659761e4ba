// The kernel of shared-memory/banks (banks_run.cu): warps of lanes, each re-reading one word of
// shared memory in a timed dependent chain, written with the device toolkit so that it runs on
// a CUDA GPU and on the simulated GPU. docs/shared-memory.md.
#pragma once

#include <cstdint>

#include <memtopo/probe.hpp>

namespace shmem {

// Raw cycles per load (the timing's own cost included) of `warps` warps of `lanes` lanes, lane
// c = warp x lanes + lane re-reading the `width`-byte word at 4-byte word c x stride of a 16 KiB
// shared array, 8 loads untimed then 256 timed each; a load above `ceiling` cycles is an
// interruption of the warp (the SM was away), left out.
double bank_load_cycles(const memtopo::Context& ctx, uint32_t stride, uint32_t lanes, uint32_t warps, uint32_t width,
                        uint32_t ceiling);

}  // namespace shmem
