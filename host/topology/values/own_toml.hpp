// The TOML form `memtopo run` writes, read without a general TOML parser: `memtopo fleet`
// reads thousands of such files, and TOML++ spent 40 % of its time on them (docs/fleet.md,
// "Scale"). Only a strict subset is read; anything else is declined and goes to TOML++.
#pragma once

#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

namespace memtopo::host {

// The document as toml_to_json(toml::parse(text)) gives it, or nullopt where the text uses
// anything outside the subset (comments, literal or multi-line strings, dotted keys, arrays of
// tables, nested arrays, non-ASCII bytes, CR, numbers with '_' or '+', nan, inf, ...) or breaks a
// rule of TOML (a key or table defined twice): the caller then parses it with TOML++, which
// also gives the error messages. A text read here is always one TOML++ reads to the same JSON.
std::optional<nlohmann::json> read_own_toml(std::string_view text);

}  // namespace memtopo::host
