// Reading the TOML file a command names (validate, diff, export, report): what is wrong with it
// goes to stderr in one form everywhere, FILE:LINE:COL for a syntax error.
#include <iostream>

#include "commands/cli_internal.hpp"
#include "memtopo/engine.hpp"
#include "memtopo/errors.hpp"
#include "memtopo_host/nesting.hpp"
#include "memtopo_host/terminal_text.hpp"

namespace memtopo::host::cli {

std::optional<toml::table> read_toml_or_report(const std::string& file, const std::string& what_to_name) {
  std::string text;
  try {
    text = engine::read_input_file(file, what_to_name);
  } catch (const Error& e) {
    std::cerr << terminal_text(e.what()) << "\n";
    return std::nullopt;
  }
  if (const auto line = toml_too_deep_at(text)) {
    std::cerr << terminal_text(toml_too_deep_message(file, *line)) << "\n";
    return std::nullopt;
  }
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    std::cerr << terminal_text(file + ":" + std::to_string(b.line) + ":" + std::to_string(b.column) +
                               ": TOML syntax error: " + std::string(e.description()))
              << "\n";
    return std::nullopt;
  }
}

std::optional<toml::table> read_topology_or_report(const std::string& file, const std::string& what_for) {
  std::optional<toml::table> doc = read_toml_or_report(file, "a topology file; " + what_for);
  if (!doc) return std::nullopt;
  if (!(*doc)["meta"].is_table()) {
    std::cerr << terminal_text(file) << ": not a topology file (no [meta] table); name a file `memtopo run` wrote"
              << (doc->contains("device") ? " (this looks like a simulated device description)" : "") << "\n";
    return std::nullopt;
  }
  return doc;
}

}  // namespace memtopo::host::cli
