/*
 * memtopo measurement: the C interface of the measurement engine.
 *
 * The host creates one backend (CUDA or the simulated GPU) and hands it to every probe in
 * mt_context::backend. A probe measures in one of two ways:
 *
 *  - Jobs (mt_job), run by mt_backend::run_jobs on the engine's own kernels. A job is one
 *    loading thread on one SM: who loads (an SM, or a thread of a block in a sequence), what
 *    it loads (a memory path, an array and a pattern: a chase along the array, random loads,
 *    or a pointer chase), how fast (mt_rate: streams, gaps, a pump) and what comes back (every
 *    load's latency, the total, or counts of slow loads). Caches, TLBs and latencies are
 *    measured this way, with the same semantics on both backends.
 *  - Probe kernels. An experiment a job does not express (lanes or warps loading together,
 *    vector loads, bandwidth streams, shared-memory banks, clusters, ...) is a kernel of the
 *    plugin's own, written once with the device toolkit (memtopo/device/,
 *    docs/writing-a-probe.md). It runs on the GPU through the CUDA runtime and on the simulated
 *    GPU through launch_kernel, in buffers from the backend's pool (alloc_buffer). Such
 *    experiments never become fields of mt_job.
 *
 * Conventions of jobs, shared by both backends:
 *  - A chase array holds 32-bit element indices: element i holds the index of the element
 *    loaded after it. Footprint = elems * 4 bytes. Every distinct mt_chase_array (by
 *    address) in one call is placed in its own device buffer, aligned to 2 MiB; jobs of one
 *    call that point at the same mt_chase_array share that buffer (and so the L2).
 *  - Latencies are SM clock cycles (clock64 on CUDA), raw: a per-load sample includes the
 *    timing overhead, which timing_overhead() reports. MT_RECORD_TOTAL has one clock pair
 *    around all timed loads, so its per-load average carries no per-load overhead.
 *  - Caches start each call in the state the hardware leaves them (the simulator starts
 *    each call with every cache and TLB empty). Jobs that need warm caches ask for a warm-up.
 *  - run_jobs returns 0 on success; on error it returns non-zero and writes a message (the
 *    CUDA error string, or what was wrong with the request) into `err`.
 */
#ifndef MEMTOPO_MEASURE_H
#define MEMTOPO_MEASURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Memory path of a load. */
typedef enum mt_space {
  MT_SPACE_GLOBAL_CA = 0, /* ld.global.ca: cached in L1 and L2 */
  MT_SPACE_GLOBAL_CG = 1, /* ld.global.cg: cached in L2 only */
  MT_SPACE_READONLY = 2,  /* ld.global.nc: read-only data path */
  MT_SPACE_TEXTURE = 3,   /* tex1Dfetch on a texture object over the array */
  MT_SPACE_CONSTANT = 4,  /* ld.const: constant caches. An array may span the device's
                             constant_reach_bytes (abi.h): past constant_memory_bytes its
                             elements live in the kernel-parameter bank, read through the same
                             constant caches; a call holds at most one such array. */
  MT_SPACE_SHARED = 5     /* ld.shared: array copied to shared memory first */
} mt_space;

typedef enum mt_array_kind {
  MT_ARRAY_EXPLICIT = 0, /* `next` holds every element */
  MT_ARRAY_STRIDE = 1    /* next[i] = (i + stride_elems) % elems, written only where visited:
                            lets a large sparse footprint (TLB tests) cost no host memory.
                            Up to 2^38 elements (1 TiB) where every job following it is a
                            pointer chase on a global path (MT_CAP_WIDE_STRIDE); other arrays
                            and jobs take at most 2^32 */
} mt_array_kind;

typedef struct mt_chase_array {
  uint32_t struct_size;
  mt_array_kind kind;
  const uint32_t* next; /* EXPLICIT: elems entries, each < elems */
  uint64_t elems;       /* length of the array in 4-byte elements */
  uint64_t stride_elems; /* STRIDE only */
} mt_chase_array;

