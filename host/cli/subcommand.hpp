// The set-up every command defined in a file of its own shares (diff, compare, draw, export,
// report, fleet): its options fill an Args the command owns, and what runs it reads them.
// Not installed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli_internal.hpp"

namespace memtopo::host::cli {

// Adds subcommand `name`; `options` binds its options to an Args shared with `run`, which runs
// the command once the line is parsed.
template <class Args>
ExtraCommand subcommand(CLI::App& app, const std::string& name, const std::string& description,
                        void (*options)(CLI::App*, Args&), int (*run)(const Args&)) {
  auto args = std::make_shared<Args>();
  CLI::App* sub = app.add_subcommand(name, description);
  options(sub, *args);
  return {sub, [args, run] { return run(*args); }};
}

// What -o of a command that writes one file, or stdout, says of itself.
inline const char* const kOutputOrStdout = "File to write (replaced atomically); - or none: stdout";

inline CLI::Option* add_output_option(CLI::App* sub, std::string& output, const std::string& help = kOutputOrStdout) {
  return sub->add_option("-o,--output", output, help);
}

// --format taking one of `names`.
inline CLI::Option* add_format_option(CLI::App* sub, std::string& format, const std::string& help,
                                      const std::vector<std::string>& names) {
  return sub->add_option("--format", format, help)->check(CLI::IsMember(names));
}

}  // namespace memtopo::host::cli
