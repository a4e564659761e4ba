#include "running/open_device.hpp"

#include <string>

#include <spdlog/spdlog.h>

#include "base/usage_error.hpp"
#include "planning/device_spec.hpp"

namespace memtopo::host {

std::unique_ptr<engine::Device> open_device_arg(const SelectionRequest& a, const Config& cfg,
                                                const engine::ReplayMap& replay) {
  const std::string device_arg = !a.device.empty() ? a.device : cfg.device.value_or("auto");
  if (names_several_devices(device_arg))
    throw UsageError("--device " + device_arg + ": names several devices; this command takes one (memtopo run "
                     "measures several at once)");
  std::unique_ptr<engine::Device> device;
  std::string fallback;
  try {
    device = engine::open_device(device_arg, &fallback, replay);
  } catch (const std::exception& e) {
    throw UsageError(std::string("cannot open device: ") + e.what());
  }
  if (!fallback.empty())
    spdlog::warn("no GPU to measure ({}): measuring the built-in simulated GPU instead (backend = \"sim\")", fallback);
  return device;
}

}  // namespace memtopo::host
