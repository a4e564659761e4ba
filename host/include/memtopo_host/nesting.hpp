// The one bound on how deeply a file memtopo reads may nest tables and arrays: the TOML scan and
// the bound itself live in the engine (memtopo/engine.hpp), which the simulated-device
// description's reader shares; JSON is parsed here with the same bound.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "memtopo/engine.hpp"

namespace memtopo::host {

using engine::kMaxNesting;
using engine::toml_too_deep_at;
using engine::toml_too_deep_message;

// JSON `text` parsed, nested at most kMaxNesting deep. Throws std::runtime_error
// "ORIGIN: not valid JSON ..." or "ORIGIN: nested deeper than 64 levels ..." for `origin`.
nlohmann::json parse_json_bounded(const std::string& text, const std::string& origin);

}  // namespace memtopo::host
