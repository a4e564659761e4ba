/*
 * memtopo measurement primitives: the C interface of the measurement engine.
 *
 * The host creates one backend (CUDA or the simulated GPU) and hands it to every probe
 * in mt_context::backend. Probes call the primitives through this function table and
 * never launch kernels of their own, so every probe runs unchanged on a GPU and on the
 * simulator. The C++ wrapper in memtopo/probe.hpp makes these calls pleasant.
 *
 * Conventions shared by both backends:
 *  - A chase array holds 32-bit element indices: element i holds the index of the element
 *    loaded after it. Footprint = elems * 4 bytes. Every distinct mt_chase_array (by
 *    address) in one call is placed in its own device buffer, aligned to 2 MiB; jobs of one
 *    call that point at the same mt_chase_array share that buffer (and so the L2).
 *  - Latencies are SM clock cycles (clock64 on CUDA), raw: they include the timing
 *    overhead, which timing_overhead() reports so probes can correct for it.
 *  - Caches start each call in the state the hardware leaves them (the simulator starts
 *    each call with every cache and TLB empty). Probes that need warm caches ask for a
 *    warm-up (warmup_steps).
 *  - Functions return 0 on success; on error they return non-zero and write a message
 *    (the CUDA error string, or what was wrong with the request) into `err`.
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
                            lets a large sparse footprint (TLB tests) cost no host memory */
} mt_array_kind;

typedef struct mt_chase_array {
  uint32_t struct_size;
  mt_array_kind kind;
  const uint32_t* next; /* EXPLICIT: elems entries, each < elems */
  uint64_t elems;       /* length of the array in 4-byte elements */
  uint64_t stride_elems; /* STRIDE only */
} mt_chase_array;

/* One single-thread pointer chase (one block of one thread). Jobs of one call run at the
 * same time, each on its own SM. */
typedef struct mt_chase_job {
  uint32_t struct_size;
  mt_space space;
  const mt_chase_array* array;
  uint32_t start;         /* index of the first element loaded */
  uint64_t warmup_steps;  /* loads made before timing starts (0: start cold) */
  uint64_t steps;         /* loads timed */
  int32_t sm;             /* SM to run on, or -1 for any free one */
  int32_t shared_carveout_percent; /* -1: backend default; 0: largest L1 the device allows */
  /* outputs */
  uint32_t* out_index;    /* fine_chase: [steps] element index of each timed load, or NULL */
  uint32_t* out_latency;  /* fine_chase: [steps] cycles of each timed load */
  double out_average_cycles; /* average_chase: cycles per load over all timed loads */
  int32_t out_sm;         /* SM the job ran on (read from %smid) */
} mt_chase_job;

/* One participant of a sequence chase: thread `lane` of logical block `block`. Actors with
 * the same block run on the same SM (e.g. two lanes sharing an L1); `sm` pins the block
 * (-1: any; blocks of one sequence always land on distinct SMs). */
typedef struct mt_actor {
  uint32_t block;
  uint32_t lane;
  int32_t sm;
} mt_actor;

/* One step of a sequence: `actor` chases `array` for `steps` loads from `start`. Phases run
 * strictly one after another (the others wait), so "a fills, b fills, a re-measures" is
 * expressed as three phases. Timed phases write out_index/out_latency when not NULL. */
typedef struct mt_phase {
  uint32_t struct_size;
  uint32_t actor;
  const mt_chase_array* array;
  uint32_t start;
  uint64_t steps;
  uint32_t* out_index;   /* [steps] or NULL */
  uint32_t* out_latency; /* [steps] or NULL (then the phase only loads) */
} mt_phase;

typedef struct mt_sequence_job {
  uint32_t struct_size;
  mt_space space;
  const mt_actor* actors;
  size_t actor_count;
  mt_phase* phases;
  size_t phase_count;
  int32_t shared_carveout_percent;
  int32_t* out_actor_sm; /* [actor_count] SM each actor ran on, or NULL */
} mt_sequence_job;

/* Counting chase (ABI 1.1): a fine-grained chase that classifies each timed load inside the
 * kernel instead of recording it. A load is slow when its raw cycles (as fine_chase would
 * report them) exceed `slow_cycles`. Nothing is written to memory while timing, so whole
 * passes over arrays of any size cost what the loads cost (fine_chase repeats its warm-up for
 * every 512 recorded loads). The steps of the first slow loads are kept, so a caller can
 * tell a miss that recurs at the same element in every pass from a stray slow load. */
typedef struct mt_count_job {
  uint32_t struct_size;
  mt_chase_job chase;      /* space, array, start, warmup_steps, steps, sm, carveout; out_sm.
                              chase.out_index and chase.out_latency are not used. */
  uint32_t slow_cycles;    /* threshold, raw cycles (timing overhead included) */
  uint32_t slow_max_cycles; /* loads above this are interruptions, counted in out_outliers
                              and not as slow (0: no ceiling) */
  uint32_t slow_capacity;  /* entries of out_slow_step */
  uint32_t* out_slow_step; /* [slow_capacity] or NULL: timed-step numbers (0 = first timed
                              load) of the first slow loads, in order */
  /* outputs */
  uint64_t out_slow;       /* slow loads among the chase.steps timed loads */
  uint64_t out_slow_recorded; /* entries written to out_slow_step: min(out_slow, slow_capacity,
                              the backend's limit, at least 1024) */
  uint64_t out_cycles;     /* raw cycles of all timed loads together */
  uint64_t out_outliers;   /* loads above slow_max_cycles */
} mt_count_job;

