// Interface between the host side of the CUDA backend and its kernels (kernels.cu).
//
// Without separable compilation the kernels, the __constant__ chase buffer and every
// launch must live in one translation unit: kernels.cu includes each kernel's header; the
// host code reaches them only through the functions declared here. docs/measurement.md
// explains the kernel design.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "engine/param_bank.hpp"

namespace memtopo::cuda {

// Memory paths, numbered as mt_space; kSpaceOverhead replaces the load by a register move.
enum : uint32_t {
  kSpaceGlobalCa = 0,
  kSpaceGlobalCg = 1,
  kSpaceReadonly = 2,
  kSpaceTexture = 3,
  kSpaceConstant = 4,
  kSpaceShared = 5,
  kSpaceOverhead = 6,
  kSpaceConstantWide = 7,  // kernels with a ParamBank run kSpaceConstant jobs as this
};

// Timed steps one recording pass can hold in shared memory. Index and latency take 8 bytes a
// step, so 512 steps are 4 KiB (plus one scratch slot): small enough not to steal L1
// capacity where L1 and shared memory share one array.
constexpr uint32_t kStepsPerPass = 512;

// Elements of the __constant__ chase buffer (64 KiB, the constant-memory limit of every
// architecture the fat binary targets).
constexpr uint32_t kConstantElems = 16384;

// A constant-space array longer than the buffer continues in the kernel-parameter bank
// (engine/param_bank.hpp): a __grid_constant__ parameter read with ld.param.
constexpr uint32_t kParamBankElems = uint32_t(engine::kParamBankBytes / 4);
struct ParamBank {
  uint32_t next[kParamBankElems];
};

// Where a chase reads its array.
struct ChaseSource {
  const uint32_t* global = nullptr;  // device buffer (global paths; copy source for SHARED)
  unsigned long long texture = 0;    // cudaTextureObject_t (TEXTURE)
  uint32_t constant_offset = 0;      // CONSTANT: first element in the constant buffer
  uint32_t shared_offset = 0;        // SHARED: first element in the block's shared array area
  uint64_t elems = 0;                // array length
  // CONSTANT: elements in the constant buffer; those from here on are in the ParamBank of
  // the launch (only kernels launched with one read it).
  uint32_t constant_split = 0xffffffffu;
  uint32_t pad = 0;
};

// One job of order 0 (mt_job), as the kernel sees it.
struct DeviceChaseJob {
  ChaseSource src;
  uint32_t space = 0;
  uint32_t start = 0;
  uint64_t warmup = 0;      // untimed loads first (again in every recording pass)
  uint64_t record = 0;      // loads timed (fine: in passes of steps_per_pass)
  uint32_t* out_index = nullptr;    // fine: [record] or null
  uint32_t* out_latency = nullptr;  // fine: [record]
  unsigned long long* out_cycles = nullptr;  // average: cycles of the whole timed loop;
                                             // count: [6] slow loads, steps kept, cycles, outliers,
                                             // span (first timed load to last, every stream),
                                             // pump loads within the span
  uint32_t* out_last = nullptr;     // average: index reached (keeps the chase alive);
                                    // count: [count_capacity] steps of the first slow loads
  uint32_t slow_cycles = 0;         // count: threshold (raw cycles)
  uint32_t slow_max_cycles = 0;     // count: ceiling (0: none); above it a load is an outlier
  uint32_t count_capacity = 0;      // count: steps kept (at most kCountSteps)
  // Random-load count: loads go to random multiples of random_stride (0: follow the array),
  // drawn by xorshift64 from random_state (engine::RandomPlaces). dep_mask is always 0 but
  // read at run time, so the compiler must keep each load's address waiting for the last load.
  unsigned long long random_state = 0;
  uint32_t random_stride = 0;
  uint32_t random_candidates = 0;
  uint32_t dep_mask = 0;
  // Random-load count: independent streams (lane 0 of one warp each; their generators start
  // from engine::stream_state) and the cycles each waits after every load.
  uint32_t streams = 1;
  uint32_t gap_cycles = 0;
  // Pumped count: warps 1 .. pump_warps (lanes 0 .. pump_lanes-1) load for pump_cycles before
  // every probe_loads loads of the timed stream (thread 0); 0 warps: no pump.
  uint32_t pump_warps = 0;
  uint32_t pump_lanes = 0;
  uint32_t pump_cycles = 0;
  uint32_t probe_loads = 1;
  // Average: a pointer chase (MT_PATTERN_POINTERS); the array holds addresses (and a shared
  // array is turned into addresses while it is copied in).
  uint32_t pointers = 0;
  // Counted chase, staggered streams: stream k starts at (start + k stagger) % stagger_modulus.
  uint32_t stagger = 0;
  unsigned long long stagger_modulus = 0;
};

// Slow-load steps a counting chase keeps: the fine chase's sample buffer (4 KiB) reused as
// 4-byte step numbers, so both kernels leave the same shared memory to the L1.
// Pump lane k draws from stream k + kPumpStreamBase (engine::kPumpStreamBase): never a timed
// stream's generator.
constexpr uint32_t kPumpStreamBase = 64;

// Words before a count's kept steps: slow, kept, cycles, outliers, span, pump loads (u64).
constexpr uint32_t kCountHeadWords = 12;

constexpr uint32_t kCountSteps = 2 * (kStepsPerPass + 1) - 2;

// Tables that steer which block runs which job (device pointers into one upload).
struct ClaimTables {
  const int32_t* sm_to_job = nullptr;  // [sm_slots]: job pinned to that SM, or -1
  const int32_t* unpinned = nullptr;   // [unpinned_count]: jobs that take any free SM
  uint32_t unpinned_count = 0;
  uint32_t job_count = 0;
  uint32_t sm_slots = 0;               // size of sm_to_job and sm_owner (>= %nsmid)
  int32_t* sm_owner = nullptr;         // [sm_slots] zeroed: 1 once a block claimed the SM
  uint32_t* counters = nullptr;        // [4] zeroed: next unpinned, claimed, phase, abort
  int32_t* job_sm = nullptr;           // [job_count] out: SM each job ran on, -1 if none
  unsigned long long wait_cycles = 0;  // how long claimed blocks wait for the others
};

// One job of a sequence (mt_job of order > 0), as the kernel sees it.
struct DevicePhase {
  ChaseSource src;
  uint32_t block = 0;  // logical block (dense, 0..block_count-1)
  uint32_t lane = 0;
  uint32_t start = 0;
  uint32_t space = 0;
  uint64_t warmup = 0;  // untimed loads first
  uint64_t steps = 0;
  uint32_t* out_index = nullptr;    // [steps] or null
  uint32_t* out_latency = nullptr;  // [steps] or null (untimed phase)
};

// Reasons a sequence kernel gave up, in counters[3].
enum : uint32_t { kAbortNone = 0, kAbortClaimTimeout = 1, kAbortPhaseTimeout = 2 };

// Every launch returns the cudaError_t of the launch itself (cudaGetLastError); the caller
// synchronizes and checks execution errors.
// `bank` (or null) is the call's ParamBank: with one, the launch runs the kernel variant that
// passes it as a parameter and reads constant arrays past their split from it.
cudaError_t launch_fine(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                        uint32_t steps_per_pass, uint32_t shared_array_bytes, const ParamBank* bank);
cudaError_t launch_average(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                           uint32_t shared_array_bytes, const ParamBank* bank);
cudaError_t launch_sequence(const DevicePhase* phases, uint32_t phase_count, const ClaimTables& t,
                            uint32_t blocks, uint32_t threads, uint32_t record_steps,
                            uint32_t shared_array_bytes, unsigned long long phase_wait_cycles,
                            const ParamBank* bank);
// `warps`: the most warps any job needs (its streams, or its timed warp and pump warps).
cudaError_t launch_count(const DeviceChaseJob* jobs, const ClaimTables& t, uint32_t blocks,
                         uint32_t shared_array_bytes, const ParamBank* bank, uint32_t warps = 1);
cudaError_t launch_overhead(uint32_t* out_latency, uint32_t samples);
cudaError_t launch_stride_fill(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start,
                               uint64_t count);
// The pointer form of a stride array in global memory (MT_PATTERN_POINTERS), written at its
// visited elements as the index form is.
cudaError_t launch_stride_pointer_fill(uint32_t* buffer, uint64_t elems, uint64_t stride, uint64_t start,
                                       uint64_t count);
cudaError_t launch_smid_count(uint32_t* out_nsmid);
// The const-space address of the __constant__ chase buffer, written to `out` (device memory).
cudaError_t launch_constant_base(unsigned long long* out);

// Dynamic shared memory a launch needs besides the arrays copied into shared memory.
uint32_t fine_sample_bytes(uint32_t steps_per_pass);
uint32_t count_sample_bytes();

// Sets the carveout (-1: default) and the dynamic shared-memory limit of a kernel (the
// variant with a ParamBank when `wide`).
enum class Kernel { Fine, Average, Sequence, Count };
cudaError_t configure_kernel(Kernel k, bool wide, int carveout_percent, uint32_t dynamic_shared_bytes);

// Copies elements into the __constant__ chase buffer at an element offset.
cudaError_t upload_constant(const uint32_t* host, uint64_t elems, uint32_t offset_elems);

// Loads every kernel's module (lazy loading) so no first launch pays for it.
cudaError_t load_kernels();

}  // namespace memtopo::cuda
