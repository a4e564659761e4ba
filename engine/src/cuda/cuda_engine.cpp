#include "cuda_engine.hpp"

#include <algorithm>
#include <cstring>

#include "cuda_util.hpp"
#include "engine/random_places.hpp"

namespace memtopo::cuda {
namespace {

size_t align16(size_t v) { return (v + 15) & ~size_t(15); }

}  // namespace

const engine::BackendLimits& CudaEngine::limits() {
  static const engine::BackendLimits l{MT_CAP_SAMPLES | MT_CAP_TOTAL | MT_CAP_COUNTS | MT_CAP_RANDOM | MT_CAP_POINTERS |
                                           MT_CAP_STREAMS | MT_CAP_PUMP | MT_CAP_SEQUENCE | MT_CAP_KERNELS | MT_CAP_WIDE_STRIDE,
                                       kStreamsMax, kPumpWarpsMax};
  return l;
}

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
  unsigned long long* base = static_cast<unsigned long long*>(control_);
  check(launch_constant_base(base), "cudaLaunchKernel");
  check(cudaMemcpy(&limits_.constant_base, base, 8, cudaMemcpyDeviceToHost), "reading the constant buffer's address");
  const double khz = info.sm_clock_khz > 0 ? double(info.sm_clock_khz) : 2e6;
  wait_cycles_ = static_cast<unsigned long long>(khz * 50);  // 50 ms
}

CudaEngine::~CudaEngine() {
  for (DeviceBuffer& b : lent_) pool_.give_back(b);
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

template ClaimTables CudaEngine::upload_launch(const std::vector<int32_t>&, const std::vector<DeviceChaseJob>&,
                                             const DeviceChaseJob**);
template ClaimTables CudaEngine::upload_launch(const std::vector<int32_t>&, const std::vector<DevicePhase>&,
                                             const DevicePhase**);

void CudaEngine::run_jobs(mt_job* const* jobs, size_t count) {
  static_assert(kPumpStreamBase == engine::kPumpStreamBase, "pump generators differ between the backends");
  engine::JobCall call;
  if (auto e = engine::read_jobs(jobs, count, call); !e.empty()) throw Error(e);
  if (auto e = engine::check_jobs(call, info_, limits()); !e.empty()) throw Error(e);
  if (call.sequence)
    run_sequence(call);
  else
    run_concurrent(call);
  engine::write_results(call, jobs);
}

void* CudaEngine::alloc_buffer(uint64_t bytes) {
  lent_.push_back(pool_.take(bytes));
  return lent_.back().data;
}

void CudaEngine::free_buffer(void* data) {
  for (size_t i = 0; i < lent_.size(); ++i) {
    if (lent_[i].data != data) continue;
    pool_.give_back(lent_[i]);
    lent_.erase(lent_.begin() + std::ptrdiff_t(i));
    return;
  }
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
