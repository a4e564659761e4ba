// Chooses and opens the measurement backend named on the command line.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"

namespace memtopo::engine {

#ifndef MEMTOPO_HAVE_CUDA
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
std::unique_ptr<Device> open_cuda(int) {
  throw Error("this memtopo was built without the CUDA backend; rebuild with a CUDA toolkit "
              "(-DMEMTOPO_WITH_CUDA=ON) or use --device sim");
}
#endif

namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// A GPU number beyond 2^20 is none any host has: -1, which no GPU matches.
int gpu_number(const std::string& digits) {
  char* end = nullptr;
  const long v = std::strtol(digits.c_str(), &end, 10);
  return end && *end == '\0' && v >= 0 && v < 1 << 20 ? static_cast<int>(v) : -1;
}

}  // namespace

std::optional<DeviceSpec> parse_device_spec(const std::string& text) {
  if (text == "auto") return DeviceSpec{};
  if (text == "cuda") return DeviceSpec{DeviceSpec::Kind::Cuda, 0, ""};
  if (text == "sim") return DeviceSpec{DeviceSpec::Kind::Sim, 0, ""};
  if (text.rfind("cuda:", 0) == 0 && all_digits(text.substr(5)))
    return DeviceSpec{DeviceSpec::Kind::Cuda, gpu_number(text.substr(5)), ""};
  // A file name of one line: what --device and a config have always taken.
  if (text.rfind("sim:", 0) == 0 && text.size() > 4 && text.find_first_of("\r\n", 4) == std::string::npos)
    return DeviceSpec{DeviceSpec::Kind::Sim, 0, text.substr(4)};
  return std::nullopt;
}

std::string device_spec_text(const DeviceSpec& spec) {
  switch (spec.kind) {
    case DeviceSpec::Kind::Auto: return "auto";
    case DeviceSpec::Kind::Cuda: return "cuda:" + std::to_string(spec.ordinal);
    case DeviceSpec::Kind::Sim: return spec.file.empty() ? "sim" : "sim:" + spec.file;
  }
  return "auto";
}

std::unique_ptr<Device> open_device(const DeviceSpec& spec, std::string* fallback_reason, const ReplayMap& replay) {
  if (spec.kind == DeviceSpec::Kind::Auto) {
    if (cuda_device_count() > 0) return open_cuda(0);
    if (fallback_reason)
      *fallback_reason = cuda_built() ? "no CUDA device is available" : "built without the CUDA backend";
    return open_sim("");
  }
  if (spec.kind == DeviceSpec::Kind::Sim) return open_sim(spec.file, spec.file.empty() ? ReplayMap{} : replay);
  const int count = cuda_device_count();
  if (cuda_built() && (spec.ordinal < 0 || spec.ordinal >= count)) {
    if (count == 0)  // as cuda:N says it, not the driver's words
      throw Error("--device " + device_spec_text(spec) + ": this host has 0 CUDA GPUs; use --device sim for the simulated GPU");
    const std::string number = spec.ordinal < 0 ? "of that number" : std::to_string(spec.ordinal);
    throw Error("--device " + device_spec_text(spec) + ": there is no GPU " + number + "; this host has " +
                std::to_string(count) +
                (count == 1 ? " CUDA GPU (cuda:0)" : " CUDA GPUs (cuda:0 to cuda:" + std::to_string(count - 1) + ")"));
  }
  return open_cuda(spec.ordinal);
}

}  // namespace memtopo::engine
