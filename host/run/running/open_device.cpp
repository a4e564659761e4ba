#include "run/running/open_device.hpp"

#include <string>

#include <spdlog/spdlog.h>

#include "topology/base/usage_error.hpp"

namespace memtopo::host {

std::unique_ptr<engine::Device> open_device_arg(const DeviceChoice& device, const engine::ReplayMap& replay) {
  const DeviceSpec& spec = device.one("memtopo run measures several at once");
  std::unique_ptr<engine::Device> opened;
  std::string fallback;
  try {
    opened = engine::open_device(spec, &fallback, replay);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot open device: ") + e.what());
  }
  if (!fallback.empty())
    spdlog::warn("no GPU to measure ({}): measuring the built-in simulated GPU instead (backend = \"sim\")", fallback);
  return opened;
}

}  // namespace memtopo::host
