/*
 * memtopo probe ABI: the C contract between the host and probe plugins.
 *
 * Only plain C types cross this boundary. Every struct that may grow starts with
 * `struct_size`, so that either side can tell which fields the other one knows.
 *
 * Versioning (see docs/abi.md):
 *   - MAJOR changes when a field is removed, retyped or reordered, or a function's
 *     meaning changes. The host refuses a plugin whose major differs.
 *   - MINOR changes when fields are appended to a struct or functions are appended
 *     to a function table. The host refuses a plugin built for a newer minor than
 *     its own; older minors are accepted.
 */
#ifndef MEMTOPO_ABI_H
#define MEMTOPO_ABI_H

#include <stddef.h>
#include <stdint.h>

#include "memtopo/measure.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MEMTOPO_ABI_MAJOR 3
#define MEMTOPO_ABI_MINOR 9

/* Name of the single exported entry point of a plugin library. */
#define MEMTOPO_ENTRY_POINT_NAME "memtopo_plugin_entry"

#if defined(_WIN32)
#define MEMTOPO_EXPORT __declspec(dllexport)
#else
#define MEMTOPO_EXPORT __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------- values */

typedef enum mt_value_type {
  MT_VALUE_NONE = 0,
  MT_VALUE_INT = 1,          /* int64_t */
  MT_VALUE_FLOAT = 2,        /* double */
  MT_VALUE_STRING = 3,       /* const char*, UTF-8 */
  MT_VALUE_BOOL = 4,         /* int, 0 or 1 */
  MT_VALUE_INT_ARRAY = 5,    /* const int64_t*, count */
  MT_VALUE_FLOAT_ARRAY = 6,  /* const double*, count */
  MT_VALUE_STRING_ARRAY = 7  /* const char* const*, count */
} mt_value_type;

/* A typed value. Pointers are borrowed: valid for the duration of the call that
 * passed them (host to probe: for the whole run of the probe). */
typedef struct mt_value {
  mt_value_type type;
  int64_t i;
  double f;
  int b;
  const char* s;
  const int64_t* int_array;
  const double* float_array;
  const char* const* string_array;
  size_t count; /* element count of whichever array is set */
} mt_value;

/* Whether a measured value is exact, or a bound the measurement could only reach. */
typedef enum mt_bound {
  MT_BOUND_EXACT = 0,
  MT_BOUND_AT_LEAST = 1,
  MT_BOUND_AT_MOST = 2
} mt_bound;

typedef struct mt_result_info {
  uint32_t struct_size;
  double confidence; /* 0..1; 1 for values read from an API */
  mt_bound bound;
  const char* note;  /* optional: how it was measured ("corrected for timing overhead"), or NULL */
  /* Since 3.3: how a second method checked the value (docs/measurement.md, "Counters"). NULL:
   * not checked. "counters": the hardware counters (the simulated GPU: its model's counts) of
   * the level the value names agree within 5 % with what the probe believes it moved or hit;
   * counted_bytes then holds the bytes they counted there. "unverified": the probe checks this
   * value but could not here; verify_note says why (counters refused, no counter for the path). */
  const char* verified;
  double counted_bytes;
  const char* verify_note; /* what the counters counted against what was believed, or why not */
} mt_result_info;

/* ---------------------------------------------------------------- status */

typedef enum mt_status {
  MT_STATUS_OK = 0,
  MT_STATUS_FAILED = 1,  /* an error; the message says what */
  MT_STATUS_SKIPPED = 2, /* deliberately not measured (e.g. not supported on this device) */
  /* Measured, but the data cannot settle the value (a hashed set index hides the sets, the
   * path cannot hold the footprint needed): the message says why. Results the probe stored
   * before (e.g. the fetch unit when the line is not determinable) are kept. */
  MT_STATUS_NOT_DETERMINABLE = 3
} mt_status;

typedef enum mt_log_level {
  MT_LOG_TRACE = 0,
  MT_LOG_DEBUG = 1,
  MT_LOG_INFO = 2,
  MT_LOG_WARN = 3,
  MT_LOG_ERROR = 4
} mt_log_level;

