// The memtopo command line (docs/host.md). Exit status: 0 success, 1 some probe failed (or a
// key asked for is missing, or validation found errors), 2 usage or configuration error.
#pragma once

#include <string>
#include <vector>

namespace memtopo::host {

int run_cli(int argc, char** argv);

// Parses a command line (without the program name) as run_cli would, running nothing: empty
// when it parses, else CLI11's message. For checking documented examples.
std::string check_command_line(const std::vector<std::string>& args);
// The option names ("--device", "-o", ...) a subcommand ("run"; "" for the program) accepts;
// empty for an unknown subcommand.
std::vector<std::string> command_option_names(const std::string& subcommand);

}  // namespace memtopo::host
