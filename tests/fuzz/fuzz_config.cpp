// libFuzzer target: the config reader (parse_config, what `--config FILE` reads), checked
// against the shipped plugins and the `good` test plugins. Its documented error is
// ConfigError; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "run/planning/config.hpp"
#include "plugin_dirs.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  memtopo::fuzz::fuzz_registry();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const memtopo::host::Config cfg = memtopo::host::parse_config(text, "fuzz/config.toml", memtopo::fuzz::fuzz_registry());
    (void)cfg;
  } catch (const memtopo::host::ConfigError& e) {
    // Every message names the file and a line: "fuzz/config.toml:N: ...".
    for (const auto& m : e.messages)
      if (m.rfind("fuzz/config.toml:", 0) != 0) __builtin_trap();
  }
  return 0;
}
