// t-cuda-faults: a probe whose kernel writes through a bad pointer, which leaves its CUDA
// context unusable (a sticky error), and a probe after it that launches a trivial kernel. With
// probe isolation the second runs in a fresh worker and succeeds; in one process it cannot.
#include <memtopo/device/kernel.hpp>
#include <memtopo/probe.hpp>

namespace {

__global__ void write_through(unsigned long long* where) { *where = 1; }

__global__ void write_one(unsigned long long* out) { *out = 1; }

void illegal_address(memtopo::Context& ctx) {
  // An address no allocation holds: the kernel faults with an illegal memory access.
  auto* bad = reinterpret_cast<unsigned long long*>(uintptr_t(0x10));
  memtopo::device::launch_cuda(ctx, "write_through", write_through, memtopo::device::LaunchConfig{}, bad);
  ctx.result("t_cuda.illegal_ok", int64_t(1));
}

void after(memtopo::Context& ctx) {
  memtopo::device::Buffer<unsigned long long> out(ctx, 1);
  memtopo::device::launch_cuda(ctx, "write_one", write_one, memtopo::device::LaunchConfig{}, out.get());
  ctx.result("t_cuda.after_ok", int64_t(out.download()[0]));
}

}  // namespace

MEMTOPO_PLUGIN("t-cuda-faults", "1.0.0",
               memtopo::Probe("t-cuda-faults/illegal-address")
                   .summary("a kernel that writes through a bad pointer (sticky CUDA error)")
                   .provides({"t_cuda.illegal_ok"})
                   .backends(MT_BACKEND_CUDA, "a CUDA fault")
                   .run(illegal_address),
               memtopo::Probe("t-cuda-faults/after")
                   .summary("a trivial kernel after the faulting one")
                   .provides({"t_cuda.after_ok"})
                   .uses({"t_cuda.illegal_ok"})
                   .backends(MT_BACKEND_CUDA, "a CUDA fault")
                   .run(after))