/* Where a job's loads go. Every load waits for the one before it. */
typedef enum mt_pattern {
  /* Along the array from `start`: the loaded value is the index of the next element. */
  MT_PATTERN_CHASE = 0,
  /* To an element drawn uniformly at random, independently of every other load, from the
   * multiples of random_stride_elems below the array's length (xorshift64 seeded by
   * random_seed, the same draws on every backend). The array's contents do not matter; it
   * only sets the buffer. Since where a load goes does not depend on what the cache holds,
   * the share of fast loads is the share of the candidates the cache holds, under any
   * replacement policy. Global paths only (GLOBAL_CA, GLOBAL_CG, READONLY). */
  MT_PATTERN_RANDOM = 1,
  /* Along the array as CHASE, but memory holds the address of the next element, so a load's
   * value is the next load's address with nothing computed in between: the per-load time is
   * the load-to-use latency. Global paths store 64-bit addresses at the element's byte offset
   * (every visited element index must be even); constant and shared memory store 32-bit
   * addresses of their state space; a texture fetch takes the index itself as its coordinate,
   * so there POINTERS equals CHASE. Only with MT_RECORD_TOTAL. */
  MT_PATTERN_POINTERS = 2
} mt_pattern;

/* What a job returns. */
typedef enum mt_record {
  /* The element index and raw latency of every timed load (out_index, out_latency). On the
   * GPU a job records in passes of a few hundred loads, each after the warm-up again. */
  MT_RECORD_SAMPLES = 0,
  /* One clock pair around all timed loads: out.cycles and out.average_cycles. */
  MT_RECORD_TOTAL = 1,
  /* Each timed load classified on the device: slower than slow_cycles (raw) is slow, slower
   * than slow_max_cycles (when not 0) an interruption counted in out.outliers. The steps of
   * the first slow loads are kept (out_slow_step), so a caller can tell a miss that recurs
   * at the same element in every pass from a stray slow load. Nothing is written to memory
   * while timing, so whole passes over arrays of any size cost what the loads cost. */
  MT_RECORD_COUNTS = 2
} mt_record;

/* How fast a job's loads come. All zero: one stream, each load right after the last.
 * Anything else paces counted loads (MT_RECORD_COUNTS) only. */
typedef struct mt_rate {
  /* Independent timed load streams on the job's SM (0 or 1: one; at most
   * mt_backend::streams_max), one warp each, each its own dependent chain taking its share of
   * the warm-up and timed loads: random loads, stream k drawing from its own generator, or a
   * chase on a global path or in shared memory, every stream along the array from `start`.
   * Outputs are summed; stream 0 alone keeps slow steps, numbered in its own steps. */
  uint32_t streams;
  /* Cycles each stream waits after every load, outside the timed window (random loads). */
  uint32_t gap_cycles;
  /* A pump (RANDOM, one timed stream, no gap): pump_warps x pump_lanes untimed generators on
   * the same SM (at most mt_backend::pump_warps_max warps, 1 to 32 lanes each) load from the
   * same candidates. The job runs in windows: the pump loads for pump_cycles, stops and lets
   * its loads finish, then the timed stream makes probe_loads loads (0 reads as 1) while the
   * pump waits. The pump sets the rate at which lines come in; the timed loads never queue
   * behind its loads, so a hit stays as fast as at one stream. */
  uint32_t pump_warps;
  uint32_t pump_lanes;
  uint32_t pump_cycles;
  uint32_t probe_loads;
} mt_rate;

/* What a job reported (written by the backend). */
typedef struct mt_job_result {
  int32_t sm;              /* SM the job ran on (%smid on the GPU) */
  uint32_t reserved;
  uint64_t cycles;         /* raw cycles: SAMPLES the sum over timed loads, COUNTS over those
                              that are not outliers; TOTAL the clock pair around them */
  double average_cycles;   /* cycles / steps */
  uint64_t slow;           /* COUNTS: slow loads among the timed ones */
  uint64_t slow_recorded;  /* COUNTS: entries written to out_slow_step: min(slow,
                              slow_capacity, the backend's limit, at least 1024) */
  uint64_t outliers;       /* COUNTS: loads above slow_max_cycles */
  uint64_t span_cycles;    /* first timed load's start to the last one's end, every stream and
                              pump window included; 0 where the backend does not measure it */
  uint64_t pump_loads;     /* pump loads of the windows within the span */
} mt_job_result;

