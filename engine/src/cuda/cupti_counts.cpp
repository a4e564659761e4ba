// CUPTI's range profiler behind mt_backend::count: one user range around the work, replayed by
// the caller's work once per pass (user replay), the metrics evaluated for that range.
#include "cupti_counts.hpp"

#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

namespace memtopo::cuda {
namespace cupti_detail {
// Each count of mt_counts: its metric, the MT_COUNT_* bit that asks for it, its field.
struct Metric {
  const char* name;
  uint32_t bit;
  double mt_counts::*field;
};
}  // namespace cupti_detail
namespace {
using cupti_detail::Metric;

constexpr Metric kMetrics[] = {
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", MT_COUNT_L1, &mt_counts::l1_load_sectors},
    {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum", MT_COUNT_L1, &mt_counts::l1_load_hit_sectors},
    {"lts__t_sectors_srcunit_tex_op_read.sum", MT_COUNT_L2_READ, &mt_counts::l2_read_sectors},
    {"lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum", MT_COUNT_L2_HIT, &mt_counts::l2_read_hit_sectors},
    {"lts__t_sectors_srcunit_tex_op_write.sum", MT_COUNT_L2_WRITE, &mt_counts::l2_write_sectors},
    {"l1tex__m_xbar2l1tex_read_bytes.sum", MT_COUNT_TO_SM, &mt_counts::l2_to_sm_bytes},
    {"dram__bytes_read.sum", MT_COUNT_DRAM, &mt_counts::dram_read_bytes},
    {"dram__bytes_write.sum", MT_COUNT_DRAM, &mt_counts::dram_write_bytes},
};
constexpr uint32_t kAllCounts = MT_COUNT_L1 | MT_COUNT_L2_READ | MT_COUNT_L2_HIT | MT_COUNT_L2_WRITE | MT_COUNT_TO_SM |
                                MT_COUNT_DRAM;
constexpr unsigned kMaxPasses = 16;
// The CUPTI functions used, looked up in libcupti at run time.
#define MEMTOPO_CUPTI_FUNCTIONS(X)                                                                             \
  X(cuptiGetResultString) X(cuptiProfilerInitialize) X(cuptiDeviceGetChipName)                                \
  X(cuptiProfilerGetCounterAvailability) X(cuptiProfilerHostInitialize) X(cuptiProfilerHostDeinitialize)      \
  X(cuptiProfilerHostConfigAddMetrics) X(cuptiProfilerHostGetConfigImageSize) X(cuptiProfilerHostGetConfigImage) \
  X(cuptiProfilerHostGetNumOfPasses) X(cuptiProfilerHostEvaluateToGpuValues) X(cuptiRangeProfilerEnable)      \
  X(cuptiRangeProfilerDisable) X(cuptiRangeProfilerSetConfig) X(cuptiRangeProfilerStart)                      \
  X(cuptiRangeProfilerStop) X(cuptiRangeProfilerPushRange) X(cuptiRangeProfilerPopRange)                      \
  X(cuptiRangeProfilerDecodeData) X(cuptiRangeProfilerGetCounterDataSize)                                     \
  X(cuptiRangeProfilerCounterDataImageInitialize)


// libcupti from the loader's path, else the toolkit's usual place.
void* open_cupti(std::string* why) {
  std::vector<std::string> names = {"libcupti.so.13", "libcupti.so", "/usr/local/cuda/lib64/libcupti.so.13",
                                    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"};
  if (const char* home = std::getenv("CUDA_HOME")) names.push_back(std::string(home) + "/lib64/libcupti.so.13");
  for (const std::string& n : names)
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
  *why = "CUPTI (libcupti.so.13) not found: install the CUDA toolkit's CUPTI or add its folder to LD_LIBRARY_PATH";
  return nullptr;
}

}  // namespace

namespace cupti_detail {
#define MEMTOPO_CUPTI_MEMBER(f) decltype(&::f) f = nullptr;
struct Api {
  MEMTOPO_CUPTI_FUNCTIONS(MEMTOPO_CUPTI_MEMBER)
};
#undef MEMTOPO_CUPTI_MEMBER
struct Failure {
  std::string what;
  bool refused;  // a machine that cannot count, not a fault
};
}  // namespace cupti_detail
using cupti_detail::Api;
using cupti_detail::Failure;

// One set of metrics: the host object that knows them, its configuration image and the counter
// data image that holds one range of them.
struct Config {
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<const Metric*> metrics;
  std::vector<const char*> names;
  std::vector<uint8_t> image, counter_data;
  size_t passes = 1;
};

struct CuptiCounts::Session {
  void* library = nullptr;
  Api api;
  CUcontext context = nullptr;
  std::string chip;
  std::vector<uint8_t> availability;
  // Enabled for one configuration at a time: an enabled profiler keeps counting the metrics of
  // the first configuration it was set to (on an H100, metrics of a later one came back NaN), so
  // it is enabled anew when the configuration changes. A launch outside a counted range is not
  // profiled.
  CUpti_RangeProfiler_Object* object = nullptr;
  uint32_t enabled_bits = 0;
  std::map<uint32_t, Config> configs;  // by MT_COUNT_* bits

  ~Session() {
    if (object && api.cuptiRangeProfilerDisable) {
      CUpti_RangeProfiler_Disable_Params d{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      d.pRangeProfilerObject = object;
      api.cuptiRangeProfilerDisable(&d);
    }
    for (auto& [bits, c] : configs)
      if (c.host && api.cuptiProfilerHostDeinitialize) {
        CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
        p.pHostObject = c.host;
        api.cuptiProfilerHostDeinitialize(&p);
      }
    // The library stays loaded: CUPTI keeps callbacks in the driver for the process's life.
  }

  void check(CUptiResult r, const char* call) const {
    if (r == CUPTI_SUCCESS) return;
    const char* text = nullptr;
    if (api.cuptiGetResultString) api.cuptiGetResultString(r, &text);
    const bool refused = r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES || r == CUPTI_ERROR_NOT_SUPPORTED ||
                         r == CUPTI_ERROR_NOT_INITIALIZED || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED ||
                         r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED || r == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED;
    std::string what = std::string(call) + ": " + (text ? text : "CUPTI error " + std::to_string(int(r)));
    if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
      what += " (profiling is restricted to administrators: NVreg_RestrictProfilingToAdminUsers=0 lifts it)";
    throw Failure{what, refused};
  }

  void open(int ordinal) {
    std::string why;
    library = open_cupti(&why);
    if (!library) throw Failure{why, true};
#define MEMTOPO_CUPTI_LOOKUP(f)                                                               \
  api.f = reinterpret_cast<decltype(&::f)>(dlsym(library, #f));                                \
  if (!api.f) throw Failure{std::string("libcupti has no ") + #f + " (a CUPTI older than CUDA 12.6)", true};
    MEMTOPO_CUPTI_FUNCTIONS(MEMTOPO_CUPTI_LOOKUP)
#undef MEMTOPO_CUPTI_LOOKUP
    cudaFree(nullptr);  // the runtime's context exists
    void* get_current = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &get_current, 4000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess ||
        reinterpret_cast<CUresult (*)(CUcontext*)>(get_current)(&context) != CUDA_SUCCESS || !context) {
      cudaGetLastError();
      throw Failure{"no current CUDA context to profile", false};
    }
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    check(api.cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
    CUpti_Device_GetChipName_Params named{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    named.deviceIndex = size_t(ordinal);
    check(api.cuptiDeviceGetChipName(&named), "cuptiDeviceGetChipName");
    chip = named.pChipName ? named.pChipName : "";
    CUpti_Profiler_GetCounterAvailability_Params avail{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    avail.ctx = context;
    check(api.cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    check(api.cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
  }

  void enable() {
    if (object) {
      CUpti_RangeProfiler_Disable_Params d{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      d.pRangeProfilerObject = object;
      check(api.cuptiRangeProfilerDisable(&d), "cuptiRangeProfilerDisable");
      object = nullptr;
    }
    CUpti_RangeProfiler_Enable_Params e{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    e.ctx = context;
    check(api.cuptiRangeProfilerEnable(&e), "cuptiRangeProfilerEnable");
    object = e.pRangeProfilerObject;
  }

  // The configuration of the metrics `bits` asks for, made the first time.
  Config& config(uint32_t bits) {
    auto it = configs.find(bits);
    if (it != configs.end()) return it->second;
    Config c;
    for (const Metric& m : kMetrics)
      if (m.bit & bits) {
        c.metrics.push_back(&m);
        c.names.push_back(m.name);
      }
    CUpti_Profiler_Host_Initialize_Params h{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    h.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    h.pChipName = chip.c_str();
    h.pCounterAvailabilityImage = availability.data();
    check(api.cuptiProfilerHostInitialize(&h), "cuptiProfilerHostInitialize");
    c.host = h.pHostObject;
    Config& kept = configs.emplace(bits, std::move(c)).first->second;  // deinitialized with the session
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = kept.host;
    add.ppMetricNames = kept.names.data();
    add.numMetrics = kept.names.size();
    check(api.cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
    CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = kept.host;
    check(api.cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    kept.image.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = kept.host;
    image.configImageSize = kept.image.size();
    image.pConfigImage = kept.image.data();
    check(api.cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
    CUpti_Profiler_Host_GetNumOfPasses_Params np{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = kept.image.size();
    np.pConfigImage = kept.image.data();
    check(api.cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
    kept.passes = np.numOfPasses;
    CUpti_RangeProfiler_GetCounterDataSize_Params data{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    data.pRangeProfilerObject = object;
    data.pMetricNames = kept.names.data();
    data.numMetrics = kept.names.size();
    data.maxNumOfRanges = 1;
    data.maxNumRangeTreeNodes = 1;
    check(api.cuptiRangeProfilerGetCounterDataSize(&data), "cuptiRangeProfilerGetCounterDataSize");
    kept.counter_data.assign(data.counterDataSize, 0);
    return kept;
  }

  // A fresh counter data image and the configuration, for one count.
  void prepare(Config& c) {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = object;
    init.counterDataSize = c.counter_data.size();
    init.pCounterData = c.counter_data.data();
    check(api.cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
    CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pRangeProfilerObject = object;
    set.configSize = c.image.size();
    set.pConfig = c.image.data();
    set.counterDataImageSize = c.counter_data.size();
    set.pCounterDataImage = c.counter_data.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = 1;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    check(api.cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
  }

  // One pass: the work inside the range. Returns work's return; *done once CUPTI has every pass.
  int pass(int (*work)(void*), void* arg, bool* done) {
    CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
    start.pRangeProfilerObject = object;
    check(api.cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    CUpti_RangeProfiler_PushRange_Params push{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
    push.pRangeProfilerObject = object;
    push.pRangeName = "memtopo";
    check(api.cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
    const int rc = work(arg);
    cudaDeviceSynchronize();
    CUpti_RangeProfiler_PopRange_Params pop{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
    pop.pRangeProfilerObject = object;
    check(api.cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
    CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
    stop.pRangeProfilerObject = object;
    check(api.cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    *done = stop.isAllPassSubmitted != 0;
    return rc;
  }

  // The range's values into the fields of `out` the configuration counts (the others negative).
  void evaluate(Config& c, mt_counts& out) {
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = object;
    check(api.cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
    std::vector<double> values(c.names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params e{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    e.pHostObject = c.host;
    e.pCounterDataImage = c.counter_data.data();
    e.counterDataImageSize = c.counter_data.size();
    e.rangeIndex = 0;
    e.ppMetricNames = c.names.data();
    e.numMetrics = c.names.size();
    e.pMetricValues = values.data();
    check(api.cuptiProfilerHostEvaluateToGpuValues(&e), "cuptiProfilerHostEvaluateToGpuValues");
    for (const Metric& m : kMetrics) out.*m.field = -1;
    for (size_t i = 0; i < c.metrics.size(); ++i)  // a NaN (no number for the range) is no count
      out.*(c.metrics[i]->field) = std::isfinite(values[i]) ? values[i] : -1;
  }
};

CuptiCounts::CuptiCounts(int ordinal) : ordinal_(ordinal) {}
CuptiCounts::~CuptiCounts() = default;

int CuptiCounts::count(int (*work)(void*), void* arg, mt_counts* out, std::string* err) {
  if (!refused_.empty()) {
    *err = refused_;
    return MT_COUNT_REFUSED;
  }
  static const bool trace = std::getenv("MEMTOPO_TRACE_COUNTS") != nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    auto stage = [&, t = t0](const char* what) mutable {
      if (!trace) return;
      const auto now = std::chrono::steady_clock::now();
      std::fprintf(stderr, "trace count: %s %.1f ms\n", what, std::chrono::duration<double, std::milli>(now - t).count());
      t = now;
    };
    if (!session_) {
      auto s = std::make_unique<Session>();
      s->open(ordinal_);
      session_ = std::move(s);
      stage("open");
    }
    Session& s = *session_;
    const uint32_t wanted = out->wanted & kAllCounts;
    // One configuration of every metric (two passes on an H100) for every count: enabling the
    // profiler for another configuration costs more than the second pass saves (about 150 ms
    // against 30 ms on an H100, docs/results/log/h100.md, "Counters"), and an enabled profiler keeps
    // the metrics of the configuration it was enabled with.
    const uint32_t bits = kAllCounts;
    if (bits != s.enabled_bits || !s.object) {
      s.enable();
      s.enabled_bits = bits;
      stage("enable");
    }
    Config& c = s.config(bits);
    stage("config");
    s.prepare(c);
    stage("prepare");
    bool done = false;
    uint32_t passes = 0;
    while (!done && passes < kMaxPasses) {
      ++passes;
      if (const int rc = s.pass(work, arg, &done); rc != 0) return rc;
    }
    stage("passes");
    if (!done) throw Failure{"CUPTI asked for more than " + std::to_string(kMaxPasses) + " passes", false};
    mt_counts r{};
    r.struct_size = sizeof r;
    r.wanted = wanted;
    r.passes = passes;
    r.sector_bytes = 32;
    s.evaluate(c, r);
    stage("evaluate");
    if (trace)
      std::fprintf(stderr, "trace count: values l1 %g/%g l2 %g/%g w %g sm %g dram %g/%g\n", r.l1_load_sectors,
                   r.l1_load_hit_sectors, r.l2_read_sectors, r.l2_read_hit_sectors, r.l2_write_sectors, r.l2_to_sm_bytes,
                   r.dram_read_bytes, r.dram_write_bytes);
    if (trace)
      std::fprintf(stderr, "trace count: counts %#x in %u pass(es), %.1f ms\n", unsigned(wanted), passes,
                   std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    const uint32_t size = out->struct_size ? out->struct_size : uint32_t(sizeof r);
    std::memcpy(out, &r, std::min<size_t>(size, sizeof r));
    out->struct_size = size;
    return 0;
  } catch (const Failure& f) {
    *err = "hardware counters: " + f.what;
    if (f.refused || !session_) {
      refused_ = *err;  // the same answer for every later count of this process
      session_.reset();
      return MT_COUNT_REFUSED;
    }
    return 1;
  }
}

}  // namespace memtopo::cuda
