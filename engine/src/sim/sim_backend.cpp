// The simulated GPU behind mt_backend: the jobs of measure.h executed on the access-level
// model of sim_gpu.hpp (sim_runner.cpp). Semantics: docs/simulator.md.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "engine/jobs.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "sim/builtin_device.hpp"
#include "sim/sim_gpu.hpp"
#include "sim/sim_model.hpp"
#include "sim/kernel/kernel_runtime.hpp"
#include "sim/sim_runner.hpp"

namespace memtopo::engine {
namespace {

class SimDevice final : public Device {
 public:
  explicit SimDevice(sim::Model model) : gpu_(model), kernels_(gpu_) {
    limits_.capabilities = MT_CAP_SAMPLES | MT_CAP_TOTAL | MT_CAP_COUNTS | MT_CAP_RANDOM | MT_CAP_POINTERS |
                           MT_CAP_STREAMS | MT_CAP_PUMP | MT_CAP_SEQUENCE | MT_CAP_WIDE_STRIDE | MT_CAP_KERNELS;
    limits_.streams_max = 32;
    limits_.pump_warps_max = sim::kSimPumpWarpsMax;
    backend_.struct_size = sizeof(backend_);
    backend_.self = this;
    backend_.name = "sim";
    backend_.capabilities = limits_.capabilities;
    backend_.streams_max = limits_.streams_max;
    backend_.pump_warps_max = limits_.pump_warps_max;
    backend_.run_jobs = &run_jobs;
    backend_.timing_overhead = &timing_overhead;
    backend_.alloc_buffer = &alloc_buffer;
    backend_.free_buffer = &free_buffer;
    backend_.copy_buffer = &copy_buffer;
    backend_.fill_buffer = &fill_buffer;
    backend_.launch_kernel = &launch_kernel;
    backend_.occupancy = &occupancy;
    backend_.kernel_ops = kernels_.ops();
    backend_.count = &count;
    backend_.attachment = &attachment;
    backend_.time_link_copies = &time_link_copies;
  }
  const mt_backend* backend() const override { return &backend_; }
  const mt_device_info& info() const override { return gpu_.model().info; }
  std::string description() const override { return gpu_.model().origin; }
  void begin_probe() override {
    gpu_.restart();
    kernels_.restart();
  }

 private:
  static int run_jobs(void* self, mt_job* const* jobs, size_t n, char* err, size_t err_size) noexcept {
    auto* dev = static_cast<SimDevice*>(self);
    try {
      JobCall call;
      if (auto e = read_jobs(jobs, n, call); !e.empty()) return fail(err, err_size, e);
      if (auto e = check_jobs(call, dev->info(), dev->limits_); !e.empty()) return fail(err, err_size, e);
      if (call.sequence)
        sim::run_sequence(dev->gpu_, call);
      else
        sim::run_concurrent(dev->gpu_, call);
      write_results(call, jobs);
      return 0;
    } catch (const std::exception& e) {
      return fail(err, err_size, std::string("simulated GPU: ") + e.what());
    }
  }
  static int attachment(void* self, mt_attachment* out, char* err, size_t err_size) noexcept {
    if (!out || out->struct_size < sizeof(mt_attachment)) return fail(err, err_size, "attachment: no output");
    sim::fill_attachment(static_cast<SimDevice*>(self)->gpu_.model().link, *out);
    return 0;
  }
  static int time_link_copies(void* self, mt_link_copy* c, char* err, size_t err_size) noexcept {
    if (!c || c->struct_size < sizeof(mt_link_copy) || (c->repeats && !c->elapsed_ns))
      return fail(err, err_size, "time_link_copies: no copy or no room for its times");
    std::string why;
    const int rc = sim::time_link_copies(static_cast<SimDevice*>(self)->gpu_.model().link, *c, why);
    if (rc != 0) fail(err, err_size, why);
    return rc;
  }
  static int timing_overhead(void* self, double* out, char* err, size_t err_size) {
    if (!out) return fail(err, err_size, "timing_overhead: no output");
    *out = double(static_cast<SimDevice*>(self)->gpu_.model().timing_overhead_cycles);
    return 0;
  }