/* One job. Jobs of order 0 run at the same time, each in a block of its own on its own SM
 * (a call holds at most one job per SM). Jobs of order k > 0 form a sequence: each runs
 * after every job of a lower order has finished, the others waiting, so "a fills, b fills,
 * a re-measures" is three jobs of orders 1, 2, 3; jobs of one sequence with the same block
 * run in one block (one SM, sharing its L1), as thread `lane` of it, and different blocks
 * on different SMs. A call is either all order 0 or a sequence. Jobs needing another kernel
 * configuration (carveout, record, an array in shared memory) run in separate launches of
 * one call, one after the other. */
typedef struct mt_job {
  uint32_t struct_size;       /* sizeof(mt_job): a job of another size is refused */
  /* who */
  int32_t sm;                 /* SM to run on, or -1 for any free one */
  int32_t block;              /* sequences: logical block (>= 0); -1: one of its own */
  uint32_t lane;              /* sequences: thread of the block */
  uint32_t order;             /* 0: at once; k > 0: the job's place in a sequence */
  int32_t shared_carveout_percent; /* -1: backend default; 0: largest L1 the device allows */
  /* what it loads */
  mt_space space;
  mt_pattern pattern;
  const mt_chase_array* array;
  uint32_t start;             /* CHASE, POINTERS: index of the first element loaded */
  /* Counted CHASE over a STRIDE array with rate.streams > 1 (since ABI 3.1). 0: every stream
   * along the array from `start`. 1: stream k starts k * ceil(L / streams) elements along the
   * cycle from `start` (L: the cycle's length), so that the streams together load each
   * element once per L loads, as one chase does, in about 1/streams of its time: a capacity
   * test of a shared cache gives the same counts faster. Slow steps (stream 0) are then
   * numbered along stream 0's own part of the cycle. */
  uint32_t stagger_streams;
  uint64_t random_stride_elems; /* RANDOM: candidates are 0, stride, 2 * stride, ... (< 2^32) */
  uint64_t random_seed;       /* RANDOM */
  uint64_t warmup_steps;      /* loads before timing starts (0: start cold) */
  uint64_t steps;             /* loads timed */
  mt_rate rate;
  /* what it returns */
  mt_record record;
  uint32_t slow_cycles;       /* COUNTS: threshold, raw cycles (timing overhead included) */
  uint32_t slow_max_cycles;   /* COUNTS: ceiling (0: none) */
  uint32_t slow_capacity;     /* COUNTS: entries of out_slow_step */
  uint32_t* out_slow_step;    /* COUNTS: [slow_capacity] or NULL: timed-step numbers (0 = first
                                 timed load) of the first slow loads, in order */
  uint32_t* out_index;        /* SAMPLES: [steps] element index of each timed load, or NULL */
  uint32_t* out_latency;      /* SAMPLES: [steps] raw cycles of each timed load; in a sequence
                                 NULL makes the job load without timing */
  mt_job_result out;
} mt_job;

/* What a backend runs (mt_backend::capabilities). A job needing a missing bit is refused
 * with a message that names it. */
#define MT_CAP_SAMPLES (1ull << 0)   /* MT_RECORD_SAMPLES */
#define MT_CAP_TOTAL (1ull << 1)     /* MT_RECORD_TOTAL */
#define MT_CAP_COUNTS (1ull << 2)    /* MT_RECORD_COUNTS */
#define MT_CAP_RANDOM (1ull << 3)    /* MT_PATTERN_RANDOM */
#define MT_CAP_POINTERS (1ull << 4)  /* MT_PATTERN_POINTERS */
#define MT_CAP_STREAMS (1ull << 5)   /* mt_rate streams and gap_cycles */
#define MT_CAP_PUMP (1ull << 6)      /* mt_rate pump */
#define MT_CAP_SEQUENCE (1ull << 7)  /* jobs of order > 0 */
#define MT_CAP_KERNELS (1ull << 8)   /* probes' own kernels: alloc_buffer, copy_buffer and, on the
                                        simulated GPU, launch_kernel */
#define MT_CAP_WIDE_STRIDE (1ull << 9) /* stride arrays over 2^32 elements (pointer chases) */

/* ---------------------------------------------------------------- probe kernels
 *
 * A probe's own kernel is written once with the device toolkit (memtopo/device/) and runs on
 * either backend: on CUDA the plugin launches it through the CUDA runtime; on the simulated
 * GPU, launch_kernel runs every thread of it as a cooperatively scheduled context, ordered by
 * its simulated clock, and the toolkit's operations (loads per path, clocks, barriers, shared
 * memory, clusters, atomics) call the simulated hierarchy through mt_kernel_ops. Plain C++
 * inside a kernel (arithmetic, ordinary loads and stores) runs as it is and takes no time. */

