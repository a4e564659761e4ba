// `memtopo run` of several GPUs or of one rank of a parallel launch (fleet_run.cpp). Not
// installed.
#pragma once

#include <string>

#include "planning/run_choice.hpp"
#include "planning/run_request.hpp"

namespace memtopo::host::cli {

// Set in the environment of each run a fleet run starts: it measures its one device.
constexpr const char* kFleetMemberVariable = "MEMTOPO_FLEET_MEMBER";

// -o names a folder: "DIR/" or an existing folder.
bool is_folder_output(const std::string& output);
// Whether `run` measures as a fleet: -o a folder, several devices (--device all, a list), a
// rank of srun or mpirun with several tasks on its node, or an MPI launch of several ranks.
bool wants_fleet_run(const RunRequest& a, const DeviceChoice& device);
// Runs one child `memtopo run` per device into the folder; the combined summary on stdout.
int run_fleet(const RunRequest& a, const RunChoice& run);

}  // namespace memtopo::host::cli
