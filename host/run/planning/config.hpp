// The config file (TOML; docs/host.md "The config file", schemas/config.schema.json).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// The longest time limit a config may set (about 11.6 days): far below what the clocks hold.
constexpr double kMaxTimeLimitS = 1e6;

struct Config {
  std::filesystem::path file;
  std::vector<std::string> probes;  // [run] probes
  std::vector<std::string> skip;    // [run] skip
  std::optional<std::string> device;
  std::optional<std::string> raw_dir;  // relative paths are relative to the config file's folder
  OptionOverrides options;             // [probes."<name>"]
  std::optional<double> time_limit_s;  // [run] time_limit_s: every probe's time limit
  std::map<std::string, double> probe_time_limits_s;  // [probes."<name>"] time_limit_s
  std::optional<bool> isolation;       // [run] isolation (default true)
  std::optional<bool> verify;          // [run] verify (default false): --verify
  std::optional<unsigned> jobs;        // [run] jobs: probes at once on the simulated GPU
};

// Every problem found, each "file:line: message" (or "file:line:column: message" for syntax).
struct ConfigError : std::runtime_error {
  explicit ConfigError(std::vector<std::string> msgs);
  std::vector<std::string> messages;
};

// `value` with each sim:NAME (no slash, no extension, no such file here) replaced by the preset
// of that name (sim:<prefix>/share/memtopo/devices/NAME.toml). A name no preset has sets
// `*error` to what is wrong, listing the presets, and returns `value` unchanged.
std::string resolve_device_presets(const std::string& value, std::string* error);
// Where the simulated-device presets are: share/memtopo/devices beside the executable.
std::filesystem::path device_preset_dir();

// Reads and checks a config file against the loaded probes. Throws ConfigError.
Config load_config(const std::filesystem::path& file, const Registry& registry);
// Same, from text (`name` stands for the file in messages).
Config parse_config(const std::string& text, const std::string& name, const Registry& registry);

}  // namespace memtopo::host