/* ---------------------------------------------------------------- host services */

/* Services the host offers to a running probe. `host` is the opaque first argument. */
typedef struct mt_host_api {
  uint32_t struct_size;
  /* Value of a result key the probe required or may use. Returns 1 and fills *out when
   * present, 0 when absent. */
  int (*get_input)(void* host, const char* key, mt_value* out);
  /* Value of one of the probe's declared options (the default when not configured).
   * Returns 1 when the option exists, 0 otherwise. */
  int (*get_option)(void* host, const char* name, mt_value* out);
  void (*log)(void* host, mt_log_level level, const char* message);
  /* fraction in [0,1]; stage is a short text such as "L1 size: bisection". */
  void (*progress)(void* host, double fraction, const char* stage);
  /* Store one result. The key must be one the probe declared in `provided_keys`.
   * Returns 0 on success, non-zero when refused (the host logs why). */
  int (*put_result)(void* host, const char* key, const mt_value* value, const mt_result_info* info);
  /* Store the data series behind a result: a table of `rows` x `columns` doubles in
   * row-major order, written as CSV under --raw-dir. Returns 0 on success. */
  int (*put_raw)(void* host, const char* series, const char* const* column_names, size_t columns,
                 const double* data, size_t rows);
  /* Non-zero once the user asked to stop (Ctrl-C); a probe should return soon. */
  int (*cancelled)(void* host);
  /* Since 3.6. Say why a declared key has no value in this run (the level is absent, the
   * data cannot settle it): the file records the reason beside the probe's status. A key is
   * either stored or absent, once. Returns 0 on success, non-zero when refused (the host logs
   * why). A host older than 3.6 has no such member (check struct_size). */
  int (*put_absent)(void* host, const char* key, const char* reason);
} mt_host_api;

/* ---------------------------------------------------------------- device */

typedef struct mt_device_info {
  uint32_t struct_size;
  char name[256];
  char backend[16]; /* "cuda" or "sim" */
  int32_t ordinal;
  int32_t cc_major;
  int32_t cc_minor;
  int32_t sm_count;
  int32_t warp_size;
  int64_t sm_clock_khz;
  int64_t memory_clock_khz;
  int32_t memory_bus_width_bits;
  int64_t global_memory_bytes;
  int64_t l2_bytes;
  int64_t shared_per_sm_bytes;
  int64_t shared_per_block_bytes;
  int64_t shared_per_block_optin_bytes;
  int64_t constant_memory_bytes;
  int64_t registers_per_sm;
  int64_t registers_per_block;
  int32_t max_threads_per_sm;
  int32_t max_threads_per_block;
  int32_t max_blocks_per_sm;
  int32_t driver_version;  /* e.g. 13000; 0 for sim */
  int32_t runtime_version; /* e.g. 13000; 0 for sim */
  char uuid[48]; /* "GPU-" and 36 characters */
  char pci_bus_id[32];
  /* Bytes one MT_SPACE_CONSTANT chase array may span (measure.h): the constant bank and,
   * where the backend can, the kernel-parameter bank behind it; 0 means constant_memory_bytes. */
  int64_t constant_reach_bytes;
} mt_device_info;

/* ---------------------------------------------------------------- context */

/* What a probe receives when it runs. */
typedef struct mt_context {
  uint32_t struct_size;
  void* host;                   /* pass back to every api function */
  const mt_host_api* api;
  const mt_device_info* device;
  const mt_backend* backend;    /* the measurement backend: run_jobs and the rest of measure.h */
} mt_context;

/* ---------------------------------------------------------------- descriptors */

typedef struct mt_option_desc {
  uint32_t struct_size;
  const char* name;
  mt_value_type type;          /* INT, FLOAT, STRING, BOOL or an array type */
  const char* default_value;   /* text form: "4096", "0.5", "lru", "true", "1,2,4" */
  const char* help;
  /* The smallest and largest value the probe accepts, in text form ("1", "0.25"), or NULL for
   * no limit on that side; for an array type, each element's. Numeric types only. The host
   * refuses a config value outside them before anything runs (memtopo list -v shows them). */
  const char* min_value;
  const char* max_value;
} mt_option_desc;

