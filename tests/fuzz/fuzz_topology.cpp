// libFuzzer target: the topology reader as `memtopo validate` runs it (TOML parse, TOML ->
// JSON, the schema and the installed plugins' key declarations, the line of each error),
// against the shipped plugins and the `keys` test plugin. Its documented error is a TOML
// syntax error (toml::parse_error); anything else escaping is a finding.
#include <cstddef>
#include <cstdint>
#include <string>

#include "topology/values/schema.hpp"
#include "topology/checks/validate.hpp"
#include "plugin_dirs.hpp"

namespace {

const memtopo::host::KeyCatalog& catalog() {
  static const memtopo::host::KeyCatalog c = memtopo::host::KeyCatalog::of(memtopo::fuzz::fuzz_registry());
  return c;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  catalog();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  toml::table root;
  try {
    root = toml::parse(text, std::string_view("fuzz/topology.toml"));
  } catch (const toml::parse_error&) {
    return 0;
  }
  const memtopo::host::Validation v = memtopo::host::validate_with_plugins(memtopo::host::toml_to_json(root), catalog());
  for (const auto& e : v.errors) {
    const toml::node* at = memtopo::host::node_at(root, e.path);
    const std::string shown = std::to_string(at ? at->source().begin.line : 1) + ": " + e.text();
    // Every error names a place: the document ("") or a JSON pointer into it.
    if (!e.path.empty() && e.path[0] != '/') __builtin_trap();
    (void)shown;
  }
  return 0;
}
