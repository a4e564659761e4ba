// `memtopo fleet --confirm`: a flagged GPU's findings measured again before anyone drains the
// node (docs/fleet.md, "Confirming a finding"). Not installed.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "tools/fleet/fleet.hpp"

namespace memtopo::host {

// One measurement again: `memtopo run` of `probes` on the member's device, into `output`, with
// the options the flagged GPU's run gave them (a config's text; empty: the defaults).
struct ConfirmRun {
  const FleetMember* member = nullptr;
  std::vector<std::string> probes;
  std::filesystem::path output;
  std::string config_text;
};
// Makes the run; returns its exit status (0: `output` written).
using ConfirmRunner = std::function<int(const ConfirmRun&)>;

struct ConfirmSettings {
  std::string this_host;          // a file measured on another host cannot be measured again here
  std::filesystem::path folder;   // where the measurements again are written (kept)
  ConfirmRunner runner;
};

// Measures again the probes behind each flagged GPU's findings, on that GPU and on one
// unflagged sibling of its model on this host (the control), and keeps a finding only where the
// GPU differs from the control again as the fleet judged it first (same key, same direction);
// the others are reported "not reproduced". The state comes first: a GPU that ran beside
// another process (or throttled) is measured again too; where it does again, that cause is
// confirmed and its values cannot be judged; where it is idle now, the state is not reproduced
// and its values are judged against the control. Returns one line per GPU measured again.
std::vector<std::string> confirm_findings(FleetReport& r, const FleetOptions& o, const ConfirmSettings& s);

// This machine's name as `memtopo run` records it ([meta].host).
std::string this_host_name();

// The runner `fleet --confirm` uses: this executable's `run -q --only ...` on the GPU of the
// member's UUID (CUDA_VISIBLE_DEVICES), or on the simulated device its file names; the config
// text, if any, goes into a new file beside the output (`<output>.config.toml`).
int run_confirmation(const ConfirmRun& run);

}  // namespace memtopo::host
