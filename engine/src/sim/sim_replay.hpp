// Measured keys as description keys: what plugins declare (mt_key_desc::replays_as) applied to
// a parsed description before it is read.
#pragma once

#include <map>
#include <string>

#include <toml++/toml.h>

namespace memtopo::sim {

// Moves each measured key of `replay` the description holds to its description key (dotted
// paths; a key the description also gives explicitly stays, the measured one is dropped) and
// removes those that replay as nothing (""). Returns description key -> measured key of what
// moved, so that a message about a replayed value names the key the file holds.
std::map<std::string, std::string> apply_replay(toml::table& root, const std::map<std::string, std::string>& replay);

// `message` with " (measured as <key>)" where it names a description key that was moved.
std::string name_replayed(const std::string& message, const std::map<std::string, std::string>& moved);

}  // namespace memtopo::sim
