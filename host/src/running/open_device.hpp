// Opening the one device a command measures or plans for. Not installed.
#pragma once

#include <memory>

#include "memtopo/engine.hpp"
#include "memtopo_host/config.hpp"
#include "planning/run_request.hpp"

namespace memtopo::host {

// Opens --device (or the config's, or auto); a device that cannot be opened is a usage error.
// `replay`: what measured keys replay as, where the device is a measured topology
// (Registry::replay_map).
std::unique_ptr<engine::Device> open_device_arg(const SelectionRequest& a, const Config& cfg,
                                                const engine::ReplayMap& replay = {});

}  // namespace memtopo::host
