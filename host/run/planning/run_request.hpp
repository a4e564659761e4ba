// What a command asks for, parsed once from the command line (cli/cli.cpp) and handed
// to the layers that plan, run and write: they take these types, never the command line's own.
// Not installed.
#pragma once

#include <string>
#include <vector>

namespace memtopo::host {

// Which probes, on which device, with which plugins and config (plan and run).
struct SelectionRequest {
  std::string config, device;
  std::vector<std::string> only, skip, plugin_paths;
};

struct PlanRequest : SelectionRequest {
  std::string timings;  // --timings: a topology whose [probes] durations estimate the plan's time
};

struct RunRequest : SelectionRequest {
  std::string raw_dir, output;
  std::string format;  // --format: "toml", "json", or "" (from OUT's name: run_output.cpp)
  bool resume = false, quiet = false, verbose = false;
  bool no_isolation = false;  // run the probes in this process (docs/host.md, "Isolation")
  bool verify = false;        // --verify: check values by the GPU's hardware counters
  unsigned jobs = 0;          // --jobs: probes at once on the simulated GPU (0: by the cores)
  std::string device_label;   // [meta] device_label: the node's name of the GPU (a fleet run's member)
};

}  // namespace memtopo::host