  // Probe kernels (sim/kernel/): buffers, launches and what the toolkit calls.
  template <class F>
  static int kernel_call(void* self, const char* what, char* err, size_t err_size, F&& f) noexcept {
    try {
      f(static_cast<SimDevice*>(self)->kernels_);
      return 0;
    } catch (const std::exception& e) {
      return fail(err, err_size, std::string("simulated GPU: ") + what + ": " + e.what());
    }
  }
  static int alloc_buffer(void* self, uint64_t bytes, void** out, char* err, size_t err_size) noexcept {
    return kernel_call(self, "alloc_buffer", err, err_size, [&](sim::kernel::KernelRuntime& k) { *out = k.alloc(bytes); });
  }
  static void free_buffer(void* self, void* p) noexcept { static_cast<SimDevice*>(self)->kernels_.free(p); }
  static int copy_buffer(void* self, void* dst, const void* src, uint64_t bytes, uint32_t kind, char* err,
                         size_t err_size) noexcept {
    return kernel_call(self, "copy_buffer", err, err_size,
                       [&](sim::kernel::KernelRuntime& k) { k.copy(dst, src, bytes, kind); });
  }
  static int fill_buffer(void* self, void* dst, int value, uint64_t bytes, char* err, size_t err_size) noexcept {
    return kernel_call(self, "fill_buffer", err, err_size,
                       [&](sim::kernel::KernelRuntime& k) { k.fill(dst, value, bytes); });
  }
  static int launch_kernel(void* self, const mt_kernel_launch* l, mt_kernel_report* r, char* err,
                           size_t err_size) noexcept {
    try {
      if (l) static_cast<SimDevice*>(self)->kernels_.check_shape(*l);  // the shape first: a refusal is no failure
    } catch (const sim::kernel::Refused& e) {
      fail(err, err_size, std::string("simulated GPU: ") + e.what());
      return MT_LAUNCH_REFUSED;
    } catch (const std::exception&) {
    }
    return kernel_call(self, "a probe kernel", err, err_size, [&](sim::kernel::KernelRuntime& k) {
      if (!l || !r || !l->thread_main) throw Error("no launch, report or thread function");
      mt_kernel_report out{};
      out.struct_size = sizeof out;
      k.launch(*l, out);
      const uint32_t size = r->struct_size;
      std::memcpy(r, &out, std::min<size_t>(size ? size : sizeof out, sizeof out));
      r->struct_size = size ? size : uint32_t(sizeof out);
    });
  }
  static int occupancy(void* self, const mt_kernel_launch* l, mt_occupancy* out, char* err, size_t err_size) noexcept {
    return kernel_call(self, "occupancy", err, err_size, [&](sim::kernel::KernelRuntime& k) {
      if (!l || !out) throw Error("no launch or output");
      mt_occupancy o{};
      o.struct_size = sizeof o;
      try {
        o.blocks_per_sm = k.blocks_per_sm(*l);
      } catch (const sim::kernel::Refused&) {
        o.blocks_per_sm = 0;  // a shape the device cannot run holds no block
      }
      o.clusters = k.max_active_clusters(*l);
      const uint32_t size = out->struct_size ? out->struct_size : uint32_t(sizeof o);
      std::memcpy(out, &o, std::min<size_t>(size, sizeof o));
      out->struct_size = size;
    });
  }

  // The model counts every load and write-back as it happens: the counts of the work are what
  // they grew by while it ran (one pass).
  static int count(void* self, int (*work)(void*), void* arg, mt_counts* out, char* err, size_t err_size) noexcept {
    if (!work || !out) return fail(err, err_size, "count: no work or output");
    if (counting_off()) {
      fail(err, err_size, "hardware counters switched off (MEMTOPO_NO_COUNTERS)");
      return MT_COUNT_REFUSED;
    }
    const sim::Gpu& gpu = static_cast<SimDevice*>(self)->gpu_;
    const sim::Gpu::Counts a = gpu.counts();
    if (const int rc = work(arg); rc != 0) return rc;
    const sim::Gpu::Counts b = gpu.counts();
    const double sector = sim::Gpu::kCountedSectorBytes;
    mt_counts c{};
    c.struct_size = sizeof c;
    c.passes = 1;
    c.sector_bytes = sim::Gpu::kCountedSectorBytes;
    c.l1_load_sectors = double(b.l1_load - a.l1_load);
    c.l1_load_hit_sectors = double(b.l1_load_hit - a.l1_load_hit);
    c.l2_read_sectors = double(b.l2_read - a.l2_read);
    c.l2_read_hit_sectors = double(b.l2_read_hit - a.l2_read_hit);
    c.l2_write_sectors = double(b.l2_write - a.l2_write);
    c.l2_to_sm_bytes = c.l2_read_sectors * sector;  // no requests merged: each read is delivered
    c.dram_read_bytes = double(b.dram_read_bytes - a.dram_read_bytes);
    c.dram_write_bytes = double(b.dram_write_bytes - a.dram_write_bytes);
    // Only what was asked for, as a GPU's counters give it: a probe that forgets to ask fails here.
    c.wanted = out->struct_size >= offsetof(mt_counts, wanted) + sizeof(uint32_t) ? out->wanted : 0;
    if (c.wanted) {
      auto keep = [&](uint32_t bit, double& field) { field = (c.wanted & bit) ? field : -1; };
      keep(MT_COUNT_L1, c.l1_load_sectors);
      keep(MT_COUNT_L1, c.l1_load_hit_sectors);
      keep(MT_COUNT_L2_READ, c.l2_read_sectors);
      keep(MT_COUNT_L2_HIT, c.l2_read_hit_sectors);
      keep(MT_COUNT_L2_WRITE, c.l2_write_sectors);
      keep(MT_COUNT_TO_SM, c.l2_to_sm_bytes);
      keep(MT_COUNT_DRAM, c.dram_read_bytes);
      keep(MT_COUNT_DRAM, c.dram_write_bytes);
    }
    const uint32_t size = out->struct_size ? out->struct_size : uint32_t(sizeof c);
    std::memcpy(out, &c, std::min<size_t>(size, sizeof c));
    out->struct_size = size;
    return 0;
  }

  sim::Gpu gpu_;
  sim::kernel::KernelRuntime kernels_;
  BackendLimits limits_;
  mt_backend backend_{};
};

}  // namespace

const char* sim_builtin_description() { return sim::kBuiltinDeviceToml; }

namespace {

// The description at `path`, read and checked, or the built-in device for an empty path.
sim::Model read_description(const std::string& path, const ReplayMap& replay) {
  if (path.empty())
    return sim::load_model(sim::kBuiltinDeviceToml, "built-in device (hopper-like.toml)", "sim (built-in)", replay);
  const std::string text =
      read_input_file(path, "a simulated device description's TOML file (e.g. examples/devices/hopper-like.toml)");
  return sim::load_model(text, path, "sim:" + path, replay);
}

}  // namespace

std::unique_ptr<Device> open_sim(const std::string& path, const ReplayMap& replay) {
  return std::make_unique<SimDevice>(read_description(path, replay));
}

void check_sim_description(const std::string& path, const ReplayMap& replay) { (void)read_description(path, replay); }

}  // namespace memtopo::engine
