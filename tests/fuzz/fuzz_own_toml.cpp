// libFuzzer target: the quick readers `memtopo fleet` takes before the general ones. Whatever
// the reader of memtopo's own TOML form reads, TOML++ must read to the same JSON; and where the
// quick schema judge is sure of that JSON, the full validator must accept it. Either broken is
// a finding (a trap), as is any exception escaping.
#include <cstddef>
#include <cstdint>
#include <string>

#include <toml++/toml.h>

#include "topology/values/own_toml.hpp"
#include "topology/values/schema.hpp"
#include "topology/values/schema_quick.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace memtopo::host;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const auto own = read_own_toml(text);
  if (!own) return 0;
  nlohmann::json reference;
  try {
    reference = toml_to_json(toml::parse(text));
  } catch (const toml::parse_error&) {
    __builtin_trap();  // read here, refused by TOML++
  }
  if (reference != *own) __builtin_trap();
  if (surely_meets_schema(topology_schema_text(), *own) && !full_schema_errors(topology_schema_text(), *own).empty())
    __builtin_trap();
  return 0;
}
