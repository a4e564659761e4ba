// `memtopo report`: write an html report of a topology file.
#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "cli_internal.hpp"

namespace memtopo::host::cli {

ExtraCommand add_report_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("report", "Write an HTML report of a topology file");
  return {sub, [] { throw UsageError("report: not implemented yet"); return kExitUsage; }};
}

}  // namespace memtopo::host::cli