typedef struct mt_dim3 {
  uint32_t x, y, z;
} mt_dim3;

typedef struct mt_kernel_launch {
  uint32_t struct_size;
  const char* name;              /* for messages */
  mt_dim3 grid, block;           /* blocks and threads per block */
  mt_dim3 cluster;               /* blocks per cluster (all 1: none) */
  uint32_t dynamic_shared_bytes; /* shared memory of each block besides its static arrays */
  int32_t shared_carveout_percent; /* -1: the default; 0: the largest L1 */
  void (*thread_main)(void* args); /* runs one thread of the kernel */
  void* args;
  uint32_t flags;                  /* MT_LAUNCH_* */
  uint32_t reserved;
} mt_kernel_launch;

/* Clusters of more than 8 blocks (cudaFuncAttributeNonPortableClusterSizeAllowed). */
#define MT_LAUNCH_NON_PORTABLE_CLUSTER 1u

/* What launch_kernel returns when the device refuses the launch's shape (a cluster no GPC
 * holds, a block too large): the probe may try another, as a CUDA launch error would let it. */
#define MT_LAUNCH_REFUSED 2

typedef struct mt_kernel_report {
  uint32_t struct_size;
  uint64_t cycles;           /* SM-clock cycles from the launch to the end of its last thread */
  double elapsed_ns;         /* the same at the device's SM clock */
  uint32_t blocks_per_sm;    /* blocks one SM held at once */
  uint32_t reserved;
} mt_kernel_report;

/* What a device holds of one launch at once (mt_backend::occupancy). */
typedef struct mt_occupancy {
  uint32_t struct_size;
  uint32_t blocks_per_sm;  /* blocks of the kernel one SM holds */
  uint32_t clusters;       /* clusters of launch.cluster blocks the device holds (0: none fits) */
  uint32_t reserved;
} mt_occupancy;

/* Where a simulated thread runs (mt_kernel_ops::place). */
typedef struct mt_thread_place {
  uint32_t struct_size;
  mt_dim3 thread, block, block_dim, grid_dim;
  uint32_t cluster_rank, cluster_blocks;
  uint32_t sm, sm_count;
  uint32_t lane, warp;
} mt_thread_place;

/* Paths of toolkit memory operations: mt_space's numbers, and these. */
#define MT_OP_PATH_REGISTER 6u /* no load: a register move */
#define MT_OP_PATH_CLUSTER 7u  /* ld.shared::cluster: another block's shared memory */
#define MT_OP_PATH_PARAM 8u    /* ld.param */
/* Or'ed into a load's path: a timed load, whose clock reads and store around it add the
 * backend's timing overhead (timing_overhead) to the thread's time. */
#define MT_OP_TIMED 0x100u

/* Atomic operations (mt_kernel_ops::atomic). */
#define MT_ATOMIC_ADD 0u
#define MT_ATOMIC_CAS 1u
#define MT_ATOMIC_EXCH 2u
#define MT_ATOMIC_MAX 3u

/* Barrier scopes (mt_kernel_ops::barrier). */
#define MT_BARRIER_BLOCK 0u
#define MT_BARRIER_CLUSTER 1u

/* Access programs: a lane's whole sequence of loads of a common pattern, in one call. On the
 * GPU the toolkit runs the loop itself (memtopo/device/programs.hpp); the simulated GPU runs the
 * warp's program natively, step by step in the order of simulated time, without switching to
 * the threads at each load. */
#define MT_PROGRAM_SWEEP 1u  /* a stream: places first, first + step, ... below end */
#define MT_PROGRAM_RANDOM 2u /* chains of loads to random lines, timed per step */
#define MT_PROGRAM_FOLLOW 3u /* pointer chains: each load's value is the next one's address */

/* What a sweep does at each place (mt_access_program::op). */
#define MT_SWEEP_READ 1u
#define MT_SWEEP_WRITE 2u
#define MT_SWEEP_COPY 3u   /* read src, write dst */
#define MT_SWEEP_UPDATE 4u /* read, add one to the first word, write back */

