// memtopo measurement: the C++ layer over the measurement backend (measure.h). A probe
// describes jobs (memtopo::Job), runs them together through Backend::run, and reads each
// one's JobResult:
//
//   memtopo::Job j;
//   j.space = MT_SPACE_GLOBAL_CA;
//   j.array = &chase.array;
//   j.warmup_steps = 2 * chase.cycle_length();
//   j.steps = 4096;                      // record: MT_RECORD_SAMPLES (each load's latency)
//   const memtopo::JobResult r = ctx.backend().run(j);
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <type_traits>
#include <string>
#include <vector>

#include "memtopo/abi.h"
#include "memtopo/errors.hpp"

namespace memtopo {

// A chase array owned on the host side. Build it with the recipes in memtopo/recipes.hpp
// or fill `next` yourself.
struct ChaseArray {
  std::vector<uint32_t> next;   // explicit arrays
  uint64_t elems = 0;           // stride arrays: length in elements
  uint64_t stride_elems = 0;    // stride arrays: step in elements (0 = explicit array)

  static ChaseArray stride(uint64_t footprint_bytes, uint64_t stride_bytes) {
    ChaseArray a;
    a.elems = footprint_bytes / 4;
    a.stride_elems = stride_bytes / 4;
    return a;
  }
  uint64_t length() const { return stride_elems ? elems : next.size(); }
  uint64_t footprint_bytes() const { return length() * 4; }

  mt_chase_array c() const {
    mt_chase_array a{};
    a.struct_size = sizeof(a);
    if (stride_elems) {
      a.kind = MT_ARRAY_STRIDE;
      a.elems = elems;
      a.stride_elems = stride_elems;
    } else {
      a.kind = MT_ARRAY_EXPLICIT;
      a.next = next.data();
      a.elems = next.size();
    }
    return a;
  }
};

// How fast a job's loads come (mt_rate): streams and gaps, or one timed stream and a pump.
struct Rate {
  uint32_t streams = 1;
  uint32_t gap_cycles = 0;
  uint32_t pump_warps = 0, pump_lanes = 0, pump_cycles = 0, probe_loads = 32;
  uint32_t pump_total() const { return pump_warps * pump_lanes; }
};

// One job (mt_job; measure.h documents every field). Several jobs may share one array, and
// then one device buffer.
struct Job {
  // who
  int32_t sm = -1;
  int32_t block = -1;  // sequences: the logical block
  uint32_t lane = 0;   // sequences: the thread of the block
  uint32_t order = 0;  // 0: at once with the call's other jobs; k > 0: place in a sequence
  int32_t shared_carveout_percent = -1;
  // what it loads
  mt_space space = MT_SPACE_GLOBAL_CA;
  mt_pattern pattern = MT_PATTERN_CHASE;
  const ChaseArray* array = nullptr;
  uint32_t start = 0;
  uint64_t random_stride_bytes = 0;  // RANDOM
  uint64_t seed = 1;                 // RANDOM
  uint64_t warmup_steps = 0;
  uint64_t steps = 0;
  Rate rate;
  // Counted chase over a stride array, rate.streams > 1: the streams start spread along the
  // cycle, together loading it as one chase would (mt_job::stagger_streams).
  bool stagger_streams = false;
  // what it returns
  mt_record record = MT_RECORD_SAMPLES;
  bool want_index = true;           // SAMPLES: the element index of each load too
  bool timed = true;                // sequences: false loads without timing
  uint32_t slow_cycles = 0;         // COUNTS: raw threshold
  uint32_t slow_max_cycles = 0;     // COUNTS: above, an interruption (0: no ceiling)
  uint32_t keep_steps = 1024;       // COUNTS: steps of the first slow loads to keep
};

struct JobResult {
  std::vector<uint32_t> index;       // SAMPLES
  std::vector<uint32_t> latency;     // SAMPLES: raw cycles per timed load
  std::vector<uint32_t> slow_steps;  // COUNTS: steps (0 = first timed load) of the first slow loads
  int32_t sm = -1;
  uint64_t cycles = 0;               // raw cycles of the timed loads (TOTAL: one clock pair)
  double average_cycles = 0;
  uint64_t slow = 0, outliers = 0;   // COUNTS
  uint64_t span_cycles = 0;          // first timed load to last (0: not measured)
  uint64_t pump_loads = 0;           // pump loads within the span
};

// What each level served while counted work ran (mt_counts), in bytes; -1: not counted.
struct Counts {
  uint32_t passes = 0;
  double l1_load_bytes = 0, l1_load_hit_bytes = 0;
  double l2_read_bytes = 0, l2_read_hit_bytes = 0, l2_write_bytes = 0, l2_to_sm_bytes = 0;
  double dram_read_bytes = 0, dram_write_bytes = 0;
  // What the counts of a longer run add to a shorter one's: the work both share (set-up,
  // launch scaffolding) cancels.
  Counts operator-(const Counts& o) const {
    auto less = [](double a, double b) { return a < 0 || b < 0 ? -1.0 : a - b; };
    Counts d;
    d.passes = passes;
    d.l1_load_bytes = less(l1_load_bytes, o.l1_load_bytes);
    d.l1_load_hit_bytes = less(l1_load_hit_bytes, o.l1_load_hit_bytes);
    d.l2_read_bytes = less(l2_read_bytes, o.l2_read_bytes);
    d.l2_read_hit_bytes = less(l2_read_hit_bytes, o.l2_read_hit_bytes);
    d.l2_write_bytes = less(l2_write_bytes, o.l2_write_bytes);
    d.l2_to_sm_bytes = less(l2_to_sm_bytes, o.l2_to_sm_bytes);
    d.dram_read_bytes = less(dram_read_bytes, o.dram_read_bytes);
    d.dram_write_bytes = less(dram_write_bytes, o.dram_write_bytes);
    return d;
  }
};

// Counted work: the counts, or why there are none (the backend cannot count here).
struct Counted {
  bool counted = false;
  std::string why_not;
  Counts counts;
};

// Copies over a link, timed (Backend::time_link_copies): each copy's time, or why there is no
// such copy here (one NUMA node, no peer).
struct LinkCopies {
  std::vector<double> elapsed_ns;
  int numa_node_used = -1;  // where the host memory was bound; -1: not bound
  int peers = 0;            // GPUs this one reaches directly
  std::string peer_name;    // the peer's PCI bus id
  std::string why_not;      // set where elapsed_ns is empty
};

class Backend {
 public:
  explicit Backend(const mt_backend* b) : b_(b) {}
  const char* name() const { return b_ ? b_->name : "none"; }
  const mt_backend* c() const { return b_; }