/* Returns MT_STATUS_*. On FAILED, SKIPPED or NOT_DETERMINABLE the probe writes a message (the reason)
 * into `message` (host-owned, `message_size` bytes, always NUL-terminated). */
typedef int (*mt_probe_run_fn)(const mt_context* ctx, void* user, char* message, size_t message_size);

/* Backends a probe can run on (mt_probe_desc::backends). */
#define MT_BACKEND_CUDA 1u
#define MT_BACKEND_SIM 2u

/* What one provided key holds: lets a drop-in plugin's tables validate without editing the
 * host's schemas (the host merges these into its checks), compare (memtopo diff, fleet) and
 * replay on the simulated GPU, with no host or engine file naming the plugin. */
typedef struct mt_key_desc {
  uint32_t struct_size;
  const char* key;      /* one of the probe's provided_keys */
  mt_value_type type;   /* the value's type; arrays: the array type; MT_VALUE_NONE: only
                           replays_as is declared (type, unit and meaning are not) */
  const char* unit;     /* "bytes", "cycles", "khz", ...; "" when the value has none */
  const char* meaning;  /* one sentence */
  uint32_t flags;       /* MT_KEY_* bits: what kind of value it is, for comparisons. 0: a
                           measurement, compared within a tolerance. */
  /* What the key sets when a topology file is read as a simulated device (docs/simulator.md,
   * "Replaying a measured topology"): NULL, the device description's key of the same path
   * (l1d.size_bytes); MT_REPLAY_NONE (""), nothing: the simulator derives the value from
   * others, or does not model it; or the path of the description key it sets instead
   * ("sim.memory.sm_l2_requests_in_flight"). A key the description names explicitly wins. */
  const char* replays_as;
} mt_key_desc;

#define MT_REPLAY_NONE ""

/* The key names this device, not a property of its model (a UUID, a PCI bus id): two GPUs
 * always differ in it, and that is no difference. */
#define MT_KEY_IDENTITY 1u
/* The key records a choice the probe made (the configuration a search found best), not a
 * measured value: reported, never a difference. */
#define MT_KEY_SETTING 2u
/* A measurement known to vary between runs of one GPU beyond any tolerance (the probe says
 * why in its docs): a difference is reported, never flagged. */
#define MT_KEY_VARIES 4u
/* An integer that estimates a continuous quantity (loads in flight from Little's law, the
 * footprint of a first miss): compared like a float, within a tolerance and the group's
 * spread, not for equality. */
#define MT_KEY_ESTIMATE 8u
/* One of the few values a reader looks at first (the DRAM bandwidth, the TLB levels): the
 * terminal summary and `memtopo compare` always show it, in the unit its name says (3.2). */
#define MT_KEY_HEADLINE 16u
/* The key describes how this GPU was built, which GPUs of one model may differ in (floor
 * sweeping: the SMs of each GPC, which SMs share a near L2 partition or a constant L1.5, and
 * what follows from them): shown as the GPU's configuration, never a difference (3.4). */
#define MT_KEY_CONFIGURATION 32u
/* The probe's noise model for this measurement (3.5): its runs on GPUs of one model stay within
 * the fleet's default tolerance (3 %) of each other, so a deviation beyond it is a finding even
 * on a model no measured spread table covers. Without it (and without a table, a tolerance
 * profile or an exact comparison) `memtopo fleet` reports a deviation as unrated, never a
 * fault. Integers compared for equality (sizes, counts) need no rating. */
#define MT_KEY_RATED 64u
/* The key counts or names what a probe found (levels, modes): a GPU that finds another
 * structure is reported with its values, never flagged for this key alone (3.5). */
#define MT_KEY_STRUCTURE 128u
/* The probe writes this key in every run that ends ok (or marks the probe not determinable):
 * a GPU whose file lacks it while most of its group has it is flagged. Without it a key
 * present on some GPUs only is reported (3.5). */
