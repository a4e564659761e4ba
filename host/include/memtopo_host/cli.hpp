// The memtopo command line (docs/host.md). Exit status: 0 success, 1 some probe failed or
// was skipped (or validation found errors), 2 usage or configuration error.
#pragma once

namespace memtopo::host {

int run_cli(int argc, char** argv);

}  // namespace memtopo::host
