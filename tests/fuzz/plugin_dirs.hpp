// The probes the config and topology fuzzers check against: every folder of
// MEMTOPO_FUZZ_PLUGIN_DIRS (colon-separated, compiled in), loaded once per process.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

#include "topology/plugins/registry.hpp"

namespace memtopo::fuzz {

inline const host::Registry& fuzz_registry() {
  static const host::Registry registry = [] {
    host::Registry r;
    std::stringstream dirs(MEMTOPO_FUZZ_PLUGIN_DIRS);
    for (std::string dir; std::getline(dirs, dir, ':');) r.load_directory(dir);
    // Without its probes a target would only fuzz "unknown probe" messages: refuse to start.
    if (r.probes().empty() || !r.errors().empty()) {
      std::fprintf(stderr, "fuzz: cannot load the plugins in %s (build them first: cmake --build build-asan)\n",
                   MEMTOPO_FUZZ_PLUGIN_DIRS);
      for (const auto& e : r.errors()) std::fprintf(stderr, "  %s\n", e.c_str());
      std::abort();
    }
    return r;
  }();
  return registry;
}

}  // namespace memtopo::fuzz
