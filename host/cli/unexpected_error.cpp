// The one top-level handler's verdict on an exception that is not memtopo's own (cli.cpp,
// run_cli): a message that says what failed and what to do, and a defined exit status, where
// the exception would otherwise end the process with an abort and a core dump.
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <new>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/cli_internal.hpp"
#include "topology/base/terminal_text.hpp"

namespace memtopo::host::cli {

namespace {

namespace fs = std::filesystem;

// A temporary folder that cannot be made is the most common cause: TMPDIR naming a folder
// that does not exist says so by name.
std::string tmpdir_hint() {
  const char* t = std::getenv("TMPDIR");
  std::error_code ec;
  if (!t || !*t || fs::is_directory(t, ec)) return "";
  return "; TMPDIR=" + std::string(t) + " is not a folder: set TMPDIR to an existing folder, or unset it for /tmp";
}

}  // namespace

int report_unexpected_error(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const fs::filesystem_error& e) {
    std::cerr << "memtopo: " << terminal_lines(e.what()) << tmpdir_hint() << "\n";
    return kExitUsage;
  } catch (const std::bad_alloc&) {
    std::cerr << "memtopo: out of memory; nothing more was done (free memory, or name fewer or smaller inputs)\n";
    return kExitIncomplete;
  } catch (const nlohmann::json::exception& e) {
    std::cerr << "memtopo: unexpected data: " << terminal_lines(e.what())
              << "; please report it with the command and its input files\n";
    return kExitIncomplete;
  } catch (const std::exception& e) {
    std::cerr << "memtopo: internal error: " << terminal_lines(e.what())
              << "; please report it with the command and its input files\n";
    return kExitIncomplete;
  } catch (...) {
    std::cerr << "memtopo: internal error: an unknown exception; please report it with the command\n";
    return kExitIncomplete;
  }
}

}  // namespace memtopo::host::cli
