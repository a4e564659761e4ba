// `memtopo diff`: compare two topology files.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_internal.hpp"

namespace memtopo::host::cli {

ExtraCommand add_diff_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("diff", "Compare two topology files");
  return {sub, [] { throw UsageError("diff: not implemented yet"); return kExitUsage; }};
}

}  // namespace memtopo::host::cli
