// `memtopo export`: write a topology file in another format.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_internal.hpp"

namespace memtopo::host::cli {

ExtraCommand add_export_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("export", "Write a topology file in another format");
  return {sub, [] { throw UsageError("export: not implemented yet"); return kExitUsage; }};
}

}  // namespace memtopo::host::cli
