#include "planning/device_spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace memtopo::host {

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

std::string device_spec_error(const std::string& spec) {
  if (parse_device_spec(spec)) return "";
  return "'" + spec + "' is not a device; use auto, cuda, cuda:N (N a GPU number), sim or sim:FILE (a device description)";
}

std::string device_arg_error(const std::string& value) {
  if (value == "all") return "";
  if (value.find(',') == std::string::npos) return device_spec_error(value);
  for (size_t start = 0; start <= value.size();) {
    const size_t end = std::min(value.find(',', start), value.size());
    const std::string entry = value.substr(start, end - start);
    if (entry.empty()) return "'" + value + "' has an empty entry; separate devices by single commas";
    if (const std::string problem = device_spec_error(entry); !problem.empty()) return problem;
    start = end + 1;
  }
  return "";
}

bool names_several_devices(const std::string& value) {
  return value == "all" || value.find(',') != std::string::npos;
}

}  // namespace memtopo::host