#define MT_KEY_ALWAYS 256u
/* The key says whether a part of the GPU or its attachment works as built (3.8): a text that is
 * "ok" where it does, else what is wrong and why ("PCIe Gen5 x8, below its maximum Gen5 x16").
 * A value other than "ok" is a fault of the GPU, not of the measurement: `run` warns, `memtopo
 * fleet` flags the GPU for it even alone. */
#define MT_KEY_HEALTH 512u

/* How the report draws one of the probe's raw series (put_raw), where a line plot of its
 * columns would hide what it shows (docs/report.md, "Plot hints"). Key names may hold
 * {series} (the series' name, '-' as '_') and {panel} (the panel's label). */
typedef enum mt_plot_kind {
  MT_PLOT_LINES = 0,    /* the default: y over x, a line per value of `group` (each "" : chosen) */
  MT_PLOT_HEATMAP = 1,  /* `value` (the best over the other columns) by `y` rows and `x` columns */
  MT_PLOT_BARS = 2,     /* a bar per row: `y` at `x` (x "": rows in order, named by `labels`) */
  MT_PLOT_PANELS = 3    /* a panel per value of `panel`, named by `labels`: y over x, a line per group */
} mt_plot_kind;

typedef struct mt_series_desc {
  uint32_t struct_size;
  const char* series;   /* the put_raw name; "*": every series of the probe */
  mt_plot_kind kind;
  const char* x;        /* column names ("" where the kind takes none) */
  const char* y;
  const char* value;    /* HEATMAP: the cells' column */
  const char* group;    /* LINES, PANELS: a line per value of this column */
  const char* panel;    /* PANELS: a panel per value of this column */
  const char* annotate; /* BARS: a column printed above each bar */
  /* Names of bars or panels: "a,b,c" (value or row 0, 1, 2, ...), or "@element.key" for a
   * string array of the topology; or of the values 0, 1, ... of named columns, for legends and
   * panels of any kind: "column=a,b;other=c,d". */
  const char* labels;
  /* Results drawn on the plot, ';'-separated "where:key" with where one of x (a vertical line
   * at the key's value or values), y (a horizontal line), cell (HEATMAP: the cell whose row and
   * column values are the first two numbers of the key's text), and "x:key@names" labels each
   * of an array's values by the string array `names`. */
  const char* marks;
} mt_series_desc;

/* What an invariant over two result keys says (mt_invariant_desc::kind, 3.3). */
typedef enum mt_invariant_kind {
  MT_INVARIANT_EQUALS_COUNT = 1, /* integer `a` equals the element count of array `b` */
  MT_INVARIANT_SUM_EQUALS = 2,   /* the sum of numeric array `a` equals number `b` */
  MT_INVARIANT_LESS = 3          /* number `a` is less than number `b` */
} mt_invariant_kind;

/* A relation between two result keys that holds on every GPU (3.3): `l2.partitions` equals the
 * element count of `l2.partition_sm_counts`. The probe that provides one of the keys declares
 * it; the host checks it, knowing no key, at the end of every run (a warning naming both keys)
 * and in `memtopo validate` (an error). Where either key is absent or a bound, it is not
 * checked. */
typedef struct mt_invariant_desc {
  uint32_t struct_size;
  mt_invariant_kind kind;
  const char* a;   /* result keys ("element.key"); the declaring probe provides at least one */
  const char* b;
  const char* why; /* one sentence: why the two must agree */
} mt_invariant_desc;

/* 3.9: a block a probe declares for the host beyond the frozen fields, named and versioned
 * (docs/abi.md, "Extensions"). The host reads the names and versions it knows and ignores the
 * others; a later need is a new name or a new version, never another field. */
typedef struct mt_extension_desc {
  uint32_t struct_size;
  const char* name;     /* what `data` points to, e.g. MT_EXTENSION_KEY_ROLES */
  uint32_t version;     /* of that layout */
  const void* data;     /* `count` elements of the named layout */
  size_t count;
} mt_extension_desc;

