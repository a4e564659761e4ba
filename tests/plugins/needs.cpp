// t-needs: probes that declare what they need of the device (a backend, a compute
// capability), one depending on a CUDA-only probe, and one without needs.
#include <memtopo/probe.hpp>

static memtopo::Probe cuda_only() {
  return memtopo::Probe("t-needs/cuda-only")
      .provides({"t.cuda_bytes"})
      .backends(MT_BACKEND_CUDA, "a kernel the simulated GPU cannot run")
      .run([](memtopo::Context& ctx) { ctx.result("t.cuda_bytes", 1); });
}
static memtopo::Probe cuda_user() {
  return memtopo::Probe("t-needs/cuda-user")
      .provides({"t.cuda_user_bytes"})
      .requires_keys({"t.cuda_bytes"})
      .run([](memtopo::Context& ctx) { ctx.result("t.cuda_user_bytes", 2); });
}
static memtopo::Probe future() {
  return memtopo::Probe("t-needs/future")
      .provides({"t.future_bytes"})
      .min_compute_capability(10, 0)
      .run([](memtopo::Context& ctx) { ctx.result("t.future_bytes", 3); });
}
static memtopo::Probe hopper() {
  return memtopo::Probe("t-needs/hopper")
      .provides({"t.hopper_bytes"})
      .backends(MT_BACKEND_CUDA | MT_BACKEND_SIM, "")
      .min_compute_capability(9, 0)
      .run([](memtopo::Context& ctx) { ctx.result("t.hopper_bytes", 4); });
}
static memtopo::Probe anywhere() {
  return memtopo::Probe("t-needs/anywhere").provides({"t.anywhere_bytes"}).run([](memtopo::Context& ctx) {
    ctx.result("t.anywhere_bytes", 5);
  });
}
MEMTOPO_PLUGIN("t-needs", "1.0.0", cuda_only(), cuda_user(), future(), hopper(), anywhere())
