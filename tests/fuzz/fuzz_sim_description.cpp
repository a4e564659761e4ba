// libFuzzer target: the simulated-device description reader (sim::load_model, what
// `--device sim:FILE` parses before the simulated GPU is built). Its documented error is
// memtopo::Error naming the file and line; anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "memtopo/errors.hpp"
#include "sim/sim_model.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const memtopo::sim::Model m = memtopo::sim::load_model(text, "fuzz/device.toml", "sim:fuzz/device.toml");
    (void)m;
  } catch (const memtopo::Error& e) {
    if (std::string(e.what()).rfind("fuzz/device.toml:", 0) != 0) __builtin_trap();
  }
  return 0;
}
