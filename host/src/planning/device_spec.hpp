// The device a command measures, as --device, [run] device and a worker's setup name it
// (docs/host.md, "Command line"): parsed here only. Not installed.
#pragma once

#include <optional>
#include <string>

namespace memtopo::host {

struct DeviceSpec {
  enum class Kind { Auto, Cuda, Sim };
  Kind kind = Kind::Auto;
  int ordinal = 0;   // cuda:N (cuda: 0); -1 for a number no GPU can have (2^20 and above)
  std::string file;  // sim:FILE; "" for the built-in simulated GPU
};

// The device `text` names: auto, cuda, cuda:N, sim or sim:FILE; nothing for any other form.
std::optional<DeviceSpec> parse_device_spec(const std::string& text);

// "" when `spec` has one of the forms above, else what is wrong, naming the forms.
std::string device_spec_error(const std::string& spec);
// The same for what `run` takes: one device, "all", or a comma list of devices.
std::string device_arg_error(const std::string& value);
// Whether --device's value names several devices: "all" or a comma list.
bool names_several_devices(const std::string& value);

}  // namespace memtopo::host
