#include "run/planning/device_spec.hpp"

#include <algorithm>

namespace memtopo::host {

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

}  // namespace memtopo::host
