// A quick judge of the JSON Schemas memtopo ships, for documents that meet them: `memtopo
// fleet` checks thousands of files, and the full validator (valijson, its patterns run by
// std::regex for every key) spent a third of its time (docs/fleet.md, "Scale").
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace memtopo::host {

// True only where `doc` surely meets the draft-07 schema `schema_text`: the keywords memtopo's
// schemas use, read from the schema itself, patterns matched by std::regex_search as the full
// validator does (each pattern and text once per thread). False where it does not or where the
// judge cannot say (a keyword it does not know, a length of a text past ASCII): the caller then
// asks the full validator, which also gives the messages.
bool surely_meets_schema(std::string_view schema_text, const nlohmann::json& doc);

}  // namespace memtopo::host
