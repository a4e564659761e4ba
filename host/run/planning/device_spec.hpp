// The device a command measures, as --device, [run] device and a worker's setup name it
// (docs/host.md, "Command line"): parsed here only. Not installed.
#pragma once

#include <optional>
#include <string>

#include "memtopo/engine.hpp"

namespace memtopo::host {

// What the engine opens; parse_device_spec gives an ordinal of -1 for cuda:N with N of 2^20
// and above, a number no GPU has (resolve_device refuses it before the engine sees it).
using DeviceSpec = engine::DeviceSpec;

using engine::parse_device_spec;

// "" when `spec` has one of the forms above, else what is wrong, naming the forms.
std::string device_spec_error(const std::string& spec);
// The same for what `run` takes: one device, "all", or a comma list of devices.
std::string device_arg_error(const std::string& value);

}  // namespace memtopo::host
