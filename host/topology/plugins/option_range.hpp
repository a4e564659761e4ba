// Declared ranges of probe options (ABI 2.6, mt_option_desc min_value and max_value). Not
// installed.
#pragma once

#include <optional>
#include <string>

#include "memtopo/abi.h"
#include "topology/plugins/registry.hpp"

namespace memtopo::host {

// Reads an option descriptor's range into `spec` (its type and default already read) where
// `struct_size` covers the fields; what is wrong with it otherwise (a range on a type that is
// not numeric, a bound that does not parse, min above max, a default outside).
std::optional<std::string> read_option_range(const mt_option_desc& od, OptionSpec& spec);

}  // namespace memtopo::host
