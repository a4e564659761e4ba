// The exit statuses every command shares (docs/host.md, "Exit status") and the error that
// means "usage or configuration problem": below every other folder, so that the layers that
// refuse a request (output, running, fleet) need nothing of the command line. Not installed.
#pragma once

#include <stdexcept>

namespace memtopo::host {

constexpr int kExitOk = 0;
constexpr int kExitIncomplete = 1;
constexpr int kExitUsage = 2;

// A usage or configuration problem: message printed, exit 2, nothing run or written.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace memtopo::host
