#include "cuda_engine.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "cuda_util.hpp"
#include "engine/job_checks.hpp"

namespace memtopo::cuda {
namespace {

// Launches tried before a job whose SM no block reached is reported as an error.
constexpr int kAttempts = 4;
// Fewest steps a recording pass may hold before a request is refused (shared-memory arrays
// that leave no room for the sample buffer).
constexpr uint32_t kMinStepsPerPass = 16;
// A sequence block waits at most this long for the phases before its own.
constexpr double kPhaseWaitSeconds = 120;

size_t align16(size_t v) { return (v + 15) & ~size_t(15); }

std::string sm_name(int32_t sm) { return sm < 0 ? std::string("any free SM") : "SM " + std::to_string(sm); }

}  // namespace

CudaEngine::CudaEngine(int ordinal, const mt_device_info& info) : ordinal_(ordinal), info_(info) {
  check(cudaSetDevice(ordinal), "cudaSetDevice");
  check(load_kernels(), "loading the measurement kernels");
  limits_.texture_1d_linear_elems = uint64_t(device_attribute(cudaDevAttrMaxTexture1DLinearWidth, ordinal));
  if (info.constant_memory_bytes > 0)
    limits_.constant_elems = std::min<uint64_t>(kConstantElems, uint64_t(info.constant_memory_bytes) / 4);
  if (info.constant_reach_bytes > info.constant_memory_bytes)
    limits_.param_bank_elems = std::min<uint64_t>(
        kParamBankElems, uint64_t(info.constant_reach_bytes) / 4 - limits_.constant_elems);
  control_bytes_ = uint64_t(1) << 20;
  check(cudaMalloc(&control_, control_bytes_), "cudaMalloc");
  // %smid runs up to %nsmid, which may exceed the SM count: size the per-SM tables for it.
  uint32_t* d = static_cast<uint32_t*>(control_);
  check(launch_smid_count(d), "cudaLaunchKernel");
  uint32_t nsmid = 0;
  check(cudaMemcpy(&nsmid, d, 4, cudaMemcpyDeviceToHost), "reading %nsmid");
  sm_slots_ = std::max<uint32_t>(uint32_t(std::max(info.sm_count, 1)), nsmid);
  const double khz = info.sm_clock_khz > 0 ? double(info.sm_clock_khz) : 2e6;
  wait_cycles_ = static_cast<unsigned long long>(khz * 50);  // 50 ms
}

CudaEngine::~CudaEngine() {
  if (control_) cudaFree(control_);
}

uint32_t CudaEngine::max_dynamic_shared() const {
  // Leave room for the kernels' few static shared variables.
  const int64_t optin = std::max(info_.shared_per_block_optin_bytes, info_.shared_per_block_bytes);
  return uint32_t(std::max<int64_t>(optin - 256, 0));
}

// Control buffer of one launch: counters[4] | sm_owner[slots] | job_sm[n] | sm_to_job[slots]
// | unpinned[n] | descriptors. One upload per launch.
template <class Desc>
ClaimTables CudaEngine::upload_launch(const std::vector<int32_t>& pins, const std::vector<Desc>& descs,
                                      const Desc** device_descs) {
  const size_t n = pins.size();
  const size_t off_owner = 16;
  const size_t off_job_sm = off_owner + 4 * size_t(sm_slots_);
  const size_t off_sm_to_job = off_job_sm + 4 * n;
  const size_t off_unpinned = off_sm_to_job + 4 * size_t(sm_slots_);
  const size_t off_descs = align16(off_unpinned + 4 * n);
  const size_t total = off_descs + sizeof(Desc) * descs.size();
  if (total > control_bytes_) {
    check(cudaFree(control_), "cudaFree");
    control_ = nullptr;
    control_bytes_ = round_up(total, uint64_t(1) << 20);
    check(cudaMalloc(&control_, control_bytes_), "cudaMalloc");
  }
  std::vector<unsigned char> bytes(total, 0);
  auto i32 = [&](size_t off) { return reinterpret_cast<int32_t*>(bytes.data() + off); };
  std::fill(i32(off_job_sm), i32(off_job_sm) + n, -1);
  std::fill(i32(off_sm_to_job), i32(off_sm_to_job) + sm_slots_, -1);
  uint32_t unpinned = 0;
  for (size_t i = 0; i < n; ++i) {
    if (pins[i] >= 0)
      i32(off_sm_to_job)[pins[i]] = int32_t(i);
    else
      i32(off_unpinned)[unpinned++] = int32_t(i);
  }
  if (!descs.empty()) std::memcpy(bytes.data() + off_descs, descs.data(), sizeof(Desc) * descs.size());
  check(cudaMemcpy(control_, bytes.data(), total, cudaMemcpyHostToDevice), "cudaMemcpy");

  unsigned char* base = static_cast<unsigned char*>(control_);
  ClaimTables t;
  t.counters = reinterpret_cast<uint32_t*>(base);
  t.sm_owner = reinterpret_cast<int32_t*>(base + off_owner);
  t.job_sm = reinterpret_cast<int32_t*>(base + off_job_sm);
  t.sm_to_job = reinterpret_cast<const int32_t*>(base + off_sm_to_job);
  t.unpinned = reinterpret_cast<const int32_t*>(base + off_unpinned);
  t.unpinned_count = unpinned;
  t.job_count = uint32_t(n);
  t.sm_slots = sm_slots_;
  t.wait_cycles = wait_cycles_;
  *device_descs = reinterpret_cast<const Desc*>(base + off_descs);
  return t;
}

std::vector<int32_t> CudaEngine::read_job_sms(const ClaimTables& t, size_t count) {
  std::vector<int32_t> sms(count);
  check(cudaMemcpy(sms.data(), t.job_sm, 4 * count, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return sms;
}

uint32_t CudaEngine::read_abort(const ClaimTables& t) {
  uint32_t c[4] = {0, 0, 0, 0};
  check(cudaMemcpy(c, t.counters, sizeof c, cudaMemcpyDeviceToHost), "cudaMemcpy");
  return c[3];
}

void CudaEngine::fine_chase(mt_chase_job* jobs, size_t count) { run_chase_jobs(jobs, count, Mode::Fine); }
void CudaEngine::average_chase(mt_chase_job* jobs, size_t count) { run_chase_jobs(jobs, count, Mode::Average); }

void CudaEngine::count_chase(mt_count_job* jobs, size_t count) {
  std::vector<mt_chase_job> chases;
  if (auto e = engine::check_count_jobs(jobs, count, info_, chases); !e.empty()) throw Error(e);
  run_chase_jobs(chases.data(), count, Mode::Count, jobs);
  for (size_t i = 0; i < count; ++i) jobs[i].chase.out_sm = chases[i].out_sm;
}

void CudaEngine::random_count(mt_random_count_job* jobs, size_t count) {
  // One stream, no gap: the paced count with its defaults.
  std::vector<mt_paced_count_job> paced(jobs ? count : 0);
  for (size_t i = 0; i < paced.size(); ++i) {
    paced[i].struct_size = sizeof(mt_paced_count_job);
    paced[i].random = jobs[i];
  }
  paced_count(paced.empty() ? nullptr : paced.data(), count);
  for (size_t i = 0; i < paced.size(); ++i) jobs[i].count = paced[i].random.count;
}

template <class Job>
void CudaEngine::run_rated(Job* jobs, size_t count, engine::RatedJobs& r) {
  std::vector<uint64_t> spans(count), pumped(count);
  run_chase_jobs(r.chases.data(), count, Mode::Count, r.counts.data(), r.randoms.data(), r.rates.data(), spans.data(),
                 pumped.data());
  engine::return_rated(jobs, r, spans, pumped);
}

void CudaEngine::paced_count(mt_paced_count_job* jobs, size_t count) {
  engine::RatedJobs r;
  if (auto e = engine::check_paced_jobs(jobs, count, info_, r); !e.empty()) throw Error(e);
  run_rated(jobs, count, r);
}

void CudaEngine::pumped_count(mt_pumped_count_job* jobs, size_t count) {
  static_assert(kPumpStreamBase == engine::kPumpStreamBase, "pump generators differ between the backends");
  engine::RatedJobs r;
  if (auto e = engine::check_pumped_jobs(jobs, count, info_, kPumpWarpsMax, r); !e.empty()) throw Error(e);
  run_rated(jobs, count, r);
}

void CudaEngine::run_chase_jobs(mt_chase_job* jobs, size_t count, Mode mode, mt_count_job* counts,
                                const mt_random_count_job* random, const engine::RandomRate* rates,
                                uint64_t* spans, uint64_t* pumped) {
  const bool fine = mode == Mode::Fine;
  if (auto e = engine::check_chase_jobs(jobs, count, info_, fine); !e.empty()) throw Error(e);

  CallArrays arrays(pool_, limits_);
  for (size_t i = 0; i < count; ++i)
    arrays.need(jobs[i].array, jobs[i].space, jobs[i].start, jobs[i].warmup_steps + jobs[i].steps,
                "job " + std::to_string(i));
  arrays.upload();

  // Outputs, in words: fine: index[steps] then latency[steps]; average: cycles, last (u64
  // each); count: slow, kept, cycles, outliers, span, pump loads (u64 each), then the kept steps.
  auto capacity = [&](size_t i) { return std::min<uint32_t>(counts[i].slow_capacity, kCountSteps); };
  std::vector<uint64_t> out_offset(count);
  uint64_t out_words = 0;
  for (size_t i = 0; i < count; ++i) {
    out_offset[i] = out_words;
    out_words += fine ? 2 * jobs[i].steps : mode == Mode::Average ? 4 : kCountHeadWords + (capacity(i) + 1) / 2 * 2;  // u64-aligned
  }
  PooledBuffer out(pool_, out_words * 4);

  // Jobs that need a different kernel configuration (carveout; an array in shared memory)
  // run in separate launches, one after the other.
  std::map<std::pair<int32_t, bool>, std::vector<size_t>> groups;
  for (size_t i = 0; i < count; ++i)
    groups[{jobs[i].shared_carveout_percent, jobs[i].space == MT_SPACE_SHARED}].push_back(i);

  for (size_t i = 0; i < count; ++i) jobs[i].out_sm = -1;

  for (const auto& [key, members] : groups) {
    const int32_t carveout = key.first;
    uint32_t shared_bytes = 0;
    size_t largest = members[0];
    for (size_t i : members)
      if (jobs[i].space == MT_SPACE_SHARED && jobs[i].array->elems * 4 > shared_bytes) {
        shared_bytes = uint32_t(jobs[i].array->elems * 4);
        largest = i;
      }
    const uint32_t room = max_dynamic_shared();
    uint32_t spp = kStepsPerPass;
    if (mode == Mode::Count && uint64_t(shared_bytes) + count_sample_bytes() > room)
      throw Error("job " + std::to_string(largest) + ": the " + std::to_string(shared_bytes) +
                  "-byte array in shared memory leaves no room for the slow-load buffer (" + std::to_string(room) +
                  " bytes of shared memory per block); use a smaller array");
    if (fine && uint64_t(shared_bytes) + fine_sample_bytes(spp) > room) {
      spp = room > shared_bytes + 8 ? (room - shared_bytes) / 8 - 1 : 0;
      if (spp < kMinStepsPerPass)
        throw Error("job " + std::to_string(largest) + ": the " + std::to_string(shared_bytes) +
                    "-byte array in shared memory leaves no room for the sample buffer (" + std::to_string(room) +
                    " bytes of shared memory per block); use a smaller array");
    }
    const uint32_t dynamic_bytes = fine                  ? fine_sample_bytes(spp) + shared_bytes
                                   : mode == Mode::Count ? count_sample_bytes() + shared_bytes
                                                         : 8 + shared_bytes;
    if (dynamic_bytes > room)
      throw Error("job " + std::to_string(largest) + ": " + std::to_string(dynamic_bytes) +
                  " bytes of shared memory needed, the device allows " + std::to_string(room) + " per block");
    const Kernel kernel = fine ? Kernel::Fine : mode == Mode::Count ? Kernel::Count : Kernel::Average;
    const ParamBank* bank = arrays.param_bank();
    check(configure_kernel(kernel, bank != nullptr, carveout, dynamic_bytes), "cudaFuncSetAttribute");

    std::vector<size_t> todo = members;
    uint32_t streams = 1;  // warps per block: the most any random-load job of this group needs
    for (int attempt = 0; attempt < kAttempts && !todo.empty(); ++attempt) {
      std::vector<DeviceChaseJob> descs(todo.size());
      std::vector<int32_t> pins(todo.size());
      for (size_t k = 0; k < todo.size(); ++k) {
        const mt_chase_job& j = jobs[todo[k]];
        DeviceChaseJob& d = descs[k];
        d.src = arrays.source(j.array);
        d.space = uint32_t(j.space);
        d.start = j.start;
        d.warmup = j.warmup_steps;
        d.record = j.steps;
        uint32_t* o = out.data() + out_offset[todo[k]];
        if (fine) {
          d.out_index = o;
          d.out_latency = o + j.steps;
        } else if (mode == Mode::Count) {
          d.out_cycles = reinterpret_cast<unsigned long long*>(o);
          d.out_last = o + kCountHeadWords;
          d.slow_cycles = counts[todo[k]].slow_cycles;
          d.slow_max_cycles = counts[todo[k]].slow_max_cycles;
          d.count_capacity = capacity(todo[k]);
          if (random) {
            const mt_random_count_job& rj = random[todo[k]];
            const engine::RandomPlaces places(rj.seed, j.array->elems, rj.stride_elems);
            d.random_state = places.x;
            d.random_stride = places.stride;
            d.random_candidates = places.candidates;
            const engine::RandomRate rate = rates ? rates[todo[k]] : engine::RandomRate{};
            d.streams = rate.streams;
            d.gap_cycles = rate.gap_cycles;
            d.pump_warps = rate.pump_warps;
            d.pump_lanes = rate.pump_lanes;
            d.pump_cycles = rate.pump_cycles;
            d.probe_loads = rate.probe_loads;
            streams = std::max({streams, rate.streams, rate.pump_warps ? rate.pump_warps + 1 : 1u});
          }
        } else {
          d.out_cycles = reinterpret_cast<unsigned long long*>(o);
          d.out_last = o + 2;
        }
        pins[k] = j.sm;
      }
      const DeviceChaseJob* device_descs = nullptr;
      const ClaimTables t = upload_launch(pins, descs, &device_descs);
      check(fine                  ? launch_fine(device_descs, t, grid_blocks(), spp, shared_bytes, bank)
            : mode == Mode::Count ? launch_count(device_descs, t, grid_blocks(), shared_bytes, bank, streams)
                                  : launch_average(device_descs, t, grid_blocks(), shared_bytes, bank),
            "cudaLaunchKernel");
      check(cudaDeviceSynchronize(), "kernel");
      const std::vector<int32_t> sms = read_job_sms(t, todo.size());
      // A job whose SM no block reached did not run: launch it again (rare).
      std::vector<size_t> missed;
      for (size_t k = 0; k < todo.size(); ++k) {
        if (sms[k] < 0)
          missed.push_back(todo[k]);
        else
          jobs[todo[k]].out_sm = sms[k];
      }
      todo = std::move(missed);
    }
    if (!todo.empty()) {
      const size_t i = todo[0];
      throw Error("job " + std::to_string(i) + ": no block reached " + sm_name(jobs[i].sm) + " in " +
                  std::to_string(kAttempts) + " launches of " + std::to_string(grid_blocks()) +
                  " blocks; is another process using the GPU (MPS, a green context)?");
    }
  }

  std::vector<uint32_t> host(out_words);
  check(cudaMemcpy(host.data(), out.data(), out_words * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  for (size_t i = 0; i < count; ++i) {
    const uint32_t* o = host.data() + out_offset[i];
    mt_chase_job& j = jobs[i];
    if (fine) {
      if (j.out_index) std::memcpy(j.out_index, o, 4 * j.steps);
      std::memcpy(j.out_latency, o + j.steps, 4 * j.steps);
    } else if (mode == Mode::Count) {
      uint64_t head[kCountHeadWords / 2];
      std::memcpy(head, o, sizeof head);
      if (spans) spans[i] = head[4];
      if (pumped) pumped[i] = head[5];
      mt_count_job& c = counts[i];
      c.out_slow = head[0];
      c.out_slow_recorded = std::min<uint64_t>(head[1], capacity(i));
      c.out_cycles = head[2];
      c.out_outliers = head[3];
      if (c.out_slow_recorded) std::memcpy(c.out_slow_step, o + kCountHeadWords, 4 * c.out_slow_recorded);
    } else {
      unsigned long long cycles = 0;
      std::memcpy(&cycles, o, sizeof cycles);
      j.out_average_cycles = double(cycles) / double(j.steps);
    }
  }
}

void CudaEngine::sequence_chase(mt_sequence_job& job) {
  if (auto e = engine::check_sequence_job(job, info_); !e.empty()) throw Error(e);

  // Logical blocks, numbered densely in the order of their ids.
  std::map<uint32_t, uint32_t> dense;
  uint32_t max_lane = 0;
  for (size_t a = 0; a < job.actor_count; ++a) {
    dense.emplace(job.actors[a].block, 0);
    max_lane = std::max(max_lane, job.actors[a].lane);
  }
  uint32_t next = 0;
  for (auto& [id, d] : dense) d = next++;
  const uint32_t block_count = next;
  if (info_.sm_count > 0 && block_count > uint32_t(info_.sm_count))
    throw Error("the sequence has " + std::to_string(block_count) + " blocks but the device only " +
                std::to_string(info_.sm_count) + " SMs; the blocks of a sequence run on distinct SMs");
  // The SM of each block: actors of one block share it, blocks never do.
  std::vector<int32_t> pins(block_count, -1);
  std::vector<size_t> pinned_by(block_count, 0);
  for (size_t a = 0; a < job.actor_count; ++a) {
    const mt_actor& actor = job.actors[a];
    if (actor.sm < 0) continue;
    const uint32_t b = dense[actor.block];
    if (pins[b] >= 0 && pins[b] != actor.sm)
      throw Error("actor " + std::to_string(a) + ": block " + std::to_string(actor.block) + " is pinned to SM " +
                  std::to_string(pins[b]) + " by actor " + std::to_string(pinned_by[b]) + " and to SM " +
                  std::to_string(actor.sm) + " here; the actors of one block share one SM");
    pins[b] = actor.sm;
    pinned_by[b] = a;
  }
  std::set<int32_t> used;
  for (uint32_t b = 0; b < block_count; ++b)
    if (pins[b] >= 0 && !used.insert(pins[b]).second)
      throw Error("actor " + std::to_string(pinned_by[b]) + ": SM " + std::to_string(pins[b]) +
                  " is pinned by two blocks; the blocks of a sequence run on distinct SMs");

  CallArrays arrays(pool_, limits_);
  for (size_t p = 0; p < job.phase_count; ++p)
    arrays.need(job.phases[p].array, job.space, job.phases[p].start, job.phases[p].steps,
                "phase " + std::to_string(p));
  arrays.upload();

  // SHARED: every distinct array gets its place in each block's shared memory.
  std::map<const mt_chase_array*, uint32_t> shared_offset;
  uint64_t shared_elems = 0;
  if (job.space == MT_SPACE_SHARED)
    for (size_t p = 0; p < job.phase_count; ++p)
      if (shared_offset.emplace(job.phases[p].array, uint32_t(shared_elems)).second)
        shared_elems += job.phases[p].array->elems;
  const uint32_t room = max_dynamic_shared();
  uint32_t rec = kStepsPerPass;
  if (shared_elems * 4 + fine_sample_bytes(rec) > room) {
    rec = room > shared_elems * 4 + 8 ? uint32_t((room - shared_elems * 4) / 8 - 1) : 0;
    if (rec < kMinStepsPerPass)
      throw Error("the sequence's arrays take " + std::to_string(shared_elems * 4) +
                  " bytes of shared memory, which leaves no room for the sample buffer (" + std::to_string(room) +
                  " bytes per block)");
  }
  const uint32_t shared_bytes = uint32_t(shared_elems * 4);

  std::vector<uint64_t> out_offset(job.phase_count, 0);
  uint64_t out_words = 0;
  for (size_t p = 0; p < job.phase_count; ++p) {
    out_offset[p] = out_words;
    if (job.phases[p].out_latency) out_words += 2 * job.phases[p].steps;
  }
  PooledBuffer out(pool_, std::max<uint64_t>(out_words, 1) * 4);

  std::vector<DevicePhase> descs(job.phase_count);
  for (size_t p = 0; p < job.phase_count; ++p) {
    const mt_phase& ph = job.phases[p];
    const mt_actor& actor = job.actors[ph.actor];
    DevicePhase& d = descs[p];
    d.src = arrays.source(ph.array, job.space == MT_SPACE_SHARED ? shared_offset[ph.array] : 0);
    d.block = dense[actor.block];
    d.lane = actor.lane;
    d.start = ph.start;
    d.steps = ph.steps;
    if (ph.out_latency) {
      uint32_t* o = out.data() + out_offset[p];
      d.out_index = ph.out_index ? o : nullptr;
      d.out_latency = o + ph.steps;
    }
  }
  check(configure_kernel(Kernel::Sequence, arrays.param_bank() != nullptr, job.shared_carveout_percent,
                         fine_sample_bytes(rec) + shared_bytes),
        "cudaFuncSetAttribute");
  const uint32_t threads = uint32_t(round_up(max_lane + 1, 32));
  const double khz = info_.sm_clock_khz > 0 ? double(info_.sm_clock_khz) : 2e6;
  const auto phase_wait = static_cast<unsigned long long>(khz * 1000 * kPhaseWaitSeconds);

  std::vector<int32_t> block_sm;
  uint32_t abort = kAbortClaimTimeout;
  for (int attempt = 0; attempt < kAttempts && abort == kAbortClaimTimeout; ++attempt) {
    const DevicePhase* device_phases = nullptr;
    const ClaimTables t = upload_launch(pins, descs, &device_phases);
    check(launch_sequence(device_phases, uint32_t(job.phase_count), t, grid_blocks(), threads, uint32_t(job.space), rec,
                          shared_bytes, phase_wait, arrays.param_bank()),
          "cudaLaunchKernel");
    check(cudaDeviceSynchronize(), "kernel");
    abort = read_abort(t);
    block_sm = read_job_sms(t, block_count);
  }
  if (abort == kAbortPhaseTimeout)
    throw Error("a block waited more than " + std::to_string(int(kPhaseWaitSeconds)) +
                " s for the phases before its own; shorten the phases");
  if (abort != kAbortNone) {
    for (const auto& [id, b] : dense)
      if (block_sm[b] < 0)
        throw Error("block " + std::to_string(id) + " found no SM (" + sm_name(pins[b]) + ") in " +
                    std::to_string(kAttempts) + " launches of " + std::to_string(grid_blocks()) +
                    " blocks; is another process using the GPU (MPS, a green context)?");
    throw Error("the blocks of the sequence did not all start within the time-out in " + std::to_string(kAttempts) +
                " launches");
  }

  if (out_words) {
    std::vector<uint32_t> host(out_words);
    check(cudaMemcpy(host.data(), out.data(), out_words * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
    for (size_t p = 0; p < job.phase_count; ++p) {
      const mt_phase& ph = job.phases[p];
      if (!ph.out_latency) continue;
      const uint32_t* o = host.data() + out_offset[p];
      if (ph.out_index) std::memcpy(ph.out_index, o, 4 * ph.steps);
      std::memcpy(ph.out_latency, o + ph.steps, 4 * ph.steps);
    }
  }
  if (job.out_actor_sm)
    for (size_t a = 0; a < job.actor_count; ++a) job.out_actor_sm[a] = block_sm[dense[job.actors[a].block]];
}

double CudaEngine::timing_overhead() {
  if (overhead_) return *overhead_;
  const uint32_t samples = 8 * kStepsPerPass;
  PooledBuffer out(pool_, samples * 4);
  check(launch_overhead(out.data(), samples), "cudaLaunchKernel");
  check(cudaDeviceSynchronize(), "kernel");
  std::vector<uint32_t> v(samples);
  check(cudaMemcpy(v.data(), out.data(), samples * 4, cudaMemcpyDeviceToHost), "cudaMemcpy");
  std::nth_element(v.begin(), v.begin() + samples / 2, v.end());
  overhead_ = double(v[samples / 2]);
  return *overhead_;
}

}  // namespace memtopo::cuda
