// libFuzzer target: the run journal reader (read_journal, what `run --resume` reads). Its
// documented error is std::runtime_error; anything else escaping is a finding. The header
// must give resume what it reads, and every record accepted must survive the writer and a
// second read, as on a resumed run that journals again.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>

#include "run/output/journal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  memtopo::host::JournalContents c;
  try {
    c = memtopo::host::read_journal(in, "fuzz/out.toml.journal");
  } catch (const std::runtime_error&) {
    return 0;
  }
  // What `run --resume` reads from the header.
  const std::string device = c.header.value("device_spec", std::string());
  (void)device;
  for (const auto& o : c.outcomes) {
    const std::string line = memtopo::host::outcome_to_json(o).dump();
    const auto again = memtopo::host::outcome_from_json(nlohmann::json::parse(line));
    if (again.probe != o.probe || again.results.size() != o.results.size()) __builtin_trap();
  }
  return 0;
}
