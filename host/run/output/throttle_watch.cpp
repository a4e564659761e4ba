#include "run/output/throttle_watch.hpp"

#include <cstdio>
#include <cstring>

#include "run/running/nvml_library.hpp"

namespace memtopo::host {

namespace {

// nvmlPerfPolicyType_t of the limits that hold clocks back (sync boost and low utilization
// are not limits on a measurement).
constexpr unsigned kPolicies[] = {0 /* power */, 1 /* thermal */, 3 /* board limit */, 5 /* reliability */};

struct ViolationTime {  // nvmlViolationTime_t
  unsigned long long reference_us, violation_ns;
};

}  // namespace

const std::array<const char*, 4> kViolationLimits{"power", "thermal", "board limit", "reliability"};

std::string throttle_between(const ViolationSample& before, const ViolationSample& after) {
  std::string out;
  for (size_t i = 0; i < before.size(); ++i) {
    if (after[i] <= before[i]) continue;
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f ms", double(after[i] - before[i]) / 1e6);
    out += (out.empty() ? "" : ", ") + std::string(kViolationLimits[i]) + " " + ms;
  }
  return out;
}

ThrottleWatch::ThrottleWatch(const mt_device_info& info) {
  if (std::strcmp(info.backend, "cuda") != 0) return;
  pci_bus_id_ = info.pci_bus_id;
  watching_ = true;
  ViolationSample probe{};
  if (!read(probe)) watching_ = false;  // no counters on this GPU or driver: nothing watched
}

bool ThrottleWatch::read(ViolationSample& out) const {
  if (!watching_) return false;
  // A new handle for each reading: a worker's fork closes NVML in between (nvml_library.hpp).
  std::string why;
  const Nvml n = open_nvml(pci_bus_id_, &why);
  using Fn = nvml_return (*)(nvml_device, unsigned, ViolationTime*);
  const auto status = n.fn<Fn>("nvmlDeviceGetViolationStatus");
  if (!status) return false;
  for (size_t i = 0; i < out.size(); ++i) {
    ViolationTime t{};
    if (status(n.device, kPolicies[i], &t) != kNvmlSuccess) return false;
    out[i] = t.violation_ns;
  }
  return true;
}

void ThrottleWatch::probe_started() { started_ = read(at_start_); }

void ThrottleWatch::probe_finished(const std::string& probe) {
  ViolationSample now{};
  if (!started_ || !read(now)) return;
  started_ = false;
  const std::string during = throttle_between(at_start_, now);
  if (during.empty()) return;
  probes_.push_back(probe);
  during_.push_back(during);
}

GpuState ThrottleWatch::entries() const {
  GpuState s;
  if (probes_.empty()) return s;
  Value probes, during;
  probes.type = during.type = MT_VALUE_STRING_ARRAY;
  probes.strings = probes_;
  during.strings = during_;
  s.emplace_back("throttled_probes", probes);
  s.emplace_back("throttled_during", during);
  return s;
}

}  // namespace memtopo::host
