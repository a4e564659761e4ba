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
// "ORIGIN:LINE: not valid JSON (...)" (NaN and Infinity included: JSON has neither) or
// "ORIGIN: nested deeper than 64 levels ..." for `origin`.
nlohmann::json parse_json_bounded(const std::string& text, const std::string& origin);

// Whether `text` is a JSON topology rather than TOML: its first character past white space
// (and a UTF-8 byte order mark) is '{'. Every reader decides by content, not by the file's
// name (a .JSON or a .txt name reads the same).
bool looks_like_json(const std::string& text);

}  // namespace memtopo::host
