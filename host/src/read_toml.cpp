// Reading the TOML file a command names (validate, diff, export, report): what is wrong with it
// goes to stderr in one form everywhere, FILE:LINE:COL for a syntax error.
#include <filesystem>
#include <iostream>

#include "cli_internal.hpp"

namespace memtopo::host::cli {

std::optional<toml::table> read_toml_or_report(const std::string& file, const std::string& what_to_name) {
  std::error_code ec;
  if (!std::filesystem::exists(file, ec)) {
    std::cerr << file << ": no such file; name " << what_to_name << "\n";
    return std::nullopt;
  }
  if (std::filesystem::is_directory(file, ec)) {
    std::cerr << file << ": is a folder; name " << what_to_name << "\n";
    return std::nullopt;
  }
  try {
    return toml::parse_file(file);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    if (b.line == 0)  // toml++ reports unreadable files without a position
      std::cerr << file << ": cannot read: " << e.description() << "\n";
    else
      std::cerr << file << ":" << b.line << ":" << b.column << ": TOML syntax error: " << e.description() << "\n";
    return std::nullopt;
  }
}

}  // namespace memtopo::host::cli
