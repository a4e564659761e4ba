#include "run/output/gpu_reading.hpp"

#include "run/running/nvml_library.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace memtopo::host {

namespace {

// Throttle ("clocks event") reason bits, as nvml.h defines them.
const std::pair<unsigned long long, const char*> kReasons[] = {
    {0x1, "gpu_idle"},          {0x2, "applications_clocks_setting"}, {0x4, "sw_power_cap"},
    {0x8, "hw_slowdown"},       {0x10, "sync_boost"},                 {0x20, "sw_thermal_slowdown"},
    {0x40, "hw_thermal_slowdown"}, {0x80, "hw_power_brake_slowdown"}, {0x100, "display_clock_setting"}};

void add_uint(const Nvml& n, GpuState& s, const std::string& key, const char* fn_name, unsigned arg, double scale) {
  unsigned v = 0;
  auto f = n.fn<nvml_return (*)(nvml_device, unsigned, unsigned*)>(fn_name);
  if (f && f(n.device, arg, &v) == kNvmlSuccess) s.emplace_back(key, Value::of_int(static_cast<int64_t>(v * scale)));
}

void add_power(const Nvml& n, GpuState& s, const std::string& key, const char* fn_name) {
  unsigned mw = 0;
  auto f = n.fn<nvml_return (*)(nvml_device, unsigned*)>(fn_name);
  if (f && f(n.device, &mw) == kNvmlSuccess) s.emplace_back(key, Value::of_float(mw / 1000.0));
}

void add_changing(const Nvml& n, GpuState& s, const std::string& p) {
  unsigned long long reasons = 0;
  auto throttle = n.fn<nvml_return (*)(nvml_device, unsigned long long*)>("nvmlDeviceGetCurrentClocksEventReasons");
  if (!throttle) throttle = n.fn<nvml_return (*)(nvml_device, unsigned long long*)>("nvmlDeviceGetCurrentClocksThrottleReasons");
  if (throttle && throttle(n.device, &reasons) == kNvmlSuccess) {
    Value list;
    list.type = MT_VALUE_STRING_ARRAY;
    for (const auto& [bit, name] : kReasons)
      if (reasons & bit) list.strings.emplace_back(name);
    s.emplace_back(p + "throttle_reasons", list);
  }
  add_uint(n, s, p + "temperature_c", "nvmlDeviceGetTemperature", 0, 1);
  add_uint(n, s, p + "sm_clock_mhz", "nvmlDeviceGetClockInfo", kClockSm, 1);
  add_power(n, s, p + "power_draw_w", "nvmlDeviceGetPowerUsage");
  struct {
    unsigned gpu, memory;
  } util{};
  auto utilization = n.fn<nvml_return (*)(nvml_device, void*)>("nvmlDeviceGetUtilizationRates");
  if (utilization && utilization(n.device, &util) == kNvmlSuccess)
    s.emplace_back(p + "utilization_percent", Value::of_int(util.gpu));
  unsigned count = 0;  // asked with no buffer: the count alone
  auto procs = n.fn<nvml_return (*)(nvml_device, unsigned*, void*)>("nvmlDeviceGetComputeRunningProcesses_v3");
  if (procs) {
    const nvml_return r = procs(n.device, &count, nullptr);
    if (r == kNvmlSuccess || r == kNvmlInsufficientSize) s.emplace_back(p + "compute_processes", Value::of_int(count));
  }
}

// ECC error counts since the driver loaded, retired pages (before Ampere) and remapped rows
// (Ampere on): a memory fault that moves a run's values shows here before it shows in them.
void add_memory_health(const Nvml& n, GpuState& s) {
  constexpr unsigned kCorrected = 0, kUncorrected = 1, kVolatile = 0;
  auto ecc_errors = n.fn<nvml_return (*)(nvml_device, unsigned, unsigned, unsigned long long*)>("nvmlDeviceGetTotalEccErrors");
  for (const auto& [type, key] : {std::pair{kCorrected, "ecc_corrected_errors"}, std::pair{kUncorrected, "ecc_uncorrected_errors"}}) {
    unsigned long long count = 0;
    if (ecc_errors && ecc_errors(n.device, type, kVolatile, &count) == kNvmlSuccess)
      s.emplace_back(key, Value::of_int(static_cast<int64_t>(std::min<unsigned long long>(count, INT64_MAX))));
  }
  auto retired = n.fn<nvml_return (*)(nvml_device, unsigned, unsigned*, unsigned long long*)>("nvmlDeviceGetRetiredPages");
  if (retired) {
    int64_t pages = 0;
    bool known = true;
    for (unsigned cause : {0u, 1u}) {  // multiple single-bit errors, a double-bit error
      unsigned count = 0;              // asked with no buffer: the count alone
      const nvml_return r = retired(n.device, cause, &count, nullptr);
      if (r == kNvmlSuccess || r == kNvmlInsufficientSize)
        pages += count;
      else
        known = false;
    }
    if (known) s.emplace_back("retired_pages", Value::of_int(pages));
  }
  unsigned pending = 0;
  auto retire_pending = n.fn<nvml_return (*)(nvml_device, unsigned*)>("nvmlDeviceGetRetiredPagesPendingStatus");
  if (retire_pending && retire_pending(n.device, &pending) == kNvmlSuccess)
    s.emplace_back("retired_pages_pending", Value::of_bool(pending != 0));
  unsigned corrected = 0, uncorrected = 0, remap_pending = 0, failed = 0;
  auto rows = n.fn<nvml_return (*)(nvml_device, unsigned*, unsigned*, unsigned*, unsigned*)>("nvmlDeviceGetRemappedRows");
  if (rows && rows(n.device, &corrected, &uncorrected, &remap_pending, &failed) == kNvmlSuccess) {
    s.emplace_back("remapped_rows_corrected", Value::of_int(corrected));
    s.emplace_back("remapped_rows_uncorrected", Value::of_int(uncorrected));
    s.emplace_back("row_remap_pending", Value::of_bool(remap_pending != 0));
    s.emplace_back("row_remap_failed", Value::of_bool(failed != 0));
  }
}

void add_fixed(const Nvml& n, GpuState& s) {
  char version[96] = {};
  auto driver = n.fn<nvml_return (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
  if (driver && driver(version, sizeof version) == kNvmlSuccess) s.emplace_back("nvidia_driver_version", Value::of_string(version));
  add_uint(n, s, "max_sm_clock_mhz", "nvmlDeviceGetMaxClockInfo", kClockSm, 1);
  add_uint(n, s, "max_memory_clock_mhz", "nvmlDeviceGetMaxClockInfo", kClockMem, 1);
  add_uint(n, s, "applications_sm_clock_mhz", "nvmlDeviceGetApplicationsClock", kClockSm, 1);
  add_uint(n, s, "default_applications_sm_clock_mhz", "nvmlDeviceGetDefaultApplicationsClock", kClockSm, 1);
  add_power(n, s, "power_limit_w", "nvmlDeviceGetEnforcedPowerLimit");
  add_power(n, s, "default_power_limit_w", "nvmlDeviceGetPowerManagementDefaultLimit");
  unsigned current = 0, pending = 0;
  auto ecc = n.fn<nvml_return (*)(nvml_device, unsigned*, unsigned*)>("nvmlDeviceGetEccMode");
  if (ecc && ecc(n.device, &current, &pending) == kNvmlSuccess) s.emplace_back("ecc_enabled", Value::of_bool(current != 0));
  auto mig = n.fn<nvml_return (*)(nvml_device, unsigned*, unsigned*)>("nvmlDeviceGetMigMode");
  if (mig && mig(n.device, &current, &pending) == kNvmlSuccess) s.emplace_back("mig_enabled", Value::of_bool(current != 0));
  unsigned persistence = 0;
  auto pm = n.fn<nvml_return (*)(nvml_device, unsigned*)>("nvmlDeviceGetPersistenceMode");
  if (pm && pm(n.device, &persistence) == kNvmlSuccess) s.emplace_back("persistence_mode", Value::of_bool(persistence != 0));
  add_memory_health(n, s);
}

}  // namespace

GpuState read_gpu_state(const mt_device_info& info, const std::string& when) {
  GpuState s;
  if (std::strcmp(info.backend, "cuda") != 0) {
    if (when == "start") s.emplace_back("source", Value::of_string("simulated GPU: no state"));
    return s;
  }
  std::string why;
  const Nvml n = open_nvml(info.pci_bus_id, &why);
  if (!n.lib) {
    if (when == "start") s.emplace_back("source", Value::of_string(why));
    return s;
  }
  if (when == "start") {
    s.emplace_back("source", Value::of_string("nvml"));
    add_fixed(n, s);
  }
  add_changing(n, s, when + "_");
  return s;
}

}  // namespace memtopo::host
