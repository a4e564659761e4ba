// The one bound on how deeply a file memtopo reads may nest tables and arrays. TOML++ and the
// readers after it (TOML -> JSON, the schema check, flattening) recurse once per level: a file
// of 50,000 levels in 350 KB overflowed the stack. A topology nests four levels
// ([provenance.l2.size_bytes] and its fields), a config or a description a few more.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memtopo::host {

constexpr size_t kMaxNesting = 64;

// The line of TOML `text` where tables, dotted keys and arrays first nest deeper than
// kMaxNesting, or nothing: a conservative scan before TOML++ parses (it counts every dot of a
// key and every open bracket, never fewer levels than the parser would make).
std::optional<size_t> toml_too_deep_at(std::string_view text);

// JSON `text` parsed, nested at most kMaxNesting deep. Throws std::runtime_error
// "ORIGIN: not valid JSON ..." or "ORIGIN: nested deeper than 64 levels ..." for `origin`.
nlohmann::json parse_json_bounded(const std::string& text, const std::string& origin);

// "FILE:LINE: nested deeper than 64 levels (tables, dotted keys or arrays); ..." for a TOML file.
std::string toml_too_deep_message(const std::string& file, size_t line);

}  // namespace memtopo::host
