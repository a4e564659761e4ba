// Running the real memtopo executable with the real plugins on a simulated device, as a user
// would: the round-trip and replay tests measure through it.
#pragma once

#include <filesystem>
#include <string>

#include <toml++/toml.h>

namespace probetest {

std::filesystem::path device_file(const std::string& name);  // examples/devices/<name>
std::filesystem::path scratch(const std::string& name);      // a file under the build tree

// `memtopo run -q --device sim:<device> [--only <only>]`; returns the topology it wrote
// (REQUIREs that it wrote one). `tag` names the output and log files in scratch().
toml::table run_memtopo(const std::filesystem::path& device, const std::string& tag, const std::string& only);

}  // namespace probetest
