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
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace memtopo::cuda {
namespace {

// The counts of mt_counts, in its order. Sector metrics count 32-byte sectors.
constexpr const char* kMetrics[] = {
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum",
    "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
    "lts__t_sectors_srcunit_tex_op_write.sum",
    "l1tex__m_xbar2l1tex_read_bytes.sum",
    "dram__bytes_read.sum",
    "dram__bytes_write.sum",
};
constexpr size_t kMetricCount = sizeof kMetrics / sizeof kMetrics[0];
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

struct CuptiCounts::Session {
  void* library = nullptr;
  Api api;
  CUcontext context = nullptr;
  CUpti_Profiler_Host_Object* host = nullptr;
  std::vector<uint8_t> config, counter_data, availability;
  std::string chip;
  size_t passes = 1;
  // Enabled once for the process: enabling costs more than a count (docs/results/h100.md); a
  // launch outside a counted range is not profiled.
  CUpti_RangeProfiler_Object* object = nullptr;

  ~Session() {
    if (object && api.cuptiRangeProfilerDisable) {
      CUpti_RangeProfiler_Disable_Params d{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
      d.pRangeProfilerObject = object;
      api.cuptiRangeProfilerDisable(&d);
    }
    if (host && api.cuptiProfilerHostDeinitialize) {
      CUpti_Profiler_Host_Deinitialize_Params p{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      p.pHostObject = host;
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
    CUpti_Profiler_Host_Initialize_Params h{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    h.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    h.pChipName = chip.c_str();
    h.pCounterAvailabilityImage = availability.data();
    check(api.cuptiProfilerHostInitialize(&h), "cuptiProfilerHostInitialize");
    host = h.pHostObject;
    std::vector<const char*> names(kMetrics, kMetrics + kMetricCount);
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = host;
    add.ppMetricNames = names.data();
    add.numMetrics = names.size();
    check(api.cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");
    CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
    size.pHostObject = host;
    check(api.cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    config.resize(size.configImageSize);
    CUpti_Profiler_Host_GetConfigImage_Params image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
    image.pHostObject = host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    check(api.cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");
    CUpti_Profiler_Host_GetNumOfPasses_Params np{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
    np.configImageSize = config.size();
    np.pConfigImage = config.data();
    check(api.cuptiProfilerHostGetNumOfPasses(&np), "cuptiProfilerHostGetNumOfPasses");
    passes = np.numOfPasses;
    enable();
  }

  void enable() {
    CUpti_RangeProfiler_Enable_Params e{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
    e.ctx = context;
    check(api.cuptiRangeProfilerEnable(&e), "cuptiRangeProfilerEnable");
    object = e.pRangeProfilerObject;
    std::vector<const char*> names(kMetrics, kMetrics + kMetricCount);
    CUpti_RangeProfiler_GetCounterDataSize_Params size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
    size.pRangeProfilerObject = object;
    size.pMetricNames = names.data();
    size.numMetrics = names.size();
    size.maxNumOfRanges = 1;
    size.maxNumRangeTreeNodes = 1;
    check(api.cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
    counter_data.assign(size.counterDataSize, 0);
  }

  // MEMTOPO_TRACE_COUNTS: the passes each metric needs alone (which ones cost a second pass).
  void trace_passes_per_metric() const {
    for (const char* m : kMetrics) {
      CUpti_Profiler_Host_Initialize_Params h{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
      h.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
      h.pChipName = chip.c_str();
      h.pCounterAvailabilityImage = availability.data();
      if (api.cuptiProfilerHostInitialize(&h) != CUPTI_SUCCESS) return;
      const char* one[] = {m};
      CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
      add.pHostObject = h.pHostObject;
      add.ppMetricNames = one;
      add.numMetrics = 1;
      size_t n = 0;
      CUpti_Profiler_Host_GetConfigImageSize_Params size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
      size.pHostObject = h.pHostObject;
      if (api.cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_SUCCESS &&
          api.cuptiProfilerHostGetConfigImageSize(&size) == CUPTI_SUCCESS) {
        std::vector<uint8_t> image(size.configImageSize);
        CUpti_Profiler_Host_GetConfigImage_Params get{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
        get.pHostObject = h.pHostObject;
        get.configImageSize = image.size();
        get.pConfigImage = image.data();
        CUpti_Profiler_Host_GetNumOfPasses_Params np{CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
        np.configImageSize = image.size();
        np.pConfigImage = image.data();
        if (api.cuptiProfilerHostGetConfigImage(&get) == CUPTI_SUCCESS &&
            api.cuptiProfilerHostGetNumOfPasses(&np) == CUPTI_SUCCESS)
          n = np.numOfPasses;
      }
      std::fprintf(stderr, "trace count: %s alone needs %zu pass(es)\n", m, n);
      CUpti_Profiler_Host_Deinitialize_Params d{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
      d.pHostObject = h.pHostObject;
      api.cuptiProfilerHostDeinitialize(&d);
    }
  }

  // A fresh counter data image and the configuration, for one count.
  void prepare() {
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{
        CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
    init.pRangeProfilerObject = object;
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    check(api.cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");
    CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
    set.pRangeProfilerObject = object;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
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

  void evaluate(double* values) {
    CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
    decode.pRangeProfilerObject = object;
    check(api.cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
    std::vector<const char*> names(kMetrics, kMetrics + kMetricCount);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params e{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    e.pHostObject = host;
    e.pCounterDataImage = counter_data.data();
    e.counterDataImageSize = counter_data.size();
    e.rangeIndex = 0;
    e.ppMetricNames = names.data();
    e.numMetrics = names.size();
    e.pMetricValues = values;
    check(api.cuptiProfilerHostEvaluateToGpuValues(&e), "cuptiProfilerHostEvaluateToGpuValues");
  }
};

CuptiCounts::CuptiCounts(int ordinal) : ordinal_(ordinal) {}
CuptiCounts::~CuptiCounts() = default;

int CuptiCounts::count(int (*work)(void*), void* arg, mt_counts* out, std::string* err) {
  if (!refused_.empty()) {
    *err = refused_;
    return MT_COUNT_REFUSED;
  }
  try {
    static const bool trace = std::getenv("MEMTOPO_TRACE_COUNTS") != nullptr;
    const auto t0 = std::chrono::steady_clock::now();
    auto ms = [](std::chrono::steady_clock::time_point a) {
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a).count();
    };
    if (!session_) {
      auto s = std::make_unique<Session>();
      s->open(ordinal_);
      session_ = std::move(s);
      if (trace) {
        std::fprintf(stderr, "trace count: CUPTI opened in %.1f ms, %zu pass(es) for %zu metrics\n", ms(t0),
                     session_->passes, kMetricCount);
        session_->trace_passes_per_metric();
      }
    }
    Session& s = *session_;
    const auto t1 = std::chrono::steady_clock::now();
    s.prepare();
    const double prepared = ms(t1);
    bool done = false;
    uint32_t passes = 0;
    while (!done && passes < kMaxPasses) {
      ++passes;
      if (const int rc = s.pass(work, arg, &done); rc != 0) return rc;
    }
    if (!done) throw Failure{"CUPTI asked for more than " + std::to_string(kMaxPasses) + " passes", false};
    double v[kMetricCount] = {};
    const auto t2 = std::chrono::steady_clock::now();
    s.evaluate(v);
    if (trace)
      std::fprintf(stderr, "trace count: %.1f ms in all: prepare %.1f, %u pass(es), evaluate %.1f\n", ms(t0), prepared,
                   passes, ms(t2));
    mt_counts c{};
    c.struct_size = sizeof c;
    c.passes = passes;
    c.sector_bytes = 32;
    c.l1_load_sectors = v[0];
    c.l1_load_hit_sectors = v[1];
    c.l2_read_sectors = v[2];
    c.l2_read_hit_sectors = v[3];
    c.l2_write_sectors = v[4];
    c.l2_to_sm_bytes = v[5];
    c.dram_read_bytes = v[6];
    c.dram_write_bytes = v[7];
    const uint32_t size = out->struct_size ? out->struct_size : uint32_t(sizeof c);
    std::memcpy(out, &c, std::min<size_t>(size, sizeof c));
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