  // Whether the backend runs what an MT_CAP_* bit names.
  bool has(uint64_t capability) const { return b_ && (b_->capabilities & capability) == capability; }
  uint32_t streams_max() const { return has(MT_CAP_STREAMS) ? b_->streams_max : 1; }
  uint32_t pump_warps_max() const { return has(MT_CAP_PUMP) ? b_->pump_warps_max : 0; }

  // Runs the jobs in one call (measure.h says which run at once) and returns their results.
  std::vector<JobResult> run(const std::vector<Job>& jobs) const {
    require(b_ && b_->run_jobs, "run_jobs");
    std::vector<const ChaseArray*> owners;
    std::vector<mt_chase_array> arrays;
    arrays.reserve(jobs.size());  // stable addresses: jobs point into it
    std::vector<mt_job> c(jobs.size());
    std::vector<mt_job*> ptrs;
    std::vector<JobResult> out(jobs.size());
    for (size_t i = 0; i < jobs.size(); ++i) {
      const Job& j = jobs[i];
      if (!j.array) throw Error("job " + std::to_string(i) + " has no array");
      size_t k = 0;
      while (k < owners.size() && owners[k] != j.array) ++k;
      if (k == owners.size()) {
        owners.push_back(j.array);
        arrays.push_back(j.array->c());
      }
      c[i] = to_c(j, &arrays[k], out[i]);
      ptrs.push_back(&c[i]);
    }
    char err[512] = {0};
    if (b_->run_jobs(b_->self, ptrs.data(), ptrs.size(), err, sizeof err) != 0)
      throw Error(err[0] ? err : "measurement failed");
    for (size_t i = 0; i < jobs.size(); ++i) read_out(c[i], out[i]);
    return out;
  }
  JobResult run(const Job& job) const { return run(std::vector<Job>{job})[0]; }

  // Cycles the per-load timing of MT_RECORD_SAMPLES adds when the load is a register move.
  double timing_overhead() const {
    require(b_ && b_->timing_overhead, "timing_overhead");
    double cycles = 0;
    char err[512] = {0};
    if (b_->timing_overhead(b_->self, &cycles, err, sizeof err) != 0) throw Error(err);
    return cycles;
  }

