// What a command measures and how: resolved once from the command line over the config
// (resolve_run), then handed to every layer below the command. Nothing below merges a request
// with the config again. Not installed.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "run/planning/config.hpp"
#include "run/planning/plan.hpp"
#include "run/planning/device_spec.hpp"
#include "run/planning/run_request.hpp"

namespace memtopo::host {

// --device, else [run] device, else auto.
struct DeviceChoice {
  std::string text = "auto";      // as written, presets resolved: what messages quote
  std::vector<DeviceSpec> specs;  // each device named, in order; empty for "all"
  bool all = false;
  bool several() const { return all || specs.size() > 1; }
  // The one device named; a UsageError where several are (`command_note` says which command
  // takes several).
  const DeviceSpec& one(const std::string& command_note) const;
};

struct RunChoice {
  DeviceChoice device;
  Selection selection;                 // --only/--skip, else [run] probes/skip
  std::filesystem::path raw_dir;       // --raw-dir, else [run] raw_dir; empty: none
  std::string raw_dir_named;           // "--raw-dir D" or "FILE: [run] raw_dir D", for messages
  bool isolated = true;                // not --no-isolation, and [run] isolation not false
  bool verify = false;                 // --verify or [run] verify
  unsigned jobs = 0;                   // --jobs, else [run] jobs; 0: by the cores
  bool jobs_from_command_line = false;
  std::string jobs_named;              // "--jobs 4" or "[run] jobs = 4", for messages
};

// Each value split at its commas: "a,b" and "c" give a, b, c (--only, --skip).
std::vector<std::string> split_lists(const std::vector<std::string>& values);

// Throws UsageError for a device text no command takes (checked before, so rare) and for a
// GPU number no host has.
DeviceChoice resolve_device(const std::string& command_line, const Config& cfg);
// For commands that select probes on one device (plan): device and selection only.
RunChoice resolve_selection(const SelectionRequest& a, const Config& cfg);
RunChoice resolve_run(const RunRequest& a, const Config& cfg);

}  // namespace memtopo::host