/* "memtopo.key_roles", version 1: `data` points to mt_key_role elements. A role says what a
 * key is in the host's vocabulary (docs/roles.md): "cache.size_bytes@l1_cache",
 * "memory.read_bytes_per_second@main". The host's tools (exports, the drawing, the summary)
 * ask for roles, never for key names. */
#define MT_EXTENSION_KEY_ROLES "memtopo.key_roles"
typedef struct mt_key_role {
  uint32_t struct_size;
  const char* key;   /* one of the probe's provided keys */
  const char* role;  /* <class>.<quantity>[@<subject>], lowercase letters, digits and '_' */
} mt_key_role;

typedef struct mt_probe_desc {
  uint32_t struct_size;
  const char* name;              /* "<plugin>/<probe>", e.g. "data-cache/l1d-line" */
  const char* summary;           /* one line */
  const char* const* provided_keys; /* NULL-terminated result keys, e.g. "l1d.line_bytes" */
  const char* const* required_keys; /* NULL-terminated; the probe is skipped without them */
  const char* const* used_keys;     /* NULL-terminated; read when some probe provides them */
  const mt_option_desc* options;
  size_t option_count;
  mt_probe_run_fn run;
  void* user;
  /* What the probe needs of the device; the host skips it otherwise, with the reason, before
   * it runs (memtopo list and plan show both). 0 in each: no requirement. */
  uint32_t backends;    /* MT_BACKEND_* bits it can run on */
  int32_t min_cc_major; /* lowest compute capability (CUDA) */
  int32_t min_cc_minor;
  const mt_key_desc* keys; /* what its provided keys hold, or NULL */
  size_t key_count;
  /* The wall time the probe expects to need at most, in seconds (0: none declared). The host
   * kills a probe that runs past its time limit (this budget unless the config overrides it;
   * 600 s without either) and records it as failed. */
  double budget_s;
  uint32_t flags; /* MT_PROBE_* bits */
  /* Why the probe runs only on the backends it names (the instructions a simulated GPU does
   * not model); the host gives it as the reason it skips the probe. NULL with backends 0. */
  const char* backends_reason;
  const mt_series_desc* series; /* how the report draws its raw series, or NULL */
  size_t series_count;
  /* 3.3: relations its keys keep with others (mt_invariant_desc), or NULL. */
  const mt_invariant_desc* invariants;
  size_t invariant_count;
  /* 3.9: named, versioned blocks for the host (mt_extension_desc), or NULL. */
  const mt_extension_desc* extensions;
  size_t extension_count;
} mt_probe_desc;

/* The probe runs in a worker process of its own: the host ends the worker before it and after
 * it (memtopo run with isolation; --no-isolation runs it in memtopo like any other). For
 * measurements that what earlier probes left in the process would change (docs/host.md,
 * "Isolation"). */
#define MT_PROBE_OWN_PROCESS 1u
/* 3.7: left out of a default run and of a selection by plugin (measurements that cost more
 * than a default run should spend); it runs when named by its own name or by one of its keys
 * (--only, [run] probes) or when a selected probe requires one of its keys. plan lists it as
 * left out. */
#define MT_PROBE_OPT_IN 2u

typedef struct mt_plugin_desc {
  uint32_t struct_size;
  uint32_t abi_major;            /* the ABI the plugin was built against */
  uint32_t abi_minor;
  const char* name;              /* unique; equals the library's file stem */
  const char* version;           /* the plugin's own version, e.g. "1.0.0" */
  const mt_probe_desc* probes;
  size_t probe_count;
} mt_plugin_desc;

/* The entry point every plugin exports under MEMTOPO_ENTRY_POINT_NAME. The host passes
 * its own ABI version; the plugin returns its descriptor (which stays valid until the
 * library is unloaded), or NULL if it cannot work with that host. */
typedef const mt_plugin_desc* (*mt_plugin_entry_fn)(uint32_t host_abi_major, uint32_t host_abi_minor);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* MEMTOPO_ABI_H */