/* Random-load count (ABI 1.2): a counting chase whose loads (warm-up and timed) do not follow
 * the array. Each goes to an element drawn uniformly at random, independently of every other
 * load, from the multiples of stride_elems below count.chase.array->elems (a generator
 * seeded by `seed`; chase.start and the array's contents are not used, but the array still
 * sets the buffer, so jobs sharing an array share its memory). Each load still waits for the
 * one before it. Since where a load goes does not depend on what the cache holds, the share
 * of fast loads is the share of the candidates the cache holds, under any replacement
 * policy: a measure of occupancy, where a cyclic chase measures the first overflow. Global
 * paths only (MT_SPACE_GLOBAL_CA, _CG, READONLY). */
typedef struct mt_random_count_job {
  uint32_t struct_size;
  mt_count_job count;    /* as for count_chase; out_slow_step may be NULL */
  uint64_t stride_elems; /* candidates are 0, stride, 2 * stride, ... (fewer than 2^32 of them) */
  uint64_t seed;
} mt_random_count_job;

/* Paced random-load count (ABI 1.4): a random-load count whose loads come from `streams`
 * independent generators on the job's SM (0 or 1: one; at most mt_backend.paced_streams_max),
 * each waiting for its own last load only and `gap_cycles` more after it. The random job's
 * warmup_steps and steps are totals over all streams, and its outputs are summed (its
 * out_slow_step holds stream 0's slow loads, numbered in stream 0's own steps). Streams and
 * gap set the rate at which the job brings lines in: a cache whose lines other clients
 * displace over time holds fewer of the job's lines the slower it loads. */
typedef struct mt_paced_count_job {
  uint32_t struct_size;
  mt_random_count_job random;
  uint32_t streams;
  uint32_t gap_cycles;
  uint64_t out_span_cycles; /* cycles from the first timed load's start to the last one's end */
} mt_paced_count_job;

/* Pumped random-load count (ABI 1.5): the random job's loads come from one timed stream,
 * and pump_warps x pump_lanes untimed generators on the same SM (at most
 * mt_backend.pump_warps_max warps, 1 to 32 lanes each) load from the same candidates. The
 * job runs in windows: the pump loads for pump_cycles, stops and lets its loads finish, then
 * the timed stream makes probe_loads loads (its warm-up loads in the first windows) while
 * the pump waits. The pump sets the rate at which the job brings lines in, far above one
 * stream's; the timed loads never queue behind its loads, so a hit stays as fast as it is
 * at one stream. pump_warps 0: no pump, a plain random-load count. */
typedef struct mt_pumped_count_job {
  uint32_t struct_size;
  mt_random_count_job random;
  uint32_t pump_warps;
  uint32_t pump_lanes;
  uint32_t pump_cycles;     /* per window */
  uint32_t probe_loads;     /* timed-stream loads per window (0 reads as 1) */
  uint64_t out_span_cycles; /* cycles from the first timed load's start to the last one's end */
  uint64_t out_pump_loads;  /* pump loads in the windows between them */
} mt_pumped_count_job;

/* The function table of a backend. `self` is the first argument of every function. */
typedef struct mt_backend {
  uint32_t struct_size;
  void* self;
  const char* name; /* "cuda" or "sim" */
  /* Fine-grained chase: the index and latency of every timed load, for each job. */
  int (*fine_chase)(void* self, mt_chase_job* jobs, size_t job_count, char* err, size_t err_size);
  /* Whole-chase average (the plain P-chase): cycles per load, no per-load overhead. */
  int (*average_chase)(void* self, mt_chase_job* jobs, size_t job_count, char* err, size_t err_size);
  /* Several actors chasing in a fixed order (sharing and per-SM partition tests). */
  int (*sequence_chase)(void* self, mt_sequence_job* job, char* err, size_t err_size);
  /* Cycles the fine-grained timing adds to each load (clock reads and dependent store). */
  int (*timing_overhead)(void* self, double* out_cycles, char* err, size_t err_size);
  /* ABI 1.1. Counting chase (mt_count_job); NULL or beyond struct_size in older backends. */
  int (*count_chase)(void* self, mt_count_job* jobs, size_t job_count, char* err, size_t err_size);
  /* ABI 1.2. Random-load count (mt_random_count_job); NULL or beyond struct_size in older backends. */
  int (*random_count)(void* self, mt_random_count_job* jobs, size_t job_count, char* err, size_t err_size);
  /* ABI 1.4. Paced random-load count (mt_paced_count_job), and the most streams one of its
   * jobs may have; NULL, 0 or beyond struct_size in older backends. */
  int (*paced_count)(void* self, mt_paced_count_job* jobs, size_t job_count, char* err, size_t err_size);
  uint32_t paced_streams_max;
  /* ABI 1.5. Pumped random-load count (mt_pumped_count_job), and the most pump warps one of
   * its jobs may have; NULL, 0 or beyond struct_size in older backends. */
  int (*pumped_count)(void* self, mt_pumped_count_job* jobs, size_t job_count, char* err, size_t err_size);
  uint32_t pump_warps_max;
} mt_backend;

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMTOPO_MEASURE_H */
