// Opening the one device a command measures or plans for. Not installed.
#pragma once

#include <memory>

#include "memtopo/engine.hpp"
#include "run/planning/run_choice.hpp"

namespace memtopo::host {

// Opens the one device `device` names; several, or one that cannot be opened, is a usage
// error. `replay`: what measured keys replay as, where the device is a measured topology
// (Registry::replay_map).
std::unique_ptr<engine::Device> open_device_arg(const DeviceChoice& device, const engine::ReplayMap& replay = {});

}  // namespace memtopo::host
