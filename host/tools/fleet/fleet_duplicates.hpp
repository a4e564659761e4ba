// Each GPU counted once by `memtopo fleet` (docs/fleet.md, "Inputs"): a file named twice (or a
// folder and a file in it), or two files of one GPU (a rerun's copy), would weigh twice in the
// group's majority and median, and could flag a good GPU. Not installed.
#pragma once

#include <string>
#include <vector>

#include "tools/fleet/fleet.hpp"

namespace memtopo::host {

// `files` less those that are one file with an earlier entry (by canonical path), in order;
// a note in *notes for each one dropped.
std::vector<std::string> distinct_files(const std::vector<std::string>& files, std::vector<std::string>* notes);

// One member per device UUID: of several, the newest by [meta].created_utc, the first named
// where they tie; members without a UUID (simulated GPUs) all stay. Order otherwise kept; a
// note in *notes for each GPU with more than one file.
std::vector<FleetMember> one_member_per_gpu(std::vector<FleetMember> members, std::vector<std::string>* notes);

}  // namespace memtopo::host
