// "Did you mean": the name a user most likely meant where a command, option, probe, key or
// preset they typed is unknown.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace memtopo::host {

// Edits between two words: a character added, dropped or changed, or two neighbours swapped.
size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest `word` where it is near enough to be a typo of it (one edit in a word
// of up to 4 characters, two up to 8, three beyond; ties to the first in name order), else "".
std::string nearest_name(std::string_view word, const std::vector<std::string>& candidates);

// "; did you mean 'NAME'?" for nearest_name, or "" where none is near.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace memtopo::host