typedef struct mt_access_program {
  uint32_t struct_size;
  uint32_t kind;   /* MT_PROGRAM_* */
  uint32_t path;   /* a global path (mt_space); a MT_SWEEP_READ sweep also MT_SPACE_SHARED or
                     MT_OP_PATH_CLUSTER, whose src is a 32-bit shared or cluster address */
  uint32_t width;  /* bytes of each access: 4, 8 or 16 */
  /* MT_PROGRAM_SWEEP: at each place i (in elements of `width` bytes) from `first`, `step` apart
   * while below `end`, `ilp` accesses at i, i + spread, ..., issued together: loads of `src`
   * (the lane waits for them), then, by `op`, stores to `dst` of the loaded value or of `value`
   * + i in every word; all of it `passes` times (0 reads as 1), `value` one more each pass. The
   * result's fold is the xor of every word loaded. */
  uint32_t op, ilp;
  uint64_t src, dst;
  uint64_t first, end, step, spread;
  uint32_t value;
  uint32_t passes;
  /* MT_PROGRAM_RANDOM: `chains` (1..8) chains of loads issued together at each step, then
   * waited for; chain c's next place is xorshift64 of states[c]: a draw of one of `candidates`
   * places `stride` bytes apart from `src`. `warmup` steps untimed, then `steps` timed: each step
   * counts its cycles (clock, loads, a store of each value, clock) once per chain, or as an
   * outlier per chain above `ceiling` cycles (0: none). */
  uint32_t chains, candidates, stride;
  uint32_t ceiling;
  uint64_t warmup, steps;
  uint64_t states[8];
  /* MT_PROGRAM_FOLLOW: `chains` (1..8) pointer chains of `steps` loads each; at each step the
   * lane loads the pointer of every chain (issued together, then waited for) from the address
   * states[c] holds, which becomes states[c]: `width` 8, generic addresses on a global path, or
   * 4, shared-space addresses with MT_SPACE_SHARED. The result's states are the last pointers. */
} mt_access_program;

typedef struct mt_program_result {
  uint32_t struct_size;
  uint32_t fold;         /* SWEEP: xor of the words loaded */
  uint64_t cycles;       /* RANDOM: cycles of the timed steps that were no outliers, once per chain */
  uint64_t outliers;     /* RANDOM: loads of steps above the ceiling */
  uint64_t first, last;  /* RANDOM: the clock at the first timed step and at the end */
  uint64_t states[8];    /* RANDOM: the chains' generators after the last step; FOLLOW: the
                            pointers the last step loaded */
} mt_program_result;

/* What the toolkit's operations call inside a simulated thread. Addresses of the global paths
 * are the host pointers the backend's buffers are; shared and cluster addresses are the 32-bit
 * ones shared_address and cluster_address make. None of them returns on an error: the launch
 * fails with the message. */
typedef struct mt_kernel_ops {
  uint32_t struct_size;
  void* self;
  void (*place)(void* self, mt_thread_place* out);
  uint64_t (*clock)(void* self);            /* the thread's SM clock */
  uint64_t (*globaltimer_ns)(void* self);
  /* `count` independent loads of `bytes` each (4, 8 or 16) that are in flight together; the
   * thread waits for the last. out: count x bytes. */
  void (*load)(void* self, uint32_t path, const uint64_t* addresses, uint32_t count, uint32_t bytes, void* out);
  void (*store)(void* self, uint32_t path, uint64_t address, uint32_t bytes, const void* value);
  uint64_t (*atomic)(void* self, uint32_t op, uint32_t path, uint64_t address, uint32_t bytes, uint64_t operand,
                     uint64_t compare);
  void (*barrier)(void* self, uint32_t scope);
  /* This block's shared memory (host memory) and its size; a static array of `bytes` carved
   * from it in declaration order (the same offsets in every thread of the block). */
  void* (*shared_base)(void* self, uint32_t* size_out);
  void* (*shared_static)(void* self, uint32_t bytes, uint32_t align);
  /* Cycles of work the simulator does not see (an instruction sequence a probe models). */
  void (*spend)(void* self, uint64_t cycles);
  void (*fail)(void* self, const char* message);
  /* The lane's access program (MT_PROGRAM_*); lanes of one warp that start one together run as
   * the warp's program. */
  void (*program)(void* self, const mt_access_program* program, mt_program_result* result);
} mt_kernel_ops;