  // MT_CAP_KERNELS: device memory from the backend's pool for a probe's own kernels.
  void* alloc_buffer(uint64_t bytes) const {
    require(has(MT_CAP_KERNELS) && b_->alloc_buffer, "device buffers for probe kernels (MT_CAP_KERNELS)");
    void* p = nullptr;
    char err[512] = {0};
    if (b_->alloc_buffer(b_->self, bytes, &p, err, sizeof err) != 0) throw Error(err[0] ? err : "alloc_buffer failed");
    return p;
  }
  void free_buffer(void* p) const {
    if (p && b_ && b_->free_buffer) b_->free_buffer(b_->self, p);
  }
  // MT_CAP_KERNELS: bytes into, out of or within the backend's buffers (MT_COPY_*), and a
  // buffer filled with one byte value.
  void copy_buffer(void* dst, const void* src, uint64_t bytes, uint32_t kind) const {
    require(has(MT_CAP_KERNELS) && b_->struct_size > offsetof(mt_backend, copy_buffer) && b_->copy_buffer,
            "copies to and from device buffers (MT_CAP_KERNELS)");
    char err[512] = {0};
    if (b_->copy_buffer(b_->self, dst, src, bytes, kind, err, sizeof err) != 0) throw Error(err[0] ? err : "copy failed");
  }
  // Runs `work` under the hardware counters (mt_backend::count), once per pass the counters
  // need; `wanted`: the MT_COUNT_* bits the caller reads (0: all). An exception of the work
  // passes through; a backend that cannot count here returns why, and the work has not run.
  template <class F>
  Counted count(F&& work, uint32_t wanted = 0) const {
    Counted out;
    if (!b_ || b_->struct_size < offsetof(mt_backend, count) + sizeof(b_->count) || !b_->count) {
      out.why_not = std::string("the ") + name() + " backend has no counters";
      return out;
    }
    using Work = std::remove_reference_t<F>;
    struct Call {
      Work* work;
      std::exception_ptr error;
    } call{&work, nullptr};
    auto trampoline = +[](void* arg) -> int {
      auto* c = static_cast<Call*>(arg);
      try {
        (*c->work)();
        return 0;
      } catch (...) {
        c->error = std::current_exception();
        return 1;
      }
    };
    mt_counts c{};
    c.struct_size = sizeof(c);
    c.wanted = wanted;
    char err[512] = {0};
    const int rc = b_->count(b_->self, trampoline, &call, &c, err, sizeof err);
    if (call.error) std::rethrow_exception(call.error);
    if (rc != 0) {
      out.why_not = err[0] ? err : "counting failed";
      return out;
    }
    const double s = c.sector_bytes ? double(c.sector_bytes) : 32.0;
    auto bytes = [](double v, double unit) { return v < 0 ? -1.0 : v * unit; };  // negative: not counted
    out.counted = true;
    out.counts.passes = c.passes;
    out.counts.l1_load_bytes = bytes(c.l1_load_sectors, s);
    out.counts.l1_load_hit_bytes = bytes(c.l1_load_hit_sectors, s);
    out.counts.l2_read_bytes = bytes(c.l2_read_sectors, s);
    out.counts.l2_read_hit_bytes = bytes(c.l2_read_hit_sectors, s);
    out.counts.l2_write_bytes = bytes(c.l2_write_sectors, s);
    out.counts.l2_to_sm_bytes = bytes(c.l2_to_sm_bytes, 1);
    out.counts.dram_read_bytes = bytes(c.dram_read_bytes, 1);
    out.counts.dram_write_bytes = bytes(c.dram_write_bytes, 1);
    return out;
  }

