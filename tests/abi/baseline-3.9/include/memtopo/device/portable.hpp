// memtopo device toolkit: one kernel source for both backends. A kernel is an ordinary
// function marked MEMTOPO_KERNEL and written with this toolkit (threads, clocks, loads per
// path, shared memory, barriers, clusters, atomics). Under nvcc it is compiled for the GPU as
// well as for the host; launch() (memtopo/device/launch.hpp) runs the GPU code on a CUDA GPU
// and the host code on the simulated GPU, where every thread is a context of its own that the
// simulator schedules by its clock and each toolkit operation asks the simulated hierarchy
// what it costs (mt_kernel_ops, measure.h). Plain C++ in a kernel runs as it is and costs no
// simulated time; what must be timed goes through the toolkit.
#pragma once

#include <cstdint>

#include "memtopo/measure.h"

#if defined(__CUDACC__)
#define MEMTOPO_HD __host__ __device__
#define MEMTOPO_INLINE __host__ __device__ __forceinline__
#else
#define MEMTOPO_HD
#define MEMTOPO_INLINE inline
#endif

// A kernel: `MEMTOPO_KERNEL void my_kernel(uint64_t* out, unsigned n) { ... }`, launched with
// memtopo::device::launch<my_kernel>(ctx, "my_kernel", cfg, out, n). Functions it calls are
// MEMTOPO_HD (or MEMTOPO_INLINE) too.
#define MEMTOPO_KERNEL MEMTOPO_HD

namespace memtopo::device {

// Dimensions of a grid, a block or a cluster.
struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
  constexpr uint32_t count() const { return x * y * z; }
};

namespace detail {

// What the simulated GPU's operations are while launch() runs a kernel there. One per plugin
// (plugins hide their symbols), set before and cleared after each simulated launch.
inline const mt_kernel_ops* g_sim_ops = nullptr;

inline const mt_kernel_ops& sim() { return *g_sim_ops; }

inline mt_thread_place sim_place() {
  mt_thread_place p{};
  p.struct_size = sizeof p;
  sim().place(sim().self, &p);
  return p;
}

// One load of 4 or 8 bytes; the value it read.
inline uint64_t sim_load_word(uint32_t path, uint64_t address, uint32_t bytes = 4) {
  uint64_t value[2] = {0, 0};
  sim().load(sim().self, path, &address, 1, bytes, value);
  return bytes == 4 ? uint64_t(uint32_t(value[0])) : value[0];
}

}  // namespace detail
}  // namespace memtopo::device