/* How copy_buffer moves bytes. */
#define MT_COPY_TO_DEVICE 1u
#define MT_COPY_TO_HOST 2u
#define MT_COPY_ON_DEVICE 3u

/* ---------------------------------------------------------------- hardware counts (since 3.3)
 *
 * What each level of the memory hierarchy served while a probe's work ran, as the hardware
 * counted it (CUDA: CUPTI's range profiler) or as the simulated GPU's model counts the same
 * events. A probe compares them with what it believes it moved or hit (memtopo/verify.hpp,
 * docs/measurement.md "Counters"). Sector counts are in units of sector_bytes. */
typedef struct mt_counts {
  uint32_t struct_size;
  uint32_t wanted;              /* in: MT_COUNT_* bits of the counts the work needs (0: all); the
                                   backend may count more. A count not taken is negative. */
  uint32_t passes;              /* times the work ran: counters that do not fit one pass need more */
  uint32_t sector_bytes;        /* 32 */
  double l1_load_sectors;       /* global loads (ld.global, any cache operator) looked up in the L1 */
  double l1_load_hit_sectors;   /* of them, hits */
  double l2_read_sectors;       /* read sectors the SMs asked of the L2 slices */
  double l2_read_hit_sectors;   /* of them, hits */
  double l2_write_sectors;      /* write sectors the SMs sent to the L2 slices */
  double l2_to_sm_bytes;        /* bytes the L2 side delivered to the SMs' L1s (the crossbar) */
  double dram_read_bytes;
  double dram_write_bytes;
} mt_counts;

/* What mt_counts::wanted asks for: the counts a caller reads (a backend may count more; the
 * simulated GPU returns only these). */
#define MT_COUNT_L1 1u        /* l1_load_sectors, l1_load_hit_sectors */
#define MT_COUNT_L2_READ 2u   /* l2_read_sectors */
#define MT_COUNT_L2_HIT 4u    /* l2_read_hit_sectors */
#define MT_COUNT_L2_WRITE 8u  /* l2_write_sectors */
#define MT_COUNT_TO_SM 16u    /* l2_to_sm_bytes */
#define MT_COUNT_DRAM 32u     /* dram_read_bytes, dram_write_bytes */

/* mt_backend::count: the backend cannot count here (no counter library, no permission, a MIG
 * instance); its message says why and the work did not run. */
#define MT_COUNT_REFUSED 2

/* Where the GPU sits in its host (mt_backend::attachment, 3.8): what the driver's management
 * library and the host's hardware locality say, or the simulated device's description. A field
 * nobody could tell is -1 (numbers) or "" (text). */
typedef struct mt_attachment {
  uint32_t struct_size;
  int32_t numa_node;            /* the host NUMA node nearest the GPU */
  int32_t numa_nodes;           /* NUMA nodes of the host that hold memory */
  char local_cpus[256];         /* the host CPUs nearest the GPU, as a list: "0-15,32-47" */
  int32_t pcie_generation;      /* as trained, read while a copy keeps the link busy (an idle
                                   link may step down to save power) */
  int32_t pcie_generation_max;  /* the most the GPU and its slot allow */
  int32_t pcie_width_lanes;     /* as trained, read as the generation */
  int32_t pcie_width_max_lanes;
  int32_t nvlink_links;         /* NVLinks the GPU has (0: none) */
  int32_t nvlink_links_up;
  char nvlink_peers[1024];      /* the PCI bus ids at the other end of the active links, comma-separated */
  char source[128];             /* what told: "NVML 12.575, hwloc 2.9.0" */
} mt_attachment;

/* mt_link_copy::direction */
#define MT_LINK_HOST_TO_DEVICE 1u
#define MT_LINK_DEVICE_TO_HOST 2u
#define MT_LINK_PEER 3u  /* this GPU's memory to a peer GPU's */
/* mt_link_copy::host_numa_node: the node nearest the GPU, or the farthest one with memory. */
#define MT_HOST_NUMA_NEAR (-1)
#define MT_HOST_NUMA_FAR (-2)

/* Copies over a link the backend times (mt_backend::time_link_copies, 3.8): `repeats` copies of
 * `bytes` each, from or to page-locked host memory bound to a NUMA node, or to a peer GPU; the
 * time of each on the GPU's clock (events around the copy alone). */
