// A sequence on the GPU: the jobs (orders 1, 2, ...) run one at a time in one launch; the
// jobs of a logical block are threads of one CUDA block on one SM, blocks on distinct SMs.
#include <algorithm>
#include <cstring>
#include <map>

#include "cuda_engine.hpp"
#include "cuda_util.hpp"

namespace memtopo::cuda {
namespace {

// A block waits at most this long for the jobs before its own.
constexpr double kPhaseWaitSeconds = 120;
// Fewest steps the recording buffer may hold (arrays in shared memory take the rest).
constexpr uint32_t kMinRecordSteps = 16;

// Where the arrays read from shared memory go in each block's shared memory, and how many
// samples the recording buffer beside them holds.
struct SharedLayout {
  std::map<const mt_chase_array*, uint32_t> offset;  // in elements
  uint32_t array_bytes = 0;
  uint32_t record_steps = kStepsPerPass;
};
SharedLayout shared_layout(const std::vector<mt_job*>& jobs, uint32_t room) {
  SharedLayout l;
  uint64_t elems = 0;
  for (const mt_job* j : jobs)
    if (j->space == MT_SPACE_SHARED && l.offset.emplace(j->array, uint32_t(elems)).second) elems += j->array->elems;
  if (elems * 4 + fine_sample_bytes(l.record_steps) > room) {
    l.record_steps = room > elems * 4 + 8 ? uint32_t((room - elems * 4) / 8 - 1) : 0;
    if (l.record_steps < kMinRecordSteps)
      throw Error("the sequence's arrays take " + std::to_string(elems * 4) +
                  " bytes of shared memory, which leaves no room for the sample buffer (" + std::to_string(room) +
                  " bytes per block)");
  }
  l.array_bytes = uint32_t(elems * 4);
  return l;
}

}  // namespace

void CudaEngine::run_sequence(engine::JobCall& call) {
  // Jobs in order; logical blocks numbered densely in the order of their ids.
  std::vector<mt_job*> jobs;
  for (mt_job& j : call.jobs) jobs.push_back(&j);
  std::sort(jobs.begin(), jobs.end(), [](const mt_job* a, const mt_job* b) { return a->order < b->order; });
  std::map<int32_t, uint32_t> dense;
  uint32_t max_lane = 0;
  for (const mt_job* j : jobs) {
    dense.emplace(j->block, 0);
    max_lane = std::max(max_lane, j->lane);
  }
  uint32_t next = 0;
  for (auto& [id, d] : dense) d = next++;
  const uint32_t block_count = next;
  std::vector<int32_t> pins(block_count, -1);
  for (const mt_job* j : jobs)
    if (j->sm >= 0) pins[dense[j->block]] = j->sm;

  CallArrays arrays(pool_, limits_);
  for (size_t p = 0; p < jobs.size(); ++p)
    arrays.need(jobs[p]->array, jobs[p]->space, jobs[p]->start, jobs[p]->warmup_steps + jobs[p]->steps,
                "job " + std::to_string(jobs[p] - call.jobs.data()));
  arrays.upload();

  const SharedLayout shared = shared_layout(jobs, max_dynamic_shared());
  const uint32_t rec = shared.record_steps, shared_bytes = shared.array_bytes;
  std::vector<uint64_t> out_offset(jobs.size(), 0);
  uint64_t out_words = 0;
  for (size_t p = 0; p < jobs.size(); ++p) {
    out_offset[p] = out_words;
    if (jobs[p]->out_latency) out_words += 2 * jobs[p]->steps;
  }
  PooledBuffer out(pool_, std::max<uint64_t>(out_words, 1) * 4);

  std::vector<DevicePhase> descs(jobs.size());
  for (size_t p = 0; p < jobs.size(); ++p) {
    const mt_job& j = *jobs[p];
    DevicePhase& d = descs[p];
    d.src = arrays.source(j.array, j.space == MT_SPACE_SHARED ? shared.offset.at(j.array) : 0);
    d.block = dense[j.block];
    d.lane = j.lane;
    d.start = j.start;
    d.space = uint32_t(j.space);
    d.warmup = j.warmup_steps;
    d.steps = j.steps;
    if (j.out_latency) {
      uint32_t* o = out.data() + out_offset[p];
      d.out_index = j.out_index ? o : nullptr;
      d.out_latency = o + j.steps;
    }
  }
  check(configure_kernel(Kernel::Sequence, arrays.param_bank() != nullptr, jobs[0]->shared_carveout_percent,
                         fine_sample_bytes(rec) + shared_bytes),
        "cudaFuncSetAttribute");
  const uint32_t threads = uint32_t(round_up(max_lane + 1, 32));
  const double khz = info_.sm_clock_khz > 0 ? double(info_.sm_clock_khz) : 2e6;
  const auto phase_wait = static_cast<unsigned long long>(khz * 1000 * kPhaseWaitSeconds);

  std::vector<int32_t> block_sm;
  uint32_t abort = kAbortClaimTimeout;
  for (int attempt = 0; attempt < kLaunchAttempts && abort == kAbortClaimTimeout; ++attempt) {
    const DevicePhase* device_phases = nullptr;
    const ClaimTables t = upload_launch(pins, descs, &device_phases);
    check(launch_sequence(device_phases, uint32_t(jobs.size()), t, grid_blocks(), threads, rec, shared_bytes, phase_wait,
                          arrays.param_bank()),
          "cudaLaunchKernel");
    check(cudaDeviceSynchronize(), "kernel");
    abort = read_abort(t);
    block_sm = read_job_sms(t, block_count);
  }
  if (abort == kAbortPhaseTimeout)
    throw Error("a block waited more than " + std::to_string(int(kPhaseWaitSeconds)) +
                " s for the jobs before its own; shorten the jobs");
  if (abort != kAbortNone) {
    for (const auto& [id, b] : dense)
      if (block_sm[b] < 0)
        throw Error("block " + std::to_string(id) + " found no SM (" + sm_name(pins[b]) + ") in " +
                    std::to_string(kLaunchAttempts) + " launches of " + std::to_string(grid_blocks()) +
                    " blocks; is another process using the GPU (MPS, a green context)?");
    throw Error("the blocks of the sequence did not all start within the time-out in " +
                std::to_string(kLaunchAttempts) + " launches");
  }

  std::vector<uint32_t> host(std::max<uint64_t>(out_words, 1));
  if (out_words) check(cudaMemcpy(host.data(), out.data(), out_words * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (size_t p = 0; p < jobs.size(); ++p) {
    mt_job& j = *jobs[p];
    j.out.sm = block_sm[dense[j.block]];
    if (!j.out_latency) continue;
    const uint32_t* o = host.data() + out_offset[p];
    if (j.out_index) std::memcpy(j.out_index, o, 4 * j.steps);
    std::memcpy(j.out_latency, o + j.steps, 4 * j.steps);
    for (uint64_t k = 0; k < j.steps; ++k) j.out.cycles += o[j.steps + k];
    j.out.average_cycles = double(j.out.cycles) / double(j.steps);
  }
}

}  // namespace memtopo::cuda
