// Jobs of order 0 on the GPU: every job in a block of its own on its own SM, grouped into
// launches by kernel configuration (record, carveout, an array in shared memory).
#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include "cuda_engine.hpp"
#include "cuda_util.hpp"
#include "engine/random_places.hpp"

namespace memtopo::cuda {
namespace {

// Fewest steps a recording pass may hold before a request is refused (shared-memory arrays
// that leave no room for the sample buffer).
constexpr uint32_t kMinStepsPerPass = 16;
constexpr uint32_t kChaseWarp = 32;

uint32_t count_capacity(const mt_job& j) { return std::min<uint32_t>(j.slow_capacity, kCountSteps); }

// Output words of one job: SAMPLES index[steps] then latency[steps]; TOTAL cycles and last
// (u64 each); COUNTS slow, kept, cycles, outliers, span, pump loads (u64 each), then the
// kept steps (u64-aligned).
uint64_t output_words(const mt_job& j) {
  switch (j.record) {
    case MT_RECORD_SAMPLES: return 2 * j.steps;
    case MT_RECORD_TOTAL: return 4;
    default: return kCountHeadWords + (count_capacity(j) + 1) / 2 * 2;
  }
}

// The kernel's view of job j; `o` is its output area.
DeviceChaseJob describe(const mt_job& j, const CallArrays& arrays, uint32_t* o) {
  DeviceChaseJob d;
  d.src = arrays.source(j.array);
  d.space = uint32_t(j.space);
  d.start = j.start;
  d.warmup = j.warmup_steps;
  d.record = j.steps;
  if (j.record == MT_RECORD_SAMPLES) {
    d.out_index = o;
    d.out_latency = o + j.steps;
    return d;
  }
  d.out_cycles = reinterpret_cast<unsigned long long*>(o);
  if (j.record == MT_RECORD_TOTAL) {
    d.out_last = o + 2;
    d.pointers = j.pattern == MT_PATTERN_POINTERS ? 1u : 0u;
    return d;
  }
  d.out_last = o + kCountHeadWords;
  d.slow_cycles = j.slow_cycles;
  d.slow_max_cycles = j.slow_max_cycles;
  d.count_capacity = count_capacity(j);
  if (j.pattern == MT_PATTERN_RANDOM) {
    const engine::RandomPlaces places(j.random_seed, j.array->elems, j.random_stride_elems);
    d.random_state = places.x;
    d.random_stride = places.stride;
    d.random_candidates = places.candidates;
    d.streams = engine::streams_of(j);
    d.gap_cycles = j.rate.gap_cycles;
    d.pump_warps = j.rate.pump_warps;
    d.pump_lanes = j.rate.pump_lanes;
    d.pump_cycles = j.rate.pump_cycles;
    d.probe_loads = engine::probe_loads_of(j);
  } else {  // a counted chase: one chain per stream, from `start` or staggered along the cycle
    d.streams = engine::streams_of(j);
    if (j.stagger_streams) {
      d.stagger = engine::stagger_elems(j);
      d.stagger_modulus = j.array->elems;
    }
  }
  return d;
}

// What job j reported, from its output area.
void read_output(mt_job& j, const uint32_t* o) {
  if (j.record == MT_RECORD_SAMPLES) {
    if (j.out_index) std::memcpy(j.out_index, o, 4 * j.steps);
    std::memcpy(j.out_latency, o + j.steps, 4 * j.steps);
    for (uint64_t k = 0; k < j.steps; ++k) j.out.cycles += o[j.steps + k];
  } else if (j.record == MT_RECORD_TOTAL) {
    std::memcpy(&j.out.cycles, o, sizeof j.out.cycles);
  } else {
    uint64_t head[kCountHeadWords / 2];
    std::memcpy(head, o, sizeof head);
    j.out.slow = head[0];
    j.out.slow_recorded = std::min<uint64_t>(head[1], count_capacity(j));
    j.out.cycles = head[2];
    j.out.outliers = head[3];
    j.out.span_cycles = head[4];
    j.out.pump_loads = head[5];
    if (j.out.slow_recorded) std::memcpy(j.out_slow_step, o + kCountHeadWords, 4 * j.out.slow_recorded);
  }
  j.out.average_cycles = double(j.out.cycles) / double(j.steps);
}

}  // namespace

// Jobs that run in one launch.
struct CudaEngine::Group {
  std::vector<size_t> members;
  mt_record record = MT_RECORD_SAMPLES;
  int32_t carveout = -1;
  uint32_t shared_bytes = 0;  // the largest array in shared memory
  uint32_t steps_per_pass = kStepsPerPass;
  uint32_t dynamic_bytes = 0;
  uint32_t warps = 1;         // per block: the most a job needs (its streams, or 1 + pump warps)
};

void CudaEngine::run_concurrent(engine::JobCall& call) {
  CallArrays arrays(pool_, limits_);
  for (size_t i = 0; i < call.jobs.size(); ++i) {
    const mt_job& j = call.jobs[i];
    const uint32_t n = j.stagger_streams ? engine::streams_of(j) : 1;
    for (uint32_t k = 0; k < n; ++k)  // staggered streams: each its part of the cycle
      arrays.need(j.array, j.space, engine::stream_start(j, k),
                  n == 1 ? j.warmup_steps + j.steps
                         : engine::stream_share(j.warmup_steps, n, k) + engine::stream_share(j.steps, n, k),
                  "job " + std::to_string(i), j.pattern == MT_PATTERN_POINTERS);
  }
  arrays.upload();
  std::vector<uint64_t> out_offset(call.jobs.size());
  uint64_t out_words = 0;
  for (size_t i = 0; i < call.jobs.size(); ++i) {
    out_offset[i] = out_words;
    out_words += output_words(call.jobs[i]);
  }
  PooledBuffer out(pool_, out_words * 4);

  std::map<std::tuple<int, int32_t, bool>, Group> groups;
  for (size_t i = 0; i < call.jobs.size(); ++i) {
    const mt_job& j = call.jobs[i];
    Group& g = groups[{int(j.record), j.shared_carveout_percent, j.space == MT_SPACE_SHARED}];
    g.members.push_back(i);
    g.record = j.record;
    g.carveout = j.shared_carveout_percent;
  }
  const uint32_t room = max_dynamic_shared();
  for (auto& [key, g] : groups) {
    size_t largest = g.members[0];
    for (size_t i : g.members) {
      const mt_job& j = call.jobs[i];
      if (j.space == MT_SPACE_SHARED && j.array->elems * 4 > g.shared_bytes) {
        g.shared_bytes = uint32_t(j.array->elems * 4);
        largest = i;
      }
      g.warps = std::max({g.warps, j.rate.streams, j.rate.pump_warps ? j.rate.pump_warps + 1 : 1u});
    }
    const std::string job = "job " + std::to_string(largest) + ": ";
    if (g.record == MT_RECORD_COUNTS && uint64_t(g.shared_bytes) + count_sample_bytes() > room)
      throw Error(job + "the " + std::to_string(g.shared_bytes) + "-byte array in shared memory leaves no room for the "
                  "slow-load buffer (" + std::to_string(room) + " bytes of shared memory per block); use a smaller array");
    if (g.record == MT_RECORD_SAMPLES && uint64_t(g.shared_bytes) + fine_sample_bytes(g.steps_per_pass) > room) {
      g.steps_per_pass = room > g.shared_bytes + 8 ? (room - g.shared_bytes) / 8 - 1 : 0;
      if (g.steps_per_pass < kMinStepsPerPass)
        throw Error(job + "the " + std::to_string(g.shared_bytes) + "-byte array in shared memory leaves no room for "
                    "the sample buffer (" + std::to_string(room) + " bytes of shared memory per block); use a smaller array");
    }
    g.dynamic_bytes = g.shared_bytes + (g.record == MT_RECORD_SAMPLES  ? fine_sample_bytes(g.steps_per_pass)
                                        : g.record == MT_RECORD_COUNTS ? count_sample_bytes()
                                                                       : 8);
    if (g.dynamic_bytes > room)
      throw Error(job + std::to_string(g.dynamic_bytes) + " bytes of shared memory needed, the device allows " +
                  std::to_string(room) + " per block");
    launch_group(call, g, arrays, out.data(), out_offset);
  }

  std::vector<uint32_t> host(out_words);
  check(cudaMemcpy(host.data(), out.data(), out_words * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (size_t i = 0; i < call.jobs.size(); ++i) read_output(call.jobs[i], host.data() + out_offset[i]);
}

void CudaEngine::launch_group(engine::JobCall& call, const Group& g, const CallArrays& arrays, uint32_t* out,
                              const std::vector<uint64_t>& out_offset) {
  const Kernel kernel = g.record == MT_RECORD_SAMPLES ? Kernel::Fine
                        : g.record == MT_RECORD_COUNTS ? Kernel::Count
                                                       : Kernel::Average;
  const ParamBank* bank = arrays.param_bank();
  check(configure_kernel(kernel, bank != nullptr, g.carveout, g.dynamic_bytes), "cudaFuncSetAttribute");
  std::vector<size_t> todo = g.members;
  for (int attempt = 0; attempt < kLaunchAttempts && !todo.empty(); ++attempt) {
    std::vector<DeviceChaseJob> descs;
    std::vector<int32_t> pins;
    for (size_t i : todo) {
      descs.push_back(describe(call.jobs[i], arrays, out + out_offset[i]));
      pins.push_back(call.jobs[i].sm);
    }
    const DeviceChaseJob* device_descs = nullptr;
    const ClaimTables t = upload_launch(pins, descs, &device_descs);
    const uint32_t shared = g.shared_bytes;
    check(kernel == Kernel::Fine    ? launch_fine(device_descs, t, grid_blocks(), g.steps_per_pass, shared, bank)
          : kernel == Kernel::Count ? launch_count(device_descs, t, grid_blocks(), shared, bank, g.warps)
                                    : launch_average(device_descs, t, grid_blocks(), shared, bank),
          "cudaLaunchKernel");
    check(cudaDeviceSynchronize(), "kernel");
    const std::vector<int32_t> sms = read_job_sms(t, todo.size());
    // A job whose SM no block reached did not run: launch it again (rare).
    std::vector<size_t> missed;
    for (size_t k = 0; k < todo.size(); ++k) {
      if (sms[k] < 0)
        missed.push_back(todo[k]);
      else
        call.jobs[todo[k]].out.sm = sms[k];
    }
    todo = std::move(missed);
  }
  if (!todo.empty()) {
    const size_t i = todo[0];
    throw Error("job " + std::to_string(i) + ": no block reached " + sm_name(call.jobs[i].sm) + " in " +
                std::to_string(kLaunchAttempts) + " launches of " + std::to_string(grid_blocks()) +
                " blocks; is another process using the GPU (MPS, a green context)?");
  }
}

}  // namespace memtopo::cuda