typedef struct mt_link_copy {
  uint32_t struct_size;
  uint32_t direction;      /* MT_LINK_* */
  int32_t host_numa_node;  /* MT_HOST_NUMA_NEAR, MT_HOST_NUMA_FAR or a node number */
  uint32_t peer;           /* MT_LINK_PEER: which of the peers the GPU can reach, from 0 */
  uint64_t bytes;
  uint32_t repeats;
  uint32_t reserved;
  double* elapsed_ns;      /* `repeats` entries, the caller's */
  int32_t numa_node_used;  /* out: the node the host memory was bound to (-1: not bound) */
  int32_t peers;           /* out: how many peers the GPU can reach */
  char peer_name[64];      /* out: the peer's PCI bus id */
} mt_link_copy;

/* mt_backend::time_link_copies: no such copy here (one NUMA node, no peer); err says why. */
#define MT_LINK_UNAVAILABLE 2

/* The function table of a backend. `self` is the first argument of every function. */
typedef struct mt_backend {
  uint32_t struct_size;
  void* self;
  const char* name;       /* "cuda" or "sim" */
  uint64_t capabilities;  /* MT_CAP_* */
  uint32_t streams_max;   /* most mt_rate::streams of one job */
  uint32_t pump_warps_max; /* most mt_rate::pump_warps of one job */
  /* Runs `count` jobs (pointers to them; each one's struct_size is sizeof(mt_job)). */
  int (*run_jobs)(void* self, mt_job* const* jobs, size_t count, char* err, size_t err_size);
  /* Cycles the per-load timing of MT_RECORD_SAMPLES adds to a sample when the load is
   * replaced by a register move (clock reads and the dependent store). */
  int (*timing_overhead)(void* self, double* out_cycles, char* err, size_t err_size);
  /* MT_CAP_KERNELS: a device buffer of at least `bytes` from the backend's pool (2 MiB
   * aligned), for a probe's own kernels; free_buffer gives it back. NULL elsewhere. */
  int (*alloc_buffer)(void* self, uint64_t bytes, void** out_device_ptr, char* err, size_t err_size);
  void (*free_buffer)(void* self, void* device_ptr);
  /* MT_CAP_KERNELS: bytes between host memory and a buffer, or within buffers (MT_COPY_*),
   * and a buffer filled with one byte value. */
  int (*copy_buffer)(void* self, void* dst, const void* src, uint64_t bytes, uint32_t kind, char* err, size_t err_size);
  int (*fill_buffer)(void* self, void* dst, int value, uint64_t bytes, char* err, size_t err_size);
  /* The simulated GPU runs a probe kernel (NULL on CUDA, where the plugin launches through
   * the CUDA runtime), and tells how many blocks and clusters of `launch` it holds at once. */
  int (*launch_kernel)(void* self, const mt_kernel_launch* launch, mt_kernel_report* report, char* err,
                       size_t err_size);
  int (*occupancy)(void* self, const mt_kernel_launch* launch, mt_occupancy* out, char* err, size_t err_size);
  const mt_kernel_ops* kernel_ops; /* what the toolkit calls inside a simulated thread */
  /* Since 3.3 (struct_size tells; NULL: no counters). Runs `work(arg)` under the hardware
   * counters and fills `out` with what each level served meanwhile: once, or once per pass
   * where the counters need several (the work must then do the same each time). Returns 0 when
   * counted; MT_COUNT_REFUSED when this backend cannot count here (err says why; the work did
   * not run); otherwise work's non-zero return, or 1 where counting failed (err says why). */
  int (*count)(void* self, int (*work)(void* arg), void* arg, mt_counts* out, char* err, size_t err_size);
  /* Since 3.8 (struct_size tells; NULL: not known). Where the GPU sits in its host. */
  int (*attachment)(void* self, mt_attachment* out, char* err, size_t err_size);
  /* Since 3.8 (NULL: none). Times copies over the GPU's links (mt_link_copy); 0 when timed,
   * MT_LINK_UNAVAILABLE where there is no such copy, otherwise 1 (err says why). */
  int (*time_link_copies)(void* self, mt_link_copy* copy, char* err, size_t err_size);
} mt_backend;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMTOPO_MEASURE_H */