  // Where the GPU sits in its host (3.8): false with `why` where the backend cannot tell.
  bool attachment(mt_attachment& out, std::string& why) const {
    out = mt_attachment{};
    out.struct_size = sizeof out;
    if (!b_ || b_->struct_size < offsetof(mt_backend, attachment) + sizeof(b_->attachment) || !b_->attachment) {
      why = std::string("the ") + name() + " backend does not tell where the GPU sits";
      return false;
    }
    char err[512] = {0};
    if (b_->attachment(b_->self, &out, err, sizeof err) != 0) {
      why = err[0] ? err : "attachment failed";
      return false;
    }
    return true;
  }
  // `repeats` copies of `bytes` over a link (MT_LINK_*), host memory on `numa_node`
  // (MT_HOST_NUMA_NEAR, MT_HOST_NUMA_FAR or a node), timed one by one (3.8). Throws Error on
  // a failure; where there is no such copy here, the result says why.
  LinkCopies time_link_copies(uint32_t direction, uint64_t bytes, uint32_t repeats,
                              int32_t numa_node = MT_HOST_NUMA_NEAR, uint32_t peer = 0) const {
    LinkCopies out;
    if (!b_ || b_->struct_size < offsetof(mt_backend, time_link_copies) + sizeof(b_->time_link_copies) ||
        !b_->time_link_copies) {
      out.why_not = std::string("the ") + name() + " backend times no link copies";
      return out;
    }
    std::vector<double> ns(repeats, 0.0);
    mt_link_copy c{};
    c.struct_size = sizeof c;
    c.direction = direction;
    c.host_numa_node = numa_node;
    c.peer = peer;
    c.bytes = bytes;
    c.repeats = repeats;
    c.elapsed_ns = ns.data();
    char err[512] = {0};
    const int rc = b_->time_link_copies(b_->self, &c, err, sizeof err);
    out.peers = c.peers;
    if (rc == MT_LINK_UNAVAILABLE) {
      out.why_not = err[0] ? err : "no such copy here";
      return out;
    }
    if (rc != 0) throw Error(err[0] ? err : "time_link_copies failed");
    out.elapsed_ns = std::move(ns);
    out.numa_node_used = c.numa_node_used;
    out.peer_name = c.peer_name;
    return out;
  }

  void fill_buffer(void* dst, int value, uint64_t bytes) const {
    require(has(MT_CAP_KERNELS) && b_->struct_size > offsetof(mt_backend, fill_buffer) && b_->fill_buffer,
            "device buffers filled (MT_CAP_KERNELS)");
    char err[512] = {0};
    if (b_->fill_buffer(b_->self, dst, value, bytes, err, sizeof err) != 0) throw Error(err[0] ? err : "fill failed");
  }

 private:
  static void require(bool ok, const char* what) {
    if (!ok) throw Error(std::string("the measurement backend does not provide ") + what);
  }

  // The C job of `j`; `out` lends the buffers for what comes back.
  static mt_job to_c(const Job& j, const mt_chase_array* array, JobResult& out) {
    mt_job c{};
    c.struct_size = sizeof(c);
    c.sm = j.sm;
    c.block = j.block;
    c.lane = j.lane;
    c.order = j.order;
    c.shared_carveout_percent = j.shared_carveout_percent;
    c.space = j.space;
    c.pattern = j.pattern;
    c.array = array;
    c.start = j.start;
    c.random_stride_elems = j.random_stride_bytes / 4;
    c.random_seed = j.seed;
    c.warmup_steps = j.warmup_steps;
    c.steps = j.steps;
    c.rate = mt_rate{j.rate.streams, j.rate.gap_cycles, j.rate.pump_warps, j.rate.pump_lanes, j.rate.pump_cycles,
                     j.rate.probe_loads};
    c.stagger_streams = j.stagger_streams ? 1u : 0u;
    c.record = j.record;
    if (j.record == MT_RECORD_SAMPLES && j.timed) {
      out.latency.resize(j.steps);
      c.out_latency = out.latency.data();
    }
    if (j.record == MT_RECORD_SAMPLES && j.timed && j.want_index) {
      out.index.resize(j.steps);
      c.out_index = out.index.data();
    }
    if (j.record == MT_RECORD_COUNTS) {
      c.slow_cycles = j.slow_cycles;
      c.slow_max_cycles = j.slow_max_cycles;
      out.slow_steps.resize(j.keep_steps);
      c.slow_capacity = j.keep_steps;
      c.out_slow_step = out.slow_steps.empty() ? nullptr : out.slow_steps.data();
    }
    return c;
  }
  static void read_out(const mt_job& c, JobResult& out) {
    out.sm = c.out.sm;
    out.cycles = c.out.cycles;
    out.average_cycles = c.out.average_cycles;
    out.slow = c.out.slow;
    out.outliers = c.out.outliers;
    out.span_cycles = c.out.span_cycles;
    out.pump_loads = c.out.pump_loads;
    if (c.record == MT_RECORD_COUNTS) out.slow_steps.resize(size_t(c.out.slow_recorded));
  }

  const mt_backend* b_;
};

}  // namespace memtopo
