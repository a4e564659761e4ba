// Measurement kernels of the CUDA backend: the one translation unit that holds the
// __constant__ chase buffer, every kernel (one header each) and every launch.
// docs/measurement.md explains the design; in short:
//  - one thread per job; blocks claim SMs through atomicCAS on a per-SM flag, so each job
//    runs on the SM it asked for (or any free one) and no two jobs share an SM;
//  - each timed load is bracketed by clock64 reads, with a store of the loaded value to
//    shared memory before the second read (thesis, Figure 4.3) so the read waits for the load;
//  - samples go to a small shared-memory buffer, never to global memory while timing;
//  - descriptors are read and results written with .cg accesses (L2 only), so the kernel's
//    own bookkeeping never occupies the L1 under test.
#include "kernels.cuh"

namespace memtopo::cuda::detail {
__constant__ uint32_t c_chase[kConstantElems];
}  // namespace memtopo::cuda::detail

#include "average_kernel.cuh"
#include "count_kernel.cuh"
#include "fine_kernel.cuh"
#include "sequence_kernel.cuh"
#include "util_kernels.cuh"

namespace memtopo::cuda {
using namespace detail;
namespace detail {

template <bool Wide>
const void* kernel_symbol(Kernel k) {
  switch (k) {
    case Kernel::Fine: return reinterpret_cast<const void*>(&fine_kernel<Wide>);
    case Kernel::Average: return reinterpret_cast<const void*>(&average_kernel<Wide>);
    case Kernel::Sequence: return reinterpret_cast<const void*>(&sequence_kernel<Wide>);
    case Kernel::Count: return reinterpret_cast<const void*>(&count_kernel<Wide>);
  }
  return nullptr;
}

constexpr uint32_t kChaseThreads = 32;  // one warp: thread 0 chases, the warp copies shared arrays

}  // namespace detail

uint32_t fine_sample_bytes(uint32_t steps_per_pass) { return 2 * (steps_per_pass + 1) * 4; }
uint32_t count_sample_bytes() { return (kCountSteps + 2) * 4; }

cudaError_t launch_count(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                         uint32_t shared_array_bytes, const ParamBank* bank, uint32_t warps) {
  const uint32_t dyn = count_sample_bytes() + shared_array_bytes;
  const uint32_t threads = kChaseThreads * (warps > 1 ? (warps < 32 ? warps : 32) : 1);
  if (bank)
    count_kernel<true><<<blocks, threads, dyn>>>(jobs, t, *bank);
  else
    count_kernel<false><<<blocks, threads, dyn>>>(jobs, t, NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_fine(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks, uint32_t steps_per_pass,
                        uint32_t shared_array_bytes, const ParamBank* bank) {
  const uint32_t dyn = fine_sample_bytes(steps_per_pass) + shared_array_bytes;
  if (bank)
    fine_kernel<true><<<blocks, kChaseThreads, dyn>>>(jobs, t, steps_per_pass, *bank);
  else
    fine_kernel<false><<<blocks, kChaseThreads, dyn>>>(jobs, t, steps_per_pass, NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_average(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                           uint32_t shared_array_bytes, const ParamBank* bank) {
  if (bank)
    average_kernel<true><<<blocks, kChaseThreads, 8 + shared_array_bytes>>>(jobs, t, *bank);
  else
    average_kernel<false><<<blocks, kChaseThreads, 8 + shared_array_bytes>>>(jobs, t, NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_sequence(const DevicePhase* phases, uint32_t phase_count, const ClaimTables& t, uint32_t blocks,
                            uint32_t threads, uint32_t record_steps, uint32_t shared_array_bytes,
                            unsigned long long phase_wait_cycles, const ParamBank* bank) {
  const uint32_t dyn = fine_sample_bytes(record_steps) + shared_array_bytes;
  if (bank)
    sequence_kernel<true><<<blocks, threads, dyn>>>(phases, phase_count, t, record_steps, phase_wait_cycles,
                                                    *bank);
  else
    sequence_kernel<false><<<blocks, threads, dyn>>>(phases, phase_count, t, record_steps, phase_wait_cycles,
                                                     NoBank{});
  return cudaGetLastError();
}

cudaError_t launch_overhead(uint32_t* out_latency, uint32_t samples) {
  overhead_kernel<<<1, 1, fine_sample_bytes(kStepsPerPass)>>>(out_latency, samples);
  return cudaGetLastError();
}

cudaError_t launch_stride_fill(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start, uint64_t count) {
  const uint64_t want = (count + 255) / 256;
  const uint32_t blocks = uint32_t(want < 4096 ? (want ? want : 1) : 4096);
  stride_fill_kernel<<<blocks, 256>>>(buffer, elems, stride, start, count);
  return cudaGetLastError();
}

cudaError_t launch_stride_pointer_fill(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start,
                                       uint64_t count) {
  const uint64_t want = (count + 255) / 256;
  const uint32_t blocks = uint32_t(want < 4096 ? (want ? want : 1) : 4096);
  stride_pointer_fill_kernel<<<blocks, 256>>>(buffer, elems, stride, start, count);
  return cudaGetLastError();
}

cudaError_t launch_constant_base(unsigned long long* out) {
  constant_base_kernel<<<1, 1>>>(out);
  return cudaGetLastError();
}

cudaError_t launch_smid_count(uint32_t* out_nsmid) {
  smid_count_kernel<<<1, 1>>>(out_nsmid);
  return cudaGetLastError();
}

cudaError_t configure_kernel(Kernel k, bool wide, int carveout_percent, uint32_t dynamic_shared_bytes) {
  const void* f = wide ? kernel_symbol<true>(k) : kernel_symbol<false>(k);
  cudaError_t e = cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
                                       carveout_percent < 0 ? int(cudaSharedmemCarveoutDefault) : carveout_percent);
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_shared_bytes));
}

cudaError_t upload_constant(const uint32_t* host, uint64_t elems, uint32_t offset_elems) {
  return cudaMemcpyToSymbol(c_chase, host, elems * 4, size_t(offset_elems) * 4, cudaMemcpyHostToDevice);
}

cudaError_t load_kernels() {
  const void* all[] = {kernel_symbol<false>(Kernel::Fine),
                       kernel_symbol<false>(Kernel::Average),
                       kernel_symbol<false>(Kernel::Count),
                       kernel_symbol<false>(Kernel::Sequence),
                       kernel_symbol<true>(Kernel::Fine),
                       kernel_symbol<true>(Kernel::Average),
                       kernel_symbol<true>(Kernel::Count),
                       kernel_symbol<true>(Kernel::Sequence),
                       reinterpret_cast<const void*>(&overhead_kernel),
                       reinterpret_cast<const void*>(&stride_fill_kernel),
                       reinterpret_cast<const void*>(&smid_count_kernel),
                       reinterpret_cast<const void*>(&stride_pointer_fill_kernel),
                       reinterpret_cast<const void*>(&constant_base_kernel)};
  for (const void* f : all) {
    cudaFuncAttributes a{};
    if (cudaError_t e = cudaFuncGetAttributes(&a, f); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace memtopo::cuda
