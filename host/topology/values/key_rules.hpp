// The rules a result key obeys (docs/format.md): its form, the unit its name carries, and what
// a value of it may hold (key_rules.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "memtopo/abi.h"

namespace memtopo::host {

struct Value;

// "l1d.line_bytes": nothing when valid, else what is wrong.
std::optional<std::string> check_key(const std::string& key);
// Unit-suffix rules (docs/format.md): `_bytes`, `_bits`, `_khz` hold integers >= 0, `_cycles`,
// `_gbps`, `_s` numbers >= 0 (or arrays of them). Floats must be finite (no NaN, no inf) and
// strings valid UTF-8, whatever the key. Nothing when `v` fits `key`.
std::optional<std::string> check_value_for_key(const std::string& key, const Value& v);

// Every MT_KEY_* bit this host knows: a plugin declaring others is refused, a journal's are masked.
constexpr uint32_t kKnownKeyFlags =
    MT_KEY_IDENTITY | MT_KEY_SETTING | MT_KEY_VARIES | MT_KEY_ESTIMATE | MT_KEY_HEADLINE | MT_KEY_CONFIGURATION |
    MT_KEY_RATED | MT_KEY_STRUCTURE | MT_KEY_ALWAYS | MT_KEY_HEALTH;

// The unit a key's name carries ("bytes" for l1d.size_bytes), or "" when it has none.
std::string unit_of_key(const std::string& key);
// The unit suffix the schema and key declarations check (_bytes, _bits, _khz, _cycles, _gbps,
// _s), "" for any other key. unit_of_key gives readers more: "B/s" for a _bytes_per_second
// rate, "fraction" for a _fraction or _share, "%" for a _percent.
std::string checked_unit_of_key(const std::string& key);
// Whether a declared unit and type (mt_key_desc) agree with the key's name: the unit must be
// the one its suffix names ("" without a suffix), the type one that suffix allows. Nothing
// when they agree, else what to change.
std::optional<std::string> check_key_declaration(const std::string& key, mt_value_type type, const std::string& unit);

}  // namespace memtopo::host
